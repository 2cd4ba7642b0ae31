"""The journal as the store reads it (SPEC §6 journal, search): entries listed, read and grouped by
subject, kept until the directory changes; what was read persists in a sealed file beside the parse
cache, so a new process re-reads only entries whose stat key moved (a damaged file: a full read)."""

from __future__ import annotations

import contextlib
import os
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from canon_ls.core.storage import cache, freshness, fsio
from canon_ls.core.storage import journal as jrn
from canon_ls.core.storage.address import OutsideStore
from canon_ls.core.storage.freshness import Key
from canon_ls.core.storage.journal import JournalEntry

if TYPE_CHECKING:  # imported when the journal is first searched
    from canon_ls.core.retrieval.search import SearchIndex


def _row(entry: JournalEntry) -> str:
    """jrn.order() as one string that sorts the same (the subjects file holds these)."""
    date, logged, number, mtime, name = jrn.order(entry)
    return f"{date}\1{logged}\1{number:09d}\1{mtime:020d}\1{name}"


def _name(row: str) -> str:
    return row.rpartition("\1")[2]


_SHARDS = tuple(f".{i}" for i in range(16))  # the subjects files' shards, by subject
Saved = tuple[str, dict[str, str], Key] | None  # the subjects files' names, marks, key


def shard_of(subject: str) -> str:
    """The suffix of the subjects file holding `subject`'s rows."""
    return _SHARDS[zlib.crc32(subject.encode("utf-8", "replace")) % len(_SHARDS)]


