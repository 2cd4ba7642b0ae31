"""The BM25 index as one file read through mmap: a query touches only its terms' postings."""

from __future__ import annotations

import contextlib
import gc
import heapq
import os
import tempfile
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from canon_ls.core.retrieval.search import TF_MAX, SearchIndex, best, bm25, tokenize
from canon_ls.core.retrieval.search_disk import (
    BUFFER,
    END,
    NONE_STAMP,
    ORDER,
    SECTIONS,
    TRAILER,
    UTF8,
    IndexFile,
    sealed,
    stamp_ints,
)


class FileIndex:
    """BM25 over an `IndexFile` plus what changed since it was written; the same answers as a
    `SearchIndex` holding the same documents."""

    def __init__(self, base: IndexFile | None, k1: float = 1.2, b: float = 0.75) -> None:
        self.base = base
        self.k1: float = base.k1 if base is not None else k1
        self.b: float = base.b if base is not None else b
        self._first = base.n_docs if base is not None else 0  # the first id of an added doc
        self._dead: set[int] = set()  # the file's documents that no longer count
        self._dead_length = 0
        self._ids: dict[str, int] = {}  # added documents
        self._keys: list[str | None] = []
        self._lengths: array[int] = array("I")
        self._stamps: array[int] = array("q")  # five int64s per added document
        self._terms: dict[int, tuple[str, ...]] = {}  # an added document's terms, to remove it
        self._postings: dict[str, tuple[array[int], array[int]]] = {}
        self._total = 0
        self._norms: array[float] | None = None
        self.bulk = False  # while building: keys come once, no terms kept for removal

    def _base_doc(self, key: str) -> int:
        if self.base is None:
            return -1
        doc = self.base.doc_of(key)
        return -1 if doc in self._dead else doc

    def __len__(self) -> int:
        return (self.base.n_live if self.base is not None else 0) - len(self._dead) + len(self._ids)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (key in self._ids or self._base_doc(key) >= 0)

    def keys(self) -> list[str]:
        out = [] if self.base is None else [k for k, d in self.base.live() if d not in self._dead]
        return out + list(self._ids)

    def slots(self) -> int:
        return self._first + len(self._keys)

    def add(self, key: str, text: str) -> None:
        self.add_tokens(key, tokenize(text))

    def add_tokens(self, key: str, tokens: Iterable[str], stamp: object = None) -> None:
        """Index `tokens` under `key` (replacing what it held); `stamp` is kept for the file."""
        if not self.bulk:
            self.remove(key)
        counts = Counter(tokens)
        length = sum(counts.values())
        doc = self._first + len(self._keys)
        self._ids[key] = doc
        self._keys.append(key)
        self._lengths.append(length)
        self._total += length
        self._stamps.extend(stamp_ints(stamp))
        postings = self._postings
        for term, tf in counts.items():
            plist = postings.get(term)
            tf = min(tf, TF_MAX)  # BM25 saturates long before
            if plist is None:
                postings[term] = (array("I", (doc,)), array("H", (tf,)))
            else:  # ids only grow: appended in order
                plist[0].append(doc)
                plist[1].append(tf)
        if not self.bulk:
            self._terms[doc] = tuple(counts)
        self._norms = None

    def remove(self, key: str) -> None:
        """Forget `key`; unknown keys are ignored."""
        doc = self._ids.pop(key, None)
        if doc is not None:
            self._remove_added(doc)
            return
        self.remove_doc(self._base_doc(key))

    def remove_doc(self, doc: int) -> None:
        """Stop counting the file's document `doc` (-1: nothing)."""
        if doc < 0 or self.base is None or doc in self._dead:
            return
        self._dead.add(doc)
        self._dead_length += self.base.lengths[doc]
        self._norms = None

    def _remove_added(self, doc: int) -> None:
        from bisect import bisect_left

        i = doc - self._first
        terms = self._terms.pop(doc, None)
        if terms is None:  # built in bulk: look through every added list (never in practice)
            terms = tuple(t for t, (ids, _) in self._postings.items() if doc in ids)
        for term in terms:
            ids, tfs = self._postings[term]
            at = bisect_left(ids, doc)
            if at < len(ids) and ids[at] == doc:
                del ids[at]
                del tfs[at]
            if not ids:
                del self._postings[term]
        self._total -= self._lengths[i]
        self._lengths[i] = 0
        self._keys[i] = None
        self._stamps[5 * i : 5 * i + 5] = array("q", NONE_STAMP)
        self._norms = None

    def _key(self, doc: int) -> str | None:
        if doc >= self._first:
            return self._keys[doc - self._first]
        return self.base.key(doc) if self.base is not None else None

    # -- scoring (as SearchIndex._score, term for term) -----------------------------------
    def _norms_now(self) -> array[float]:
        if self._norms is None:
            n = len(self)
            total = self._total
            if self.base is not None:
                total += self.base.total - self._dead_length
            avg = total / n if n else 1.0
            k1, b = self.k1, self.b
            base, slope = k1 * (1 - b), k1 * b / (avg or 1.0)
            norms = array("d")
            if self.base is not None:
                norms.extend([base + slope * length for length in self.base.lengths])
            norms.extend([base + slope * length for length in self._lengths])
            self._norms = norms
        return self._norms

    def _plist(self, term: str) -> tuple[array[int], array[int]] | None:
        ids: array[int] | None = None
        tfs: array[int] | None = None
        if self.base is not None:
            tid = self.base.find(term.encode(*UTF8))
            if tid >= 0:
                ids, tfs = self.base.postings(tid, self._dead)
        added = self._postings.get(term)
        if added is not None:
            ids = ids + added[0] if ids is not None else added[0]
            tfs = tfs + added[1] if tfs is not None else added[1]
        if ids is None or tfs is None or not ids:
            return None
        return ids, tfs

    def _score(self, tokens: Iterable[str]) -> dict[int, float]:
        norms = self._norms_now()
        plists = [p for p in (self._plist(t) for t in set(tokens)) if p]
        return bm25(plists, len(self), self.k1, norms)

    def query(self, text: str, limit: int = 10) -> tuple[list[tuple[str, float]], int]:
        return self.query_tokens(tokenize(text), limit)

    def query_tokens(
        self, tokens: Iterable[str], limit: int = 10
    ) -> tuple[list[tuple[str, float]], int]:
        """The best `limit` (key, score) pairs, best first, and how many documents matched."""
        return best(self._score(tokens), limit, lambda d: self._key(d) or "")


