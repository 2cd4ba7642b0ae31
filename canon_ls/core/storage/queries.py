"""What is asked of a store's held index beside its articles (SPEC §6): backlinks, the journal
and BM25, under its lock (index.py reads `.canon/` into memory and keeps it in sync)."""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from canon_ls.core.retrieval.backlinks import LinkIndex
from canon_ls.core.storage.address import link_target
from canon_ls.core.storage.article import Article
from canon_ls.core.storage.freshness import Key
from canon_ls.core.storage.journal import JournalEntry
from canon_ls.core.storage.journal_index import JournalIndex

if TYPE_CHECKING:  # BM25 is imported when first asked (a third of the index module's import)
    from canon_ls.core.retrieval.search_file import FileIndex


class StoreQueries:
    """Backlinks, journal and search over the state a StoreIndex holds (it sets these)."""

    root: Path
    project: Path
    lock: threading.RLock
    load: Callable[[], None]
    _index: dict[str, Article]
    _stat: dict[str, Key]
    _racy: set[str]
    _links: LinkIndex | None
    _search: FileIndex | None
    _journal: JournalIndex

    def link_target(self, target: str) -> str:
        """The article a wikilink's target names (address.link_target: `[[src/x.ts]]` is
        `src/x` unless an article `src/x.ts` exists)."""
        self.load()
        return link_target(target, self._index.__contains__)

    def backlinks(self, address: str) -> list[str]:
        """Articles whose wikilinks target `address`, sorted (the article itself excluded)."""
        with self.lock:
            links = self._link_index()
            links.step(len(links.pending), self._index.get)
            return links.sources(address, self._index.__contains__)

    def build_backlinks(self, step: int = 25) -> Iterator[int]:
        """Build the backlinks index `step` articles at a time, yielding how many are left between
        chunks, so an event loop can answer requests meanwhile (never a thread)."""
        while True:
            with self.lock:
                links = self._link_index()
                if not links.step(max(1, step), self._index.get):
                    return
                left = len(links.pending)
            yield left

    def _link_index(self) -> LinkIndex:
        self.load()
        if self._links is None:
            self._links = LinkIndex(self._index)
        return self._links

    def journal_entries(self) -> list[JournalEntry]:
        """Every journal entry, newest first (by day, recorded instant, file time, name)."""
        with self.lock:
            return self._journal.entries()

    def journal_steps(self, step: int = 50) -> Iterator[int]:
        """Read the journal and group it by subject in steps of `step` entries, for an event loop
        (the first `journal_names` reads every entry: 0.3 s for 5k entries in one go)."""
        journal, n = self._journal, max(1, step)  # the grouping starts once the read has ended
        steps = itertools.chain(journal.refresh_steps(n), journal.group_steps(n))  # kept once built
        while True:
            with self.lock:
                left = next(steps, None)
            if left is None:
                break
            yield left

    def journal_count(self) -> int:
        """How many entries the journal holds (a directory listing; nothing is read)."""
        return self._journal.count()

    def journal_names(self, address: str) -> list[str]:
        """Every entry file name whose subject names `address`, newest first (kept grouped)."""
        with self.lock:
            return self._journal.names(address)

    def journal_body(self, entry: JournalEntry) -> str:
        """An entry's body (only search shows journal contents)."""
        with self.lock:
            return self._journal.body(entry)

    def search_articles(self, query: str, limit: int) -> tuple[list[tuple[str, float]], int]:
        """BM25 over address, title, capsule, tags (boosted), body: (hits best first, matches)."""
        from canon_ls.core.retrieval.search import (
            article_tokens,
            boosted,
            default_cache_file,
            tokenize,
        )
        from canon_ls.core.retrieval.search_file import cached_index

        with self.lock:
            self.load()
            if self._search is None:
                # Reuse the snapshot for unchanged stat keys (a racy file gets no stamp): first
                # search at 10k articles drops from ~2 s to ~0.05 s (docs/BENCHMARKS.md).
                docs = {
                    address: (
                        None if address in self._racy else self._stat.get(address),
                        functools.partial(article_tokens, article),
                    )
                    for address, article in self._index.items()
                }
                self._search = cached_index(default_cache_file(self.root, self.project), docs)
            return self._search.query_tokens(boosted(tokenize(query)), limit)

    def search_journal(
        self, query: str, limit: int
    ) -> tuple[list[tuple[JournalEntry, float]], int]:
        """BM25 over journal entries (subject and body)."""
        with self.lock:
            return self._journal.search(query, limit)
