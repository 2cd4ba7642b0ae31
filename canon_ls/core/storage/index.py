"""The store's index (SPEC §2, §4, §6): `.canon/` on disk, read into memory and kept in sync."""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING

from canon_ls.core import reach
from canon_ls.core.retrieval.backlinks import LinkIndex, targets_of
from canon_ls.core.storage import article as art
from canon_ls.core.storage import cache, freshness, fsio
from canon_ls.core.storage.address import (
    OutsideStore,
    ancestors,
    argument,
    asset_folder,
    contained,
    governing_in,
    normalise,
)
from canon_ls.core.storage.article import Article
from canon_ls.core.storage.bodies import BodyReader
from canon_ls.core.storage.freshness import Key, key_of, scan, settled
from canon_ls.core.storage.journal_index import JournalIndex
from canon_ls.core.storage.places import StorePlaces
from canon_ls.core.storage.queries import StoreQueries
from canon_ls.core.storage.reader import MAX_BYTES, Reader

if TYPE_CHECKING:  # BM25 is imported when first asked (a third of this module's import)
    from canon_ls.core.retrieval.search_file import FileIndex


def _read_capped(
    path: str | Path, size: int = -1, inside: str | None = None, regular: bool = False
) -> tuple[bytes, bool]:
    """At most MAX_BYTES of a regular file, and whether it was longer (fsio.read_regular)."""
    return fsio.read_regular(path, MAX_BYTES, size, inside=inside, regular=regular)


