"""Inlay hint: the governing capsule at the end of a governed file's first line (SPEC §10)."""

from __future__ import annotations

from lsprotocol import types

from .. import convert, resolve
from ..state import CanonLanguageServer


def on_inlay_hint(
    ls: CanonLanguageServer, params: types.InlayHintParams
) -> list[types.InlayHint] | None:
    uri, lines = params.text_document.uri, params.range
    where = ls.view(uri)  # from the article files while the store loads
    text = ls.text_of(uri) if where is not None and where.kind == "asset" else None
    if where is None or text is None or not where.folder.settings.inlay_hints_enabled:
        return None
    codec, settings = ls.workspace.position_codec, where.folder.settings
    found = []  # (where the hint goes, the governing article, whether it is the file's own)
    if lines.start.line == 0 and (governing := where.refresh(where.address)):
        found.append((convert.line_end(codec, text, 0), governing, governing == where.address))
    if settings.inlay_hints_imports:  # after each import naming a governed module
        span = range(lines.start.line, min(lines.end.line + 1, text.line_count))
        for n, named, target in resolve.imported(where, text, span):
            found.append((convert.position(codec, text, n, named.end), target.governing, False))
    hints = []
    for position, governing, own in found:
        article = where.store.article(governing)
        if article is None:
            continue
        capsule = " ".join(article.capsule.split())
        label = shorten(capsule or "(no capsule)", settings.inlay_hints_max_length)
        hints.append(
            types.InlayHint(
                position=position,
                label=label if own else f"{governing}: {label}",
                tooltip=capsule or f"{governing} has no capsule yet.",
                padding_left=True,
            )
        )
    return hints


def shorten(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    return text[: max(1, width - 1)].rstrip() + "…"
