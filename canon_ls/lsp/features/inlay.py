"""Inlay hint: the governing capsule at the end of a governed file's first line (SPEC §10)."""

from __future__ import annotations

from lsprotocol import types

from .. import convert
from ..state import CanonLanguageServer, lookup


def on_inlay_hint(
    ls: CanonLanguageServer, params: types.InlayHintParams
) -> list[types.InlayHint] | None:
    uri = params.text_document.uri
    if params.range.start.line > 0:
        return None
    where = ls.view(uri)  # from the article files while the store loads
    if where is None or not where.folder.settings.inlay_hints_enabled:
        return None
    found = lookup(ls, uri, where)
    text = ls.text_of(uri)
    if found is None or text is None:
        return None
    governing = found.governing
    capsule = " ".join(found.article.capsule.split())
    label = shorten(capsule or "(no capsule)", where.folder.settings.inlay_hints_max_length)
    if governing != where.address:
        label = f"{governing}: {label}"
    return [
        types.InlayHint(
            position=convert.line_end(ls.workspace.position_codec, text, 0),
            label=label,
            kind=None,
            tooltip=capsule or f"{governing} has no capsule yet.",
            padding_left=True,
        )
    ]


def shorten(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    return text[: max(1, width - 1)].rstrip() + "…"
