"""Workspace symbols: articles by address and capsule, ranked by the store's BM25 (SPEC §10).

The BM25 index lives in a child process (`searcher.py`); until it is built, and as a fallback,
addresses containing the query answer, so the request never waits on indexing.
"""

from __future__ import annotations

from lsprotocol import types

from .. import convert
from ..state import CanonLanguageServer, Folder

LIMIT = 50  # symbols per answer; the client asks again as the query grows


async def on_workspace_symbol(
    ls: CanonLanguageServer, params: types.WorkspaceSymbolParams
) -> list[types.SymbolInformation] | None:
    out: list[types.SymbolInformation] = []
    query = params.query.strip()
    for folder in list(ls.folders.values()):
        store = folder.store
        if store is None or not store.exists():
            continue
        for address in await ranked(folder, query):
            article = store.article(address)
            if article is None:
                continue
            out.append(
                types.SymbolInformation(
                    name=address,
                    kind=types.SymbolKind.File,
                    location=types.Location(uri=folder.article_uri(address), range=convert.TOP),
                    container_name=article.capsule[:120] or None,
                )
            )
    return out


async def ranked(folder: Folder, query: str) -> list[str]:
    store = folder.store
    assert store is not None
    if not query:
        return store.addresses()[:LIMIT]
    lowered = query.lower()
    named = [a for a, low in folder.lowered_addresses() if lowered in low]
    hits = await folder.searcher.query(query, LIMIT) if folder.searcher is not None else None
    if hits is None:
        return named[:LIMIT]
    # An address typed as such ranks first even when BM25 has nothing to say about it.
    exact = [a for a in named if a.lower().startswith(lowered)][:5]
    return list(dict.fromkeys(exact + hits))[:LIMIT]
