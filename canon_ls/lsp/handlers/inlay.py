"""Inlay hint: the governing capsule at the end of a governed file's first line (SPEC §10)."""

from __future__ import annotations

from lsprotocol import types

from canon_ls.lsp.session.state import CanonLanguageServer, imported, lookup
from canon_ls.lsp.wire import convert


def on_inlay_hint(
    ls: CanonLanguageServer, params: types.InlayHintParams
) -> list[types.InlayHint] | None:
    uri, lines = params.text_document.uri, params.range
    where = ls.view(uri)  # from the article files while the store loads
    text = ls.text_of(uri) if where is not None and where.kind == "asset" else None
    if where is None or text is None or not where.folder.settings.inlay_hints_enabled:
        return None
    codec, settings = ls.workspace.position_codec, where.folder.settings
    hits = []  # (where the hint goes, what it shows)
    if lines.start.line == 0 and (own := lookup(ls, uri, where)) is not None:
        hits.append((convert.line_end(codec, text, 0), own))
    if settings.inlay_hints_imports:  # after each import naming a governed module
        span = range(lines.start.line, min(lines.end.line + 1, text.line_count))
        for n, named, found in imported(where, text, span):
            hits.append((convert.position(codec, text, n, named.end), found))
    hints = []
    for position, found in hits:
        capsule = " ".join(found.article.capsule.split())
        label = shorten(capsule or "(no capsule)", settings.inlay_hints_max_length)
        mine = found.token is None and found.governing == where.address
        hints.append(
            types.InlayHint(
                position=position,
                label=label if mine else f"{found.governing}: {label}",
                tooltip=capsule or f"{found.governing} has no capsule yet.",
                padding_left=True,
            )
        )
    return hints


def shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)].rstrip() + "…"
