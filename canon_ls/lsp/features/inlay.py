"""Inlay hint: the governing capsule at the end of a governed file's first line (SPEC §10)."""

from __future__ import annotations

from lsprotocol import types

from .. import convert, resolve
from ..state import CanonLanguageServer


def on_inlay_hint(
    ls: CanonLanguageServer, params: types.InlayHintParams
) -> list[types.InlayHint] | None:
    uri = params.text_document.uri
    where = ls.view(uri)  # from the article files while the store loads
    settings = where.folder.settings if where is not None else None
    if where is None or where.kind != "asset" or settings is None:
        return None
    text = ls.text_of(uri)
    if not settings.inlay_hints_enabled or text is None:
        return None
    codec, width = ls.workspace.position_codec, settings.inlay_hints_max_length
    hints = []
    governing = where.refresh(where.address) if params.range.start.line == 0 else None
    article = where.store.article(governing) if governing else None
    if governing and article is not None:
        capsule = " ".join(article.capsule.split())
        label = shorten(capsule or "(no capsule)", width)
        hints.append(
            types.InlayHint(
                position=convert.line_end(codec, text, 0),
                label=label if governing == where.address else f"{governing}: {label}",
                tooltip=capsule or f"{governing} has no capsule yet.",
                padding_left=True,
            )
        )
    if settings.inlay_hints_imports:  # after each import naming a governed module
        lines = range(params.range.start.line, min(params.range.end.line + 1, text.line_count))
        for n, found, target in resolve.imported(where, text, lines):
            article = where.store.article(target.governing)
            capsule = " ".join(article.capsule.split()) if article else ""
            hints.append(
                types.InlayHint(
                    position=convert.position(codec, text, n, found.end),
                    label=shorten(f"{target.governing}: {capsule}".rstrip(": "), width),
                    tooltip=capsule or f"{target.governing} has no capsule yet.",
                    padding_left=True,
                )
            )
    return hints


def shorten(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    return text[: max(1, width - 1)].rstrip() + "…"
