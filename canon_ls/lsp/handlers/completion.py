"""Completion inside `[[` in an article: addresses with their capsule (SPEC §10 completion)."""

from __future__ import annotations

from lsprotocol import types

from canon_ls.lsp.handlers.cursor import wikilink_open_before
from canon_ls.lsp.session.state import CanonLanguageServer
from canon_ls.lsp.wire import convert

LIMIT = 200  # items per answer; the list is marked incomplete so typing narrows it


def on_completion(
    ls: CanonLanguageServer, params: types.CompletionParams
) -> types.CompletionList | None:
    uri = params.text_document.uri
    where = ls.where(uri)
    if where is None or where.kind != "article":
        return None
    text = ls.text_of(uri)
    if text is None:
        return None
    codec = ls.workspace.position_codec
    line_no, col, line = convert.from_client(codec, text, params.position)
    start = wikilink_open_before(line, col)
    if start is None:
        return None
    typed = line[start:col].strip().lower()
    store = where.store
    rng = convert.span(codec, text, line_no, start, col)
    items: list[types.CompletionItem] = []
    matched = 0
    for address in store.addresses():
        if typed and typed not in address.lower():
            continue
        matched += 1
        if len(items) >= LIMIT:
            continue
        article = store.article(address)
        items.append(
            types.CompletionItem(
                label=address,
                kind=types.CompletionItemKind.File,
                detail=(article.capsule if article else "") or None,
                text_edit=types.TextEdit(range=rng, new_text=address),
                filter_text=address,
            )
        )
    return types.CompletionList(is_incomplete=matched > len(items), items=items)