class _Out:
    """Pieces of a file with their offsets, gathered into large writes."""

    def __init__(self) -> None:
        self.pos = 0
        self.crc = 0  # CRC-32 of every byte put so far
        self.buf = bytearray()
        self.at: dict[str, int] = {}

    def put(self, data: bytes | bytearray | memoryview | array[Any]) -> Iterator[bytes]:
        piece = bytes(data) if isinstance(data, array) else data
        self.buf += piece
        self.pos += len(piece)
        self.crc = zlib.crc32(piece, self.crc)
        if len(self.buf) >= BUFFER:
            yield bytes(self.buf)
            self.buf.clear()

    def section(self, name: str) -> Iterator[bytes]:
        yield from self.put(b"\0" * (-self.pos % 8))  # every section 8-aligned
        self.at[name] = self.pos

    def flush(self) -> Iterator[bytes]:
        if self.buf:
            yield bytes(self.buf)
            self.buf.clear()


def pieces(index: FileIndex) -> Iterator[bytes]:
    """`index` (its file and what changed since) as the bytes of a new file, made as written."""
    out, base, dead = _Out(), index.base, index._dead
    slots = index.slots()
    lengths, stamps = array("I"), array("q")
    key_starts, keys = array("Q", [0]), bytearray()
    total = 0
    for doc in range(slots):
        if doc < index._first:
            assert base is not None
            raw = b"" if doc in dead else base.key_bytes(doc)
            length = base.lengths[doc] if raw else 0
            stamp = tuple(base.stamps[5 * doc : 5 * doc + 5]) if raw else NONE_STAMP
        else:
            key = index._keys[doc - index._first]
            raw = key.encode(*UTF8) if key is not None else b""
            length = index._lengths[doc - index._first]
            at = 5 * (doc - index._first)
            stamp = tuple(index._stamps[at : at + 5]) if raw else NONE_STAMP
        lengths.append(length)
        stamps.extend(stamp)
        keys += raw
        key_starts.append(len(keys))
        total += length
    order = array("I", (doc for _, doc in _sorted_live(index)))
    head: tuple[array[Any] | bytearray, ...] = (lengths, stamps, key_starts, keys, order)
    for name, data in zip(SECTIONS[:5], head, strict=True):  # in SECTIONS' own order
        yield from out.section(name)
        yield from out.put(data)
    n_live = len(order)
    del lengths, stamps, key_starts, keys, order, head
    yield from out.section("postings")
    term_starts, terms = array("Q", [0]), bytearray()
    post_offs, post_counts = array("Q"), array("I")
    for term, tid, added in _merged_terms(index):
        ids, tfs = array("I"), array("H")
        if tid >= 0:
            assert base is not None
            ids, tfs = base.postings(tid, dead)
        if added is not None:
            ids += added[0]
            tfs += added[1]
        if not ids:
            continue
        post_offs.append(out.pos)
        post_counts.append(len(ids))
        yield from out.put(ids)
        yield from out.put(tfs)
        terms += term
        term_starts.append(len(terms))
    tail: tuple[array[Any] | bytearray, ...] = (term_starts, terms, post_offs, post_counts)
    for name, data in zip(SECTIONS[6:10], tail, strict=True):
        yield from out.section(name)
        yield from out.put(data)
    yield from out.section("end")
    figures = [SearchIndex.SNAPSHOT_VERSION, ORDER, slots, n_live, total, len(post_offs), 0]
    offsets = [out.at[name] for name in SECTIONS]
    figures[-1] = sealed(out.crc, TRAILER.pack(index.k1, index.b, *figures, *offsets))
    yield from out.put(TRAILER.pack(index.k1, index.b, *figures, *offsets) + END)
    yield from out.flush()


