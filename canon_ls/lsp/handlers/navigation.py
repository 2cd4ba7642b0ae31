"""Document links, definition and references."""

from __future__ import annotations

import asyncio
import os
import re
import time
from pathlib import Path

from lsprotocol import types

from canon_ls.core.retrieval.links import wikilinks
from canon_ls.core.storage import freshness
from canon_ls.lsp.handlers import edits
from canon_ls.lsp.session.state import CanonLanguageServer, Folder, imported, lookup, read_text
from canon_ls.lsp.wire import convert
from canon_ls.lsp.wire.convert import Text

MAX_RANGES = 20_000  # cached sources per folder before the cache starts over
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
        named = store.link_target(link.target)
        governing = named if store.has(named) else store.governing(named)
        if not governing:
            continue
        taken.append((link.start, link.end))
        out.append(
            types.DocumentLink(
                range=convert.offsets(codec, text, link.target_start, link.target_end),
                target=where.folder.article_uri(governing),
            )
        )
    out += [
        types.DocumentLink(range=convert.span(codec, text, n, hit.start, hit.end), target=found.uri)
        for n, hit, found in imported(where, text, range(text.line_count))
    ]
    if where.kind == "article":  # path tokens in articles link to the asset itself
        project = where.folder.project
        for m in _PATH.finditer(text.source):
            path = project / m.group(1)
            if any(s <= m.start() < e for s, e in taken) or not os.path.exists(path):
                continue
            out.append(
                types.DocumentLink(
                    range=convert.offsets(codec, text, m.start(1), m.end(1)),
                    target=edits.path_uri(path),
                )
            )
    return out


def on_definition(ls: CanonLanguageServer, params: types.DefinitionParams) -> types.Location | None:
    uri = params.text_document.uri
    found = lookup(ls, uri, ls.where(uri), params.position, own_on_first_line=False)
    return types.Location(uri=found.uri, range=convert.TOP) if found is not None else None


async def on_references(
    ls: CanonLanguageServer, params: types.ReferenceParams
) -> list[types.Location] | None:
    """Before the store is loaded, wait for its load and backlinks in steps (a person waits: no
    waiting for the check's parse cache) rather than reading it all at once: hovers pass."""
    where = ls.where(params.text_document.uri)
    load = where.folder.load if where is not None else None
    if where is not None and load is not None and not load.loaded:
        load.hurry()
        await load.ready()
        if where.folder.warming is not None:
            await asyncio.shield(where.folder.warming)
    return references(ls, params)


def references(
    ls: CanonLanguageServer, params: types.ReferenceParams
) -> list[types.Location] | None:
    uri = params.text_document.uri
    where = ls.where(uri)
    if where is None or where.folder.store is None:
        return None
    address = where.address if where.kind == "article" else where.governing()
    found = lookup(ls, uri, where, params.position, own_on_first_line=False)
    if found is not None and found.token is not None and found.token.wikilink:
        address = found.address
    if not address:
        return None
    store = where.store
    folder = where.folder
    out = []
    # Open articles count by their unsaved text: a link just typed is found, one deleted is not.
    sources = (set(store.backlinks(address)) | ls.open_articles(folder)) - {address}
    for source in sorted(sources):
        source_uri = folder.article_uri(source)
        for linked, rng in link_ranges(ls, folder, source, source_uri):
            if linked == address or store.link_target(linked) == address:
                out.append(types.Location(uri=source_uri, range=rng))
    for name in store.journal_names(address):
        out.append(types.Location(uri=edits.path_uri(store.journal_dir / name), range=convert.TOP))
    if params.context.include_declaration and where.kind != "article" and store.has(address):
        out.insert(0, types.Location(uri=folder.article_uri(address), range=convert.TOP))
    return out


def link_ranges(
    ls: CanonLanguageServer, folder: Folder, source: str, uri: str
) -> list[tuple[str, types.Range]]:
    """Every wikilink of one article as (target, range in the client's encoding)."""
    encoding = ls.workspace.position_codec.encoding
    cached = folder.link_ranges.get(uri)
    opened = ls.open_text(uri)
    if opened is not None:
        if cached is not None:
            (enc, kind, ident), ranges, _ = cached
            if enc == encoding and kind == "open" and ident == opened.source:  # `is` first
                return ranges
        ranges = _ranges_of(ls, opened)
        _remember(folder, uri, (encoding, "open", opened.source), ranges, None)
        return ranges
    store = folder.store
    assert store is not None
    path = cached[2] if cached is not None and cached[2] else store.article_file(source)
    try:
        st = os.stat(path)
    except OSError:
        return []
    stamp = freshness.key(st)  # core's one stat key
    key = (encoding, "disk", stamp)
    if cached is not None and cached[0] == key:
        return cached[1]
    now = time.time_ns()  # before the read: "settled" must hold for the bytes we get
    text = read_text(Path(path))
    if text is None:
        return []
    ranges = _ranges_of(ls, text)
    if freshness.settled(stamp, now):
        _remember(folder, uri, key, ranges, path)
    else:
        folder.link_ranges.pop(uri, None)
    return ranges


def _ranges_of(ls: CanonLanguageServer, text: Text) -> list[tuple[str, types.Range]]:
    codec = ls.workspace.position_codec
    return [
        (link.target, convert.offsets(codec, text, link.start, link.end))
        for link in wikilinks(text.source)
    ]


def _remember(
    folder: Folder,
    uri: str,
    key: tuple[object, str, object],
    ranges: list[tuple[str, types.Range]],
    path: str | None,
) -> None:
    if len(folder.link_ranges) >= MAX_RANGES:
        folder.link_ranges.clear()
    folder.link_ranges[uri] = (key, ranges, path)
