"""Workspace symbols: articles by address and capsule, ranked by the store's BM25 (SPEC §10).

The BM25 index lives in a child process (`searcher.py`). The first query waits for it (loaded
from its on-disk snapshot, or built) rather than answer from addresses alone, which looked
like a complete answer and was not (issue 9 item 16). Only when the worker cannot answer do
addresses and capsules containing the query stand in, and the person is told so once.
"""

from __future__ import annotations

import bisect

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
        for address in await ranked(ls, folder, query):
            article = store.article(address)
            if article is None:
                continue
            out.append(
                types.SymbolInformation(
                    name=symbol_name(address, article.capsule),
                    kind=types.SymbolKind.File,
                    location=types.Location(uri=folder.article_uri(address), range=convert.TOP),
                )
            )
        _report_fallback(ls, folder)
    return out


def _report_fallback(ls: CanonLanguageServer, folder: Folder) -> None:
    worker = folder.searcher
    if worker is None or not worker.failure or worker.reported:
        return
    worker.reported = True
    ls.window_show_message(
        types.ShowMessageParams(
            type=types.MessageType.Warning,
            message=(
                f"canon: full-text symbol search is unavailable in {folder.project.name} "
                f"({worker.failure}); symbols match addresses and capsules only."
            ),
        )
    )


SEPARATOR = " — "
CAPSULE_CHARS = 120


def symbol_name(address: str, capsule: str) -> str:
    """`address — capsule`: the capsule belongs in the name, not only in the container.

    VS Code filters workspace symbols itself and keeps only those whose *name* fuzzy-matches
    the query (its own scorer; the container is consulted only for the words after the
    first): with the address alone as the name, an article found by a word of its capsule
    ("routes" for src/app) was dropped before the person saw it. Every client shows the
    name, so the capsule reads at a glance in a picker or a quickfix list too.
    """
    if not capsule:
        return address
    if len(capsule) > CAPSULE_CHARS:
        capsule = capsule[: CAPSULE_CHARS - 1].rstrip() + "…"
    return f"{address}{SEPARATOR}{capsule}"


async def ranked(ls: CanonLanguageServer, folder: Folder, query: str) -> list[str]:
    """Addresses typed as such first (starting with the query, or holding a query with a
    slash), then BM25 over body and capsule, then addresses that merely contain the query
    (what a picker needs while a word is still being typed)."""
    names = AddressNames.of(folder)
    if not query:
        return names.addresses[:LIMIT]
    lowered = query.lower()
    hits = await folder.search().query(query, LIMIT)
    if hits is None:  # no full text: capsules stand in (the person is told, see above)
        hits = capsules_containing(folder, lowered.split(), LIMIT)
    ranked = names.starting_with(lowered, 5)
    if "/" in lowered:  # an address being typed: addresses holding it beat text matches
        ranked += names.containing(lowered, LIMIT)
    ranked += hits
    if len(ranked) < LIMIT:
        ranked += names.containing(lowered, LIMIT)
    return list(dict.fromkeys(ranked))[:LIMIT]


def capsules_containing(folder: Folder, words: list[str], limit: int) -> list[str]:
    """Articles whose capsule contains every word (the stand-in when BM25 cannot answer)."""
    store = folder.store
    if store is None or not words:
        return []
    out = []
    for address in store.addresses():
        article = store.article(address)
        capsule = article.capsule.lower() if article is not None else ""
        if all(word in capsule for word in words):
            out.append(address)
            if len(out) >= limit:
                break
    return out


class AddressNames:
    """The folder's addresses lower-cased, sorted for prefix search and joined into one string
    for substring search (`str.find` runs in C: ~50 µs over 10k addresses where a Python scan
    took ~0.5 ms per keystroke). Rebuilt once per store change."""

    _cache: dict[str, AddressNames] = {}

    def __init__(self, folder: Folder) -> None:
        self.folder, self.generation = folder, folder.signals.generation
        store = folder.store
        pairs = [(a, a.lower()) for a in (store.addresses() if store is not None else [])]
        self.addresses = [a for a, _ in pairs]
        self.blob = "\n".join(low for _, low in pairs) + "\n"
        self.starts = [0]
        for _, low in pairs:
            self.starts.append(self.starts[-1] + len(low) + 1)
        by_lowered = sorted((low, a) for a, low in pairs)
        self.lows = [low for low, _ in by_lowered]
        self.by_lowered = [a for _, a in by_lowered]

    @classmethod
    def of(cls, folder: Folder) -> AddressNames:
        names = cls._cache.get(folder.uri)
        if (
            names is None
            or names.folder is not folder
            or names.generation != folder.signals.generation
        ):
            names = cls._cache[folder.uri] = cls(folder)
        return names

    def starting_with(self, lowered: str, limit: int) -> list[str]:
        out: list[str] = []
        for i in range(bisect.bisect_left(self.lows, lowered), len(self.lows)):
            if len(out) >= limit or not self.lows[i].startswith(lowered):
                break
            out.append(self.by_lowered[i])
        return out

    def containing(self, lowered: str, limit: int) -> list[str]:
        if "\n" in lowered:
            return []
        out: list[str] = []
        find, at = self.blob.find, 0
        while len(out) < limit:
            at = find(lowered, at)
            if at < 0:
                break
            i = bisect.bisect_right(self.starts, at) - 1
            out.append(self.addresses[i])
            at = self.starts[i + 1]  # one hit per address
        return out