def _sorted_live(index: FileIndex) -> Iterator[tuple[bytes, int]]:
    """(key, doc) of every live document in key order: the file's, already sorted, merged
    with the added ones (at most a chunk while building), so no list of every key is made."""
    base, dead = index.base, index._dead
    added = sorted((k.encode(*UTF8), d) for k, d in index._ids.items())
    if base is None:
        return iter(added)
    return heapq.merge(((base.key_bytes(d), int(d)) for d in base.order if d not in dead), added)


def _merged_terms(
    index: FileIndex,
) -> Iterator[tuple[bytes, int, tuple[array[int], array[int]] | None]]:
    """(term, id in the file or -1, added postings or None), in the terms' byte order."""
    added = sorted((t.encode(*UTF8), t) for t in index._postings)
    base = index.base
    j = 0
    for tid in range(base.n_terms if base is not None else 0):
        assert base is not None
        term = base.term_bytes(tid)
        while j < len(added) and added[j][0] < term:
            yield added[j][0], -1, index._postings[added[j][1]]
            j += 1
        if j < len(added) and added[j][0] == term:
            yield term, tid, index._postings[added[j][1]]
            j += 1
        else:
            yield term, tid, None
    for raw, term_str in added[j:]:
        yield raw, -1, index._postings[term_str]