class StoreIndex(StoreQueries, StorePlaces, Reader):
    """One store read: the project's `.canon/` and its mounts in memory (a Store adds writes)."""

    mounted: Mapping[str, StoreIndex]

    def __init__(
        self, project: Path, root: str | Path | None = None, mounts: Sequence[str | Path] = ()
    ) -> None:
        super().__init__(project, root, mounts)
        self.lock = threading.RLock()  # the Store's writes change the index under it too
        self._index: dict[str, Article] = {}
        self._stat: dict[str, Key] = {}
        self._digest: dict[str, int] = {}
        self._racy: set[str] = set()
        self._parsed = 0  # files parsed since the parse cache was last written
        self.loaded = False  # the articles have been read (on first use, or in steps)
        self._scanned: list[str] | None = None  # every address the stepped load's scan found
        self._search: FileIndex | None = None
        self._links: LinkIndex | None = None  # inverse wikilinks, built on first backlinks()
        self._reach: dict[str, reach.Reach] = {}  # articles that apply beyond their address
        # where this store's lean articles read their bodies (DiskView's early articles too)
        self.bodies = BodyReader(
            self.paths, self._index, self._stat, self._racy, _read_capped, self._own_layout_problem
        )
        self.bodies.changed = self._body_changed
        for sub in self.mounted.values():  # a mount article read stale: re-read through here
            sub.bodies.changed = self._body_changed
        kept = cache.cache_file(self.root, self.project, "journal")
        self._journal = JournalIndex(self.journal_dir, MAX_BYTES, self._own_layout_problem, kept)
        self._mapped = False

    def _scan(self, base: Path | None = None) -> dict[str, Key]:
        """Every article file under articles/ (or `base`): address -> stat key, through
        freshness.scan; the tool's own old temp files are swept on the way."""
        now = time.time()
        real = os.path.realpath(self.articles_dir)
        if base is None:
            return scan(self.articles_dir, real, lambda path: fsio.sweep(path, now))
        prefix = base.relative_to(self.articles_dir).as_posix() + "/"
        if not fsio.within(os.path.realpath(base), real):
            return {}  # §12: a directory link leading out of the store is not followed
        found = scan(base, real, lambda path: fsio.sweep(path, now))
        return {prefix + address: hit for address, hit in found.items()}

    def _file(self, address: str) -> str:
        return os.path.join(self.articles_dir, address + ".md")  # as the scan found it

    def _consider(self, address: str, path: str | Path, key: Key, inside: str) -> bool:
        """Re-read a file whose stat key changed (or was modified too recently to trust its mtime,
        as git does for "racy" entries); True when its content changed."""
        if self._stat.get(address) == key and address not in self._racy:
            return False
        now = time.time_ns()  # before the read: "settled" must hold for the bytes we get
        try:
            data, truncated = _read_capped(path, key[1], inside, regular=True)
        except (OSError, OutsideStore):
            return False
        if settled(key, now):
            self._racy.discard(address)
        else:
            self._racy.add(address)
        self._stat[address] = key
        digest = hash(data)
        if address in self._index and self._digest.get(address) == digest:
            return False
        self._parsed += 1
        # lean at once (no body kept, its targets found in the same pass) unless the search
        # index, when built, takes its tokens from the body in hand (_set)
        source = self.bodies if self._search is None else None
        article = art.parse(data, address, key[0], key[1], source)
        if truncated:
            problems = (
                *article.problems,
                f"file too large ({key[1]:,} bytes); only the first {MAX_BYTES:,} were read",
            )
            article = replace(article, problems=problems)
        self._digest[address] = digest
        self._set(address, article)
        return True

    def _set(self, address: str, article: Article | None) -> None:
        """Update the merged index (and the search index when built)."""
        meta = article.meta if article is not None and ":" not in address else {}
        found = reach.reach_of(meta) if "applies" in meta or "always" in meta else None
        if found is None:
            self._reach.pop(address, None)
        else:
            self._reach[address] = found
        if article is None:
            self._index.pop(address, None)
            self._stat.pop(address, None)
            self._digest.pop(address, None)
            self._racy.discard(address)
            if self._search is not None:
                self._search.remove(address)
            if self._links is not None:
                self._links.set(address, ())
            return
        if self._search is not None:  # from the body in hand, if it is (written, parsed)
            from canon_ls.core.retrieval.search import article_tokens

            self._search.add_tokens(address, article_tokens(article))
        if article.held is not None:
            article = art.lean(article, self.bodies)
        self._index[address] = article
        if self._links is not None:
            self._links.set(address, targets_of(article))

    def written(self, address: str, data: bytes, key: Key) -> Article:
        """A write (the Store's, under `lock`) just put `data` in this article's file, now at
        stat key `key`: take it in without reading it back, racy so revalidate reads it once."""
        article = art.parse(data, address, key[0], key[1])
        self._stat[address], self._digest[address] = key, hash(data)
        self._racy.add(address)
        self._set(address, article)
        return article

    def take_mount(self, name: str, changed: set[str]) -> set[str]:
        """Mount `name`'s own index changed these of its addresses: take its articles (or
        their absence) as they are now. Returns them as this store names them (`name:…`)."""
        for rest in changed:
            self._set(f"{name}:{rest}", self.mounted[name].article(rest))
        return {f"{name}:{rest}" for rest in changed}

    def journal_changed(self) -> None:
        """A journal entry was written: the next journal look-up re-checks every entry."""
        self._journal.invalidate()

    def refresh(self, dirs: Iterable[str | Path] | None = None) -> set[str]:
        """Re-validate against disk and return the addresses added, changed or removed."""
        if dirs is None:
            return self._refresh_all()
        with self.lock:
            self.load()
            changed: set[str] = set()
            for directory in dirs:
                changed |= self._refresh_dir(Path(os.path.abspath(directory)))
            return changed

    def revalidate(self, paths: Iterable[str | Path]) -> set[str]:
        """Re-read whichever of these article files changed since they were indexed (the one stat
        key, core/storage/freshness.py): one stat each when none did."""
        changed: set[str] = set()
        with self.lock:
            self.load()
            for path in paths:
                if not self._unchanged(str(path)):
                    changed |= self.reload_file(Path(path))
        return changed

    def revalidate_governing(self, address: str) -> tuple[set[str], str | None]:
        """§4's governing article of `address`, each article file up to it re-read first if disk
        moved on (a stat each when nothing did), and the addresses that changed."""
        changed: set[str] = set()
        files = self.paths.files_up(address)
        for candidate, file in files or ((a, str(self.path_of(a))) for a in ancestors(address)):
            changed |= self.revalidate([file])
            if self.has(candidate):
                return changed, candidate
        return changed, None

    def governing_article(self, address: str) -> tuple[str | None, Article | None]:
        """§4 for a read of one address, fresh from disk; a store not loaded yet (a CLI or hook)
        parses only the first article file up the address, never the whole store."""
        with self.lock:
            if self.loaded and ":" not in address and not self._own_layout_problem():
                found = self.revalidate_governing(address)[1]  # a stat per file up the address
                return found, self._index.get(found) if found else None
            if self.loaded or ":" in address or self._own_layout_problem():
                self.refresh()
                found = self.governing(address)
                return found, self._index.get(found) if found else None
            inside = os.path.realpath(self.articles_dir)
            for candidate in ancestors(address):
                path = self.article_file(candidate)
                key = key_of(path)
                if key is not None:
                    self._consider(candidate, path, key, inside)
                    if candidate in self._index:
                        return candidate, self._index[candidate]
            return None, None

    def stat_key(self, address: str) -> Key | None:
        """The stat key of the article's file as it was last read (None: not read)."""
        return self._stat.get(address)

    def held_article(self, address: str) -> Article | None:
        """`article`, taking one `governing_article` just read without loading the store."""
        return self._index.get(address) or self.article(address)

    def below(self, address: str) -> set[str]:
        """The project's own articles at and under `address` (what may govern files there),
        listed from disk for a store not loaded."""
        prefix = address + "/"
        if self.loaded:
            return {a for a in self._index if a == address or a.startswith(prefix)}
        base = self.articles_dir / address
        found = set(self._scan(base)) if base.is_dir() else set()
        return found | ({address} if self.is_article_file(address) else set())

    def _unchanged(self, path: str) -> bool:
        """Whether an article file's stat key is the one it was indexed under (settled)."""
        for sub in self.mounted.values():
            if path.startswith(f"{sub.articles_dir}{os.sep}"):
                return sub._unchanged(path)
        prefix = f"{self.articles_dir}{os.sep}"
        if not path.startswith(prefix) or not path.endswith(".md"):
            return False
        address = path[len(prefix) : -3].replace(os.sep, "/")
        return address not in self._racy and self._stat.get(address) == key_of(path)

    def _refresh_dir(self, directory: Path) -> set[str]:
        for name, sub in self.mounted.items():
            if directory == sub.articles_dir or sub.articles_dir in directory.parents:
                return self.take_mount(name, sub._refresh_dir(directory))
        if directory == self.articles_dir:
            return self._refresh_all()
        if self.articles_dir not in directory.parents:
            if directory == self.journal_dir or self.journal_dir in directory.parents:
                self._journal.invalidate()
            return set()
        prefix = directory.relative_to(self.articles_dir).as_posix() + "/"
        found = {} if self._own_layout_problem() else self._scan(directory)
        inside = os.path.realpath(self.articles_dir)
        changed = {a for a, k in found.items() if self._consider(a, self._file(a), k, inside)}
        for address in [a for a in self._index if a.startswith(prefix) and a not in found]:
            if not self.paths.split(address)[0]:
                self._set(address, None)
                changed.add(address)
        return changed

    def _refresh_all(self) -> set[str]:
        with self.lock:
            changed: set[str] = set()
            own = {a for a in self._index if not self.paths.split(a)[0]}
            # §12: a store whose directories lead outside is not read at all (no articles)
            found = {} if self._own_layout_problem() else self._scan()
            if found and not self.loaded:
                for part in self._cached():
                    self._restore(part.items(), found, changed)
            inside = os.path.realpath(self.articles_dir)
            for address, key in found.items():
                if self._consider(address, self._file(address), key, inside):
                    changed.add(address)
            self._finish(own, found, changed)
            return changed

    def _restore(
        self,
        part: Iterable[tuple[str, tuple[Key, tuple]]],
        found: dict[str, Key],
        changed: set[str],
    ) -> None:
        """Parse cache entries into the index: each entry whose file the scan found under the
        key it was parsed with (cache.py); the rest is read from disk afterwards."""
        for address, (cached, values) in part:
            hit = found.get(address)
            if hit is not None and hit == cached and address not in self._stat:
                self._stat[address] = hit
                self._set(address, cache.restore(address, values, self.bodies, hit))
                changed.add(address)

    def _finish(self, own: set[str], found: dict[str, Key], changed: set[str]) -> None:
        """The end of a whole-store refresh: articles gone, the journal and mounts re-checked,
        the parse cache written when enough was parsed."""
        for address in own - found.keys():
            self._set(address, None)
            changed.add(address)
        self._journal.invalidate()  # the next journal look-up re-checks every entry
        for name, sub in self.mounted.items():
            changed |= self.take_mount(name, sub.refresh())
        self.loaded = True
        if self._parsed >= cache.MIN_PARSED:
            self._save_cache()

    def load_steps(self, step: int = 20, save: bool = True) -> Iterator[int]:
        """The first load in small steps (scan, parse cache, then about `step` articles at a time),
        yielding between them so an event loop answers meanwhile (issue 15)."""
        with self.lock:
            if self.loaded:
                return
            problem = self._own_layout_problem()
            before = {a for a in self._index if not self.paths.split(a)[0]}  # none, as a rule
        found: dict[str, Key] = {}
        if not problem:
            now = time.time()
            real = os.path.realpath(self.articles_dir)
            sweep = functools.partial(fsio.sweep, now=now)
            yield from freshness.scan_steps(self.articles_dir, real, found, sweep, step * 5)
        self._scanned = list(found)
        if found:  # the parse cache a record at a time, never whole, restored `step` at a time
            for part in self._cached():
                entries = list(part.items())
                del part
                for start in range(0, len(entries), step):
                    with self.lock:
                        if self.loaded:
                            return
                        self._restore(entries[start : start + step], found, set())
                    yield step
        inside = os.path.realpath(self.articles_dir)
        items = list(found.items())
        for start in range(0, len(items), step):
            with self.lock:
                if self.loaded:
                    return
                for address, key in items[start : start + step]:
                    self._consider(address, self._file(address), key, inside)
            yield len(items) - start - step
        with self.lock:
            if not self.loaded:
                if not save:
                    self._parsed = 0
                self._finish(before, found, set())

    def _save_cache(self) -> None:
        file = self._cache_file()
        if file is not None:
            self._parsed = 0  # also when the write fails: never retry on every refresh
            cache.save(file, self.root, cache.entries_of(self._index, self._stat, self._racy))

    def _cache_file(self) -> Path | None:
        return cache.cache_file(self.root, self.project)

    def held(self) -> tuple[list[str] | None, list[Article]]:
        """What the store holds now, never loading it: every address (None while a stepped
        load has not finished its scan) and the articles read so far (all, once loaded)."""
        with self.lock:
            if self.loaded:
                return sorted(self._index), list(self._index.values())
            return self._scanned, list(self._index.values())

    def cache_usable(self) -> bool:
        """Whether a parse cache for this store is there to load from (its contents unread)."""
        return cache.usable(self._cache_file(), self.root)

    def _cached(self) -> Iterator[dict[str, tuple[Key, tuple]]]:
        """The parse cache's entries, a record at a time (none when off, missing or damaged)."""
        return cache.records(self._cache_file(), self.root, freshness.RACY_NS)

    def _body_changed(self, path: str) -> None:
        """A body was just read from a file other than the one its article was parsed from: re-read
        the file into the index."""
        if self.loaded and self.lock.acquire(blocking=False):
            try:
                self.revalidate([path])
            finally:
                self.lock.release()

    def load(self) -> None:
        """Read the store now unless it has been (every look-up does so first)."""
        if not self.loaded:
            self._refresh_all()

    def reload_file(self, path: Path) -> set[str]:
        """One article file changed, appeared or vanished (a watcher event); returns addresses."""
        with self.lock:
            self.load()
            path = Path(os.path.abspath(path))
            for name, sub in self.mounted.items():
                if sub.articles_dir in path.parents:
                    return self.take_mount(name, sub.reload_file(path))
            if self.journal_dir in path.parents:
                self._journal.invalidate()
                return set()
            if self.articles_dir not in path.parents or not path.name.endswith(".md"):
                return set()
            address = path.relative_to(self.articles_dir).as_posix()[:-3]
            try:
                if self._own_layout_problem():
                    raise FileNotFoundError(path)
                inside = os.path.realpath(self.articles_dir)
                contained(path, self.articles_dir)
                st = os.stat(path)
                if not S_ISREG(st.st_mode):
                    raise FileNotFoundError(path)  # as the scan: a FIFO or device is no article
            except (OSError, OutsideStore):
                if address in self._index:
                    self._set(address, None)
                    return {address}
                return set()
            return {address} if self._consider(address, path, freshness.key(st), inside) else set()

    def addresses(self) -> list[str]:
        """Every article address, sorted; mount articles as 'name:address'."""
        self.load()
        return sorted(self._index)

    def articles(self) -> list[Article]:
        """Every article, sorted by address."""
        self.load()
        return [self._index[a] for a in sorted(self._index)]

    def article(self, address: str) -> Article | None:
        self.load()
        return self._index.get(address)

    def has(self, address: str) -> bool:
        self.load()
        return address in self._index

    def governing(self, address: str) -> str | None:
        self.load()
        return governing_in(address, self._index)

    def rules_for(self, relpath: str) -> list[str]:
        """The articles that apply to this project-relative file beyond their own address
        (front matter `applies`/`always`, core/reach.py), by address."""
        self.load()
        return reach.matching(self._reach, relpath) if self._reach else []

    def address_of(self, path_or_address: str, *, as_path: bool = False) -> str:
        """What an argument names (§3, §8): exactly an existing article's address names it, else the
        path's address (as_path=True: always the path rule, for a file on disk)."""
        if as_path:
            address = normalise(path_or_address, self.project, self.mounts)
        else:
            address = argument(path_or_address, self.is_article_file, self.project, self.mounts)
        name, rest = self.paths.split(address) if ":" in address else ("", address)
        inner = (self.mounted[name] if name else self)._articles_prefix()
        if inner and rest.startswith(inner):
            rest = rest[len(inner) :]
            return f"{name}:{rest}" if name and rest else rest
        return address

    def is_orphan(self, address: str) -> bool:
        """§6.1 item 5 for an existing article of this store: one directory listing for its own
        asset, and the "did any address ever map" question answered once per store."""
        with self.lock:
            name, _rest = self.paths.split(address)
            article = self.held_article(address)
            return not name and article is not None and self.would_orphan(address, article.scope)

    def would_orphan(self, address: str, scope: str) -> bool:
        """§6.1 item 5 for an article of this `scope` at `address`, as a write sees it."""
        if scope == "rule" or "/" not in address:
            return False
        if self.maps(address) or not asset_folder(self.project, address):
            return False
        if not self._mapped:  # an ancestor's article that maps answers without a whole-store load
            up = list(ancestors(address))[1:]
            self._mapped = any(self.is_article_file(a) and self.maps(a) for a in up)
        if not self._mapped:
            self.load()
            self._mapped = any(self.maps(a) for a in self._index if a != address and ":" not in a)
        return self._mapped
