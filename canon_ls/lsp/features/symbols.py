"""Workspace symbols: articles by address and capsule, ranked by the store's BM25 (SPEC §10)."""

from __future__ import annotations

from lsprotocol import types

from ..state import CanonLanguageServer

LIMIT = 100
_TOP = types.Range(
    start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
)


def on_workspace_symbol(
    ls: CanonLanguageServer, params: types.WorkspaceSymbolParams
) -> list[types.SymbolInformation] | None:
    out: list[types.SymbolInformation] = []
    query = params.query.strip()
    for folder in list(ls.folders.values()):
        store = folder.store
        if store is None or not store.exists():
            continue
        if query:
            hits = [address for address, _ in store.search_articles(query, LIMIT)[0]]
            # An address typed as such ranks first even when BM25 has nothing to say.
            lowered = query.lower()
            prefix = [a for a in store.addresses() if a.lower().startswith(lowered)][:LIMIT]
            ordered = list(dict.fromkeys(prefix[:5] + hits + prefix[5:]))[:LIMIT]
        else:
            ordered = store.addresses()[:LIMIT]
        for address in ordered:
            article = store.article(address)
            out.append(
                types.SymbolInformation(
                    name=address,
                    kind=types.SymbolKind.File,
                    location=types.Location(uri=folder.article_uri(address), range=_TOP),
                    container_name=(article.capsule[:120] if article else None) or None,
                )
            )
    return out