def write(path: Path | None, index: FileIndex, scratch: Path | None = None) -> IndexFile | None:
    """Write `index` as a new file at `path` (replaced atomically; None or unwritable: an unnamed
    temporary file, in `scratch` if given) and map it; None when no file could be written at all."""
    if path is not None:
        from canon_ls.core.storage import fsio  # the one atomic writer, keeping what it wrote open

        with contextlib.suppress(OSError, ValueError):
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = fsio.atomic_write(path, pieces(index), 0o600, durable=False, keep=True)
            assert fd is not None
            with os.fdopen(fd, "rb") as fh:
                found = IndexFile.of_handle(fh)
            if found is not None:
                return found
    try:
        with tempfile.TemporaryFile(dir=scratch) as fh:
            fh.writelines(pieces(index))
            fh.flush()
            return IndexFile.of_handle(fh)
    except (OSError, ValueError):
        return None


def build(
    path: Path | None, docs: Mapping[str, tuple[object, Callable[[], str | list[str]]]]
) -> FileIndex:
    """The index over `docs` (key -> (stamp, thunk)), reusing the file at `path` for matching stamps
    (None never matches); rewritten only on change, built afresh with many holes."""
    base = IndexFile.open(path) if path is not None else None
    scratch = path.parent if path is not None and path.parent.is_dir() else None
    try:
        index = _reconciled(base, docs, scratch)
    except (UnicodeDecodeError, ValueError, IndexError):  # a damaged file: start over
        index = None
    if index is None:  # more holes than documents worth keeping: start over
        index = _reconciled(None, docs, scratch)
        assert index is not None
    if index.base is base and base is not None and not index._dead and not index._ids:
        return index  # unchanged: the file as it is
    written = write(path, index)
    if written is None:
        return index  # no file at all: the index stays in memory and still answers
    if path is not None and path.suffix != ".bin":
        with contextlib.suppress(OSError):
            os.unlink(path.with_suffix(".bin"))  # the snapshot of earlier versions
    return FileIndex(written)


HOLES = 0.25  # a file rewritten with more holes than this share of its documents is rebuilt
CHUNK = 4000  # documents added in memory before they are written out to a file


def _reconciled(
    base: IndexFile | None,
    docs: Mapping[str, tuple[object, Callable[[], str | list[str]]]],
    scratch: Path | None = None,
) -> FileIndex | None:
    """The file's index with what differs from `docs` done over it; None if too many holes."""
    index = FileIndex(base)
    index.bulk = True
    todo: Iterable[str] = docs
    if base is not None:
        todo = []
        live = base.live()
        cur = next(live, None)
        for key in sorted(docs):
            while cur is not None and cur[0] < key:
                index.remove_doc(cur[1])  # gone
                cur = next(live, None)
            if cur is not None and cur[0] == key:
                stamp = docs[key][0]
                if stamp is None or base.stamp(cur[1]) != stamp:
                    index.remove_doc(cur[1])  # changed (or never to be trusted)
                    todo.append(key)
                cur = next(live, None)
            else:
                todo.append(key)  # new
        while cur is not None:
            index.remove_doc(cur[1])
            cur = next(live, None)
        holes = base.n_docs - base.n_live + len(index._dead)
        if holes > 64 and holes > HOLES * base.n_docs:
            return None
    for key in todo:
        stamp, text = docs[key]
        value = text()
        index.add_tokens(key, tokenize(value) if isinstance(value, str) else value, stamp)
        if len(index._ids) >= CHUNK:
            flushed = write(None, index, scratch)
            if flushed is not None:
                index = FileIndex(flushed)
                index.bulk = True
    index.bulk = False
    return index


def cached_index(
    cache_file: Path | None, docs: Mapping[str, tuple[object, Callable[[], str | list[str]]]]
) -> FileIndex:
    """An index over `docs` (key -> (stamp, thunk giving the text or its tokens)), kept as a file
    read through mmap (this module) and reusing the one already there."""
    with _gc_paused():  # millions of small objects while building: collections only slow it
        return build(cache_file, docs)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
