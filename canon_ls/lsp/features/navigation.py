"""Document links, definition and references (SPEC §10 rows "document links, definition",
"references"). Targets come from the store's index; ranges from the document's own text."""

from __future__ import annotations

import re

from lsprotocol import types

from canon_ls.core.links import wikilinks

from .. import convert, edits, resolve
from ..state import CanonLanguageServer

MAX_SCAN = 1_000_000  # characters: longer documents get no document links (never a slow scan)
_PATH = re.compile(
    r"(?<![\w/.:-])((?:[\w@+~-]+/)+[\w@+~.-]*\w|[\w@+~-]+\.[A-Za-z0-9]{1,8})(?![\w/])"
)


def on_document_link(
    ls: CanonLanguageServer, params: types.DocumentLinkParams
) -> list[types.DocumentLink] | None:
    uri = params.text_document.uri
    where = ls.where(uri)
    if where is None or where.folder.store is None or where.kind == "store":
        return None
    text = ls.text_of(uri)
    if text is None or len(text.source) > MAX_SCAN:
        return None
    store = where.store
    codec = ls.workspace.position_codec
    out = []
    taken: list[tuple[int, int]] = []
    for link in wikilinks(text.source):
        governing = link.target if store.has(link.target) else store.governing(link.target)
        if not governing:
            continue
        taken.append((link.start, link.end))
        out.append(
            types.DocumentLink(
                range=convert.offsets(codec, text, link.target_start, link.target_end),
                target=where.folder.article_uri(governing),
            )
        )
    if where.kind == "article":  # path tokens in articles link to the asset itself
        project = where.folder.project
        for m in _PATH.finditer(text.source):
            if any(s <= m.start() < e for s, e in taken):
                continue
            path = project / m.group(1)
            try:
                if not path.exists():
                    continue
            except OSError:
                continue
            out.append(
                types.DocumentLink(
                    range=convert.offsets(codec, text, m.start(1), m.end(1)),
                    target=edits.path_uri(path),
                )
            )
    return out


def on_definition(ls: CanonLanguageServer, params: types.DefinitionParams) -> types.Location | None:
    target = resolve.at_cursor(
        ls, params.text_document.uri, params.position, own_on_first_line=False
    )
    if target is None:
        return None
    return types.Location(uri=target.where.folder.article_uri(target.governing), range=convert.TOP)


def on_references(
    ls: CanonLanguageServer, params: types.ReferenceParams
) -> list[types.Location] | None:
    uri = params.text_document.uri
    where = ls.where(uri)
    if where is None or where.folder.store is None:
        return None
    address = where.address if where.kind == "article" else where.governing()
    target = resolve.at_cursor(ls, uri, params.position, own_on_first_line=False)
    if target is not None and target.token is not None and target.token.wikilink:
        address = target.address
    if not address:
        return None
    store = where.store
    folder = where.folder
    codec = ls.workspace.position_codec
    out = []
    for source in folder.backlinks(address):
        source_uri = folder.article_uri(source)
        text = ls.text_of(source_uri)
        if text is None:
            continue
        for link in wikilinks(text.source):
            if link.target == address:
                out.append(
                    types.Location(
                        uri=source_uri, range=convert.offsets(codec, text, link.start, link.end)
                    )
                )
    for name in folder.journal_names(address):
        out.append(types.Location(uri=edits.path_uri(store.journal_dir / name), range=convert.TOP))
    if params.context.include_declaration and where.kind != "article" and store.has(address):
        out.insert(0, types.Location(uri=folder.article_uri(address), range=convert.TOP))
    return out
