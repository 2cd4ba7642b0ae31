"""Workspace symbols: articles by address and capsule, ranked by the store's BM25 (SPEC §10)."""

from __future__ import annotations

import asyncio
import bisect
import functools
import logging
import time
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.uris import from_fs_path

from canon_ls.lsp.helpers.searcher import Searcher
from canon_ls.lsp.session.lifecycle import show
from canon_ls.lsp.session.state import CanonLanguageServer, Folder
from canon_ls.lsp.startup import early_symbols
from canon_ls.lsp.startup.early import KeptView
from canon_ls.lsp.startup.early_symbols import LIMIT, SMALL, symbol_name
from canon_ls.lsp.startup.turns import yield_to_requests
from canon_ls.lsp.wire import convert

if TYPE_CHECKING:
    from canon_ls.core.storage.article import Article
    from canon_ls.core.storage.store import Store

log = logging.getLogger(__name__)

EARLY_WAIT = 1.0  # seconds an early answer waits for the load while nothing held matches


async def on_workspace_symbol(
    ls: CanonLanguageServer, params: types.WorkspaceSymbolParams
) -> list[types.SymbolInformation] | None:
    out: list[types.SymbolInformation] = []
    query = params.query.strip()
    for folder in list(ls.folders.values()):
        store = folder.store
        if store is None or not store.exists():
            continue
        worker = folder.search()
        uri_of = folder.article_uri
        if _full_answer(folder, worker):
            found = [(a, store.article(a)) for a in await ranked(ls, folder, query)]
        else:
            found = await early_answer(ls, folder, query)
            _show_indexing(ls, folder, worker)
            uri_of = functools.partial(_file_uri, store)  # (the folder's would load the store)
            if not found and query:  # only the full text can answer (a word of a body)
                view = KeptView(folder.load) if folder.load is not None else store
                hits = await small_store_hits(store, view, query)
                hits = hits if hits is not None else await ranked(ls, folder, query)  # wait
                found = [(a, view.article(a)) for a in hits]
        out += [
            types.SymbolInformation(
                name=symbol_name(address, article.capsule),
                kind=types.SymbolKind.File,
                location=types.Location(uri=uri_of(address), range=convert.TOP),
            )
            for address, article in found
            if article is not None
        ]
        _report_fallback(ls, folder)
    return out


def on_answered_early(ls: CanonLanguageServer, params: object) -> None:
    """A query answered before the server was built (meanwhile.py)."""
    for folder in list(ls.folders.values()):
        store = folder.store
        if store is None or not store.exists():
            continue
        worker = folder.search()
        if folder.load is not None:
            folder.load.hurry()
            folder.load.soon()
        if not _full_answer(folder, worker):
            _show_indexing(ls, folder, worker)


def _full_answer(folder: Folder, worker: Searcher) -> bool:
    """Whether the folder answers from its loaded store and BM25."""
    return (folder.load is None or folder.load.loaded) and bool(worker.served or worker.failure)


def _file_uri(store: Store, address: str) -> str:
    return from_fs_path(store.paths.file(address)) or ""


async def early_answer(
    ls: CanonLanguageServer, folder: Folder, query: str
) -> list[tuple[str, Article | None]]:
    """The answer from what the store holds, at once (its load starts now if it has not)."""
    store, load = folder.store, folder.load
    assert store is not None
    task = None
    if load is not None:
        load.hurry()
        task = load.soon()
    started = time.monotonic()
    listed: list[str] | None = None
    tried = False
    while True:
        addresses, articles = store.held()
        if addresses is None:
            # not listed by the load yet: listed here once, rather than after the load's
            # turns have listed them
            if not tried:
                listed, tried = early_symbols.listed(store), True
            addresses = listed
        loading = task is not None and not task.done()
        if addresses is not None or not loading:
            best = early_symbols.rank(
                query, addresses or [a.address for a in articles], articles, LIMIT
            )
            small = addresses is not None and len(addresses) <= SMALL  # ranked here instead
            if best or small or not loading or time.monotonic() - started > EARLY_WAIT:
                break
        await asyncio.sleep(0.005 if addresses is None else 0.05)  # the load runs meanwhile
    held = {a.address: a for a in articles}
    view = KeptView(load) if load is not None else store
    return [(a, held.get(a) or view.article(a)) for a in best]


async def small_store_hits(store: Store, view: Store | KeptView, query: str) -> list[str] | None:
    """BM25 over a small store built here, in steps between requests."""
    from canon_ls.core.retrieval.search import SearchIndex, article_tokens

    addresses = store.held()[0] or early_symbols.listed(store)
    if addresses is None or len(addresses) > SMALL:
        return None
    index = SearchIndex()
    for n, address in enumerate(addresses, 1):
        article = view.article(address)
        if article is not None:
            index.add_tokens(address, article_tokens(article))
        if n % 25 == 0:
            await yield_to_requests()
    return early_symbols.best(index, query)


def _show_indexing(ls: CanonLanguageServer, folder: Folder, worker: Searcher) -> None:
    """A work-done progress while BM25 (and the store) get ready."""
    progress = get_capability(ls.client_capabilities, "window.work_done_progress", False)
    if progress and worker.indexing is None and not ls.shutting_down:
        worker.indexing = ls.run_task(_indexing(ls, folder, worker), "canon-indexing")


async def _indexing(ls: CanonLanguageServer, folder: Folder, worker: Searcher) -> None:
    token = f"canon-index-{uuid.uuid4()}"
    try:
        await asyncio.wait_for(ls.work_done_progress.create_async(token), timeout=10)
        ls.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title="canon: indexing symbols", cancellable=False)
        )
        if folder.load is not None:
            await folder.load.ready()
        if worker.task is not None:
            await asyncio.shield(worker.task)
        ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
    except Exception:  # a client that refuses progress keeps its answers, nothing else
        log.debug("the indexing progress failed", exc_info=True)
    finally:
        worker.indexing = None


def _report_fallback(ls: CanonLanguageServer, folder: Folder) -> None:
    worker = folder.searcher
    if worker is None or not worker.failure or worker.reported:
        return
    worker.reported = True
    show(
        ls,
        f"canon: full-text symbol search is unavailable in {folder.project.name} "
        f"({worker.failure}); symbols match addresses and capsules only.",
    )


async def ranked(ls: CanonLanguageServer, folder: Folder, query: str) -> list[str]:
    """Typed addresses first, then BM25 over body and capsule, then addresses holding the query."""
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
    """The addresses lower-cased: sorted for prefix search, joined for `str.find` (in C)."""

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