class JournalIndex:
    """One journal directory: its entries, their bodies, the by-subject grouping and search."""

    MIN_ENTRIES = 50  # a shorter journal reads faster than its cache file is written
    _SOURCES = (
        "canon_ls.core.storage.journal",
        "canon_ls.core.storage.journal_index",
        "canon_ls.core.storage.article",
        "canon_ls.core.storage.freshness",
    )

    def __init__(
        self, directory: Path, max_bytes: int, blocked: Callable[[], str], file: Path | None = None
    ) -> None:
        self.directory = directory
        self._file = file  # the sealed cache of entries read (None: off), loaded on first use
        self.parsed = 0  # entries read from their files by this process
        self._max_bytes = max_bytes
        self._blocked = blocked  # the store's layout problem: nothing is read through it (§12)
        self._entries: dict[str, JournalEntry] = {}
        self._by_subject: dict[str, list[str]] | None = None  # address -> names, newest first
        self._changes = 0  # entries read or dropped so far (a grouping built meanwhile is old)
        self._text: dict[str, str] = {}
        self._keys: dict[str, Key] = {}  # each entry's stat key when it was read
        self._search: SearchIndex | None = None
        self._dir_key: Key | None = None
        self._count: tuple[Key | None, int] = (None, 0)  # (dir key, entries)
        self._held: tuple[Key, dict[str, str]] | None = None  # the subjects file's

    def invalidate(self) -> None:
        """The next look-up re-checks every entry (Store.refresh, a watcher's event)."""
        self._dir_key = self._held = None

    def refresh(self) -> None:
        """Re-list the journal unless its directory is unchanged (new entries change it)."""
        for _ in self.refresh_steps(1 << 62):
            pass

    def refresh_steps(self, step: int) -> Iterator[int]:
        """`refresh`, yielding after every `step` entries read (the language server reads a 5k-entry
        journal between requests: 0.3 s in one go)."""
        dir_key = self._key()
        if dir_key is not None and dir_key == self._dir_key:
            return
        recent = dir_key is not None and not freshness.settled(dir_key)
        self._dir_key = None
        now = time.time_ns()
        found: dict[str, Key] = {}
        saved = self._restore() if self._file is not None and not self._entries else None
        if saved is not None and saved[0] == dir_key and not recent:
            found = {name: k for name, (k, _) in saved[1].items()}  # the directory is unchanged
        else:
            yield from self._listing_steps(now, found, step * 5)
        cached = saved[1] if saved is not None else {}
        parsed, gone = self.parsed, [n for n in self._entries if n not in found]
        for name in gone:
            del self._entries[name]
            self._keys.pop(name, None)
            self._by_subject = None
            self._changes += 1
            self._text.pop(name, None)
            if self._search is not None:
                self._search.remove(name)
        inside, where = os.path.realpath(self.directory), str(self.directory)
        read = 0
        for name, k in found.items():
            if name in self._entries and self._keys.get(name) == k and freshness.settled(k, now):
                continue
            hit, got = cached.get(name), None
            if hit is not None and hit[0] == k:  # as an earlier process read it (no body)
                date, subject, source, session, logged = hit[1]
                got = JournalEntry(name, where, date, subject, source, session, *k[:2], logged), ""
            else:
                read += 1
                if read % step == 0:
                    yield len(found) - read
                if (got := self._read(name, k, inside)) is None:
                    continue
                self._text[name] = got[1]
            entry, body = got
            self._entries[name] = entry
            self._keys[name] = k
            self._by_subject = None
            self._changes += 1
            if self._search is not None:
                self._search.add(name, f"{' '.join(entry.subject)} {body}")
        self._dir_key = None if recent else dir_key
        if self._file and (gone or self.parsed > parsed) and len(found) >= self.MIN_ENTRIES:
            self._save(now, self._dir_key)

    def _read(self, name: str, k: Key, inside: str) -> tuple[JournalEntry, str] | None:
        """An entry and its body from its file (None when it cannot be read)."""
        path = self.directory / name
        try:
            data, _ = fsio.read_regular(path, self._max_bytes, k[1], inside=inside)
        except (OSError, OutsideStore):
            return None
        self.parsed += 1
        return jrn.entry_of(name, path, data, k[0], k[1])

    def _restore(self) -> tuple[Key | None, dict[str, tuple[Key, tuple]]]:
        """(the directory's key when saved, name -> (stat key, fields)) from the cache file:
        entries settled when it was written, nothing from a file damaged or not ours."""
        with contextlib.suppress(OSError, ValueError, TypeError, EOFError):
            stamp, where, dir_key, saved = cache.read_sealed(self._file)
            if stamp == cache.fingerprint(self._SOURCES) and where == str(self.directory):
                return dir_key, {
                    n: e for n, e in saved.items() if len(e[0]) == 4 and len(e[1]) == 5
                }
        return None, {}

    def _save(self, now: int, dir_key: Key | None) -> None:
        """Write the settled entries read for the next process, and the directory's key when every
        entry is in (the next process then lists nothing); never raises."""
        limit = now - freshness.RACY_NS
        saved = {
            name: (k, (e.date, e.subject, e.source, e.session, e.logged))
            for name, e in self._entries.items()
            if (k := self._keys[name]) and max(k[0], k[3]) < limit
        }
        whole = dir_key if len(saved) == len(self._entries) else None
        if self._file is not None:
            data = (cache.fingerprint(self._SOURCES), str(self.directory), whole, saved)
            cache.write_sealed(self._file, data)

    def _key(self) -> Key | None:
        """What a new, removed or renamed entry changes: the directory's stat key (its
        mtime), trusted once settled by core's one racy rule."""
        try:
            return freshness.key(os.stat(self.directory))
        except OSError:
            return None

    def _listing_steps(self, now: int, found: dict[str, Key], step: int) -> Iterator[int]:
        """Entry file name -> stat key into `found`, yielding after every `step` entries (a stat
        each: 25k entries took 0.14 s in one go); the tool's own old temp files are swept."""
        if self._blocked():
            return
        with contextlib.suppress(OSError), os.scandir(self.directory) as it:
            for n, entry in enumerate(it, 1):
                if n % step == 0:
                    yield n
                name = entry.name
                if name.endswith(".md") and entry.is_file(follow_symlinks=False):
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    found[name] = freshness.key(st)
                elif name.endswith(".tmp") and fsio.is_temp(name):
                    fsio.sweep(entry.path, now / 1e9)

    def entries(self) -> list[JournalEntry]:
        """Every entry, newest first (by day, recorded instant, file time, name)."""
        self.refresh()
        return jrn.newest_first(self._entries.values())

    def count(self) -> int:
        """How many entries the journal holds (a directory listing, kept while the directory
        is unchanged and settled: inlay hints ask on every request; nothing is read)."""
        key = self._key()
        if key is not None and self._count[0] == key:
            return self._count[1]
        try:
            with os.scandir(self.directory) as it:
                n = sum(1 for e in it if e.name.endswith(".md"))
        except OSError:
            return 0
        recent = key is not None and not freshness.settled(key)
        self._count = (None if recent else key, n)
        return n

    def names(self, address: str) -> list[str]:
        """Every entry file name whose subject names `address`, newest first (from the grouping once
        built, else from the entries that name it: a process asking once sorts nothing)."""
        quick = self._quick_names(address) if not self._entries and self._file else None
        if quick is not None:
            return quick
        self.refresh()
        if self._by_subject is not None:
            return self._by_subject.get(address, [])
        about = [e for e in self._entries.values() if address in e.subject]
        return [e.name for e in jrn.newest_first(about)]

    def _subjects_file(self, part: str = "") -> Path:
        return Path(str(self._file).removesuffix(".bin") + f"-subjects{part}.bin")

    def _quick_names(self, address: str) -> list[str] | None:
        """names() from the sealed subjects files (each subject's entries in journal order, in 16
        shards by subject) and, unless the directory's settled key is the one they were saved at,
        one listing of names: only entries added since are read, and only the shards they and
        `address` fall in (a read about one article at 25k entries reads no other; without the
        files, every one). None: blocked or unreadable."""
        dir_key, held = self._key(), self._held
        if held is not None and dir_key == held[0] and freshness.settled(held[0]):
            return [_name(r) for r in held[1].get(address, "").split("\n") if r]  # a server
        try:
            stamp, where, saved_key, marks = cache.read_sealed(self._subjects_file())
            if (stamp, where) != (cache.fingerprint(self._SOURCES), str(self.directory)):
                raise ValueError(where)
            if dir_key is not None and saved_key == dir_key and freshness.settled(dir_key):
                part = self._shards({shard_of(address)}, marks)  # no entry came or went
                return [_name(r) for r in part.get(address, "").split("\n") if r]
            mark, known = cache.read_sealed(self._subjects_file(".known"))
            if mark != marks[".known"]:
                raise ValueError(mark)
            return self._regroup(address, dir_key, (known, marks, saved_key))
        except (OSError, ValueError, TypeError, EOFError, KeyError):
            return self._regroup(address, dir_key, None)  # none, damaged or another's

    def _shards(self, suffixes: Iterable[str], marks: dict[str, str]) -> dict[str, str]:
        """The rows of the subjects in these shards; ValueError when one is not the save the
        head names (damaged, or another process's save under way)."""
        grouped: dict[str, str] = {}
        for suffix in suffixes:
            mark, part = cache.read_sealed(self._subjects_file(suffix))
            if mark != marks[suffix]:
                raise ValueError(suffix)
            grouped.update(part)
        return grouped

    def _regroup(self, address: str, dir_key: Key | None, saved: Saved) -> list[str] | None:
        """_quick_names past its fast path: `saved` (known names, marks, key) from the files, or
        None: every entry is read."""
        known_names, marks, saved_key = saved or ("", None, None)
        try:
            listed = set() if self._blocked() else set(os.listdir(self.directory))
        except OSError:
            return None
        listed = {n for n in listed if n.endswith(".md")}
        known, now, settled = set(known_names.split("\0")) - {""}, time.time_ns(), bool(listed)
        gone, added, inside = known - listed, listed - known, os.path.realpath(self.directory)
        entries = []
        for name in sorted(added):
            k = freshness.key_of(self.directory / name)
            if k is None or (got := self._read(name, k, inside)) is None:
                return None
            settled = settled and freshness.settled(k, now)  # else kept for this answer only
            entries.append(got[0])
        wanted = set(_SHARDS) if gone or marks is None else {shard_of(address)}
        wanted |= {shard_of(s) for e in entries for s in e.subject}
        grouped = self._shards(wanted, marks) if marks is not None else {}
        for subject, rows in grouped.items() if gone else ():
            grouped[subject] = "\n".join(r for r in rows.split("\n") if _name(r) not in gone)
        for entry in entries:
            for subject in entry.subject:
                merged = sorted([_row(entry), *filter(None, grouped.get(subject, "").split("\n"))])
                grouped[subject] = "\n".join(reversed(merged))
        sure = settled and dir_key is not None and freshness.settled(dir_key, now)
        if sure and (gone or added or saved_key != dir_key) and len(listed) >= self.MIN_ENTRIES:
            self._save_subjects(listed, grouped, dir_key, wanted, marks or {})
        whole = len(wanted) == len(_SHARDS)  # (else only some subjects are held here)
        self._held = (dir_key, grouped) if settled and dir_key and whole else None
        return [_name(r) for r in grouped.get(address, "").split("\n") if r]

    def _save_subjects(
        self,
        known: Iterable[str],
        grouped: dict[str, str],
        key: Key | None,
        written: set[str],
        marks: dict[str, str],
    ) -> None:
        """The shards `written` (`grouped` holds their subjects) and the names first, then the
        head naming each file's save (a reader checks the marks)."""
        mark = f"{time.time_ns()}-{os.getpid()}"
        shards: dict[str, dict[str, str]] = {suffix: {} for suffix in written}
        for subject, rows in grouped.items():
            shards[shard_of(subject)][subject] = rows
        for suffix, part in shards.items():
            cache.write_sealed(self._subjects_file(suffix), (mark, part))
        cache.write_sealed(self._subjects_file(".known"), (mark, "\0".join(known)))
        marks = {**marks, **dict.fromkeys([*written, ".known"], mark)}
        stamp = cache.fingerprint(self._SOURCES)
        cache.write_sealed(self._subjects_file(), (stamp, str(self.directory), key, marks))

    def group_steps(self, step: int) -> Iterator[int]:
        """Build the by-subject grouping of `names`, yielding every `step` entries (one sort of 25k
        held an event loop 75 ms): each subject's names newest first, as one sort would."""
        if self._by_subject is not None:
            return
        entries, changes = list(self._entries.values()), self._changes
        keyed: dict[str, list[tuple[tuple[str, str, int, int, str], str]]] = {}
        for n, entry in enumerate(entries, 1):
            if n % step == 0:
                yield n
            order = jrn.order(entry)  # jrn.newest_first's order
            for subject in entry.subject:
                keyed.setdefault(subject, []).append((order, entry.name))
        grouped: dict[str, list[str]] = {}
        done = 0
        for subject, items in keyed.items():
            items.sort(reverse=True)
            grouped[subject] = [name for _, name in items]
            done += len(items)
            if done >= step:
                done = 0
                yield 0
        if changes == self._changes:  # no entry read or dropped meanwhile
            self._by_subject = grouped

    def body(self, entry: JournalEntry) -> str:
        """An entry's body (only search shows journal contents): kept once read, read from
        its file when the entry came from the cache file."""
        text = self._text.get(entry.name)
        if text is None:
            self.refresh()
            text = self._text.get(entry.name)
        k = self._keys.get(entry.name)
        if text is None and k is not None:
            got = self._read(entry.name, k, os.path.realpath(self.directory))
            text = self._text[entry.name] = got[1] if got else ""
        return text or ""

    def search(self, query: str, limit: int) -> tuple[list[tuple[JournalEntry, float]], int]:
        """BM25 over entries (subject and body)."""
        self.refresh()
        if self._search is None:
            from canon_ls.core.retrieval.search import SearchIndex

            index = SearchIndex()
            for name, entry in self._entries.items():
                index.add(name, f"{' '.join(entry.subject)} {self.body(entry)}")
            self._search = index
        hits, total = self._search.query(query, limit)
        return [(self._entries[name], score) for name, score in hits], total
