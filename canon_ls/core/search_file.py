"""The BM25 index as one file read through mmap: a query touches only its terms' postings."""

from __future__ import annotations

import contextlib
import gc
import heapq
import mmap
import os
import struct
import tempfile
import weakref
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from canon_ls.core.search import TF_MAX, SearchIndex, best, bm25, tokenize

END = b"canon-ls search file 2\n"  # 2: the trailer carries the CRC-32 of all before it
_ORDER = 0x0102030405060708  # reads back as itself only in the byte order that wrote it
_SECTIONS = (
    "lengths",
    "stamps",
    "key_starts",
    "keys",
    "order",
    "postings",
    "term_starts",
    "terms",
    "post_offs",
    "post_counts",
    "end",
)
TRAILER = struct.Struct("=dd7q" + "q" * len(_SECTIONS))
_UTF8 = ("utf-8", "surrogatepass")  # byte order of the encoding is the order of the strings
_NONE_STAMP = (-1, 0, 0, 0, 0)
_BUFFER = 1 << 20  # bytes gathered before each write


def _stamp_ints(stamp: object) -> tuple[int, int, int, int, int]:
    """A stamp as five int64s: (kind, values…); kind -1 None, 5 an int, 0-4 a tuple of that
    many ints. Anything else (or too large) is stored as None: never trusted, re-read."""
    lo, hi = -(2**63), 2**63 - 1
    if isinstance(stamp, int) and not isinstance(stamp, bool) and lo <= stamp <= hi:
        return (5, stamp, 0, 0, 0)
    if (
        isinstance(stamp, tuple)
        and len(stamp) <= 4
        and all(isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi for v in stamp)
    ):
        padded = (*stamp, 0, 0, 0, 0)
        return (len(stamp), padded[0], padded[1], padded[2], padded[3])
    return _NONE_STAMP


def _stamp_of(ints: Any) -> object:
    kind = ints[0]
    if kind == 5:
        return ints[1]
    if 0 <= kind <= 4:
        return tuple(ints[1 : 1 + kind])
    return None


class IndexFile:
    """A written index file, mapped read-only."""

    def __init__(self, fd: int, mm: mmap.mmap, head: dict[str, Any]) -> None:
        self.fd, self.mm = fd, mm
        weakref.finalize(self, os.close, fd)
        self.k1, self.b = head["k1"], head["b"]
        self.n_docs, self.n_live, self.total = head["n_docs"], head["n_live"], head["total"]
        self.n_terms = head["n_terms"]
        at = head["at"]
        view = memoryview(mm)
        n, v = self.n_docs, self.n_terms
        self.lengths = view[at["lengths"] : at["lengths"] + 4 * n].cast("I")
        self.stamps = view[at["stamps"] : at["stamps"] + 40 * n].cast("q")
        self.key_starts = view[at["key_starts"] : at["key_starts"] + 8 * (n + 1)].cast("Q")
        self.order = view[at["order"] : at["order"] + 4 * self.n_live].cast("I")
        self.term_starts = view[at["term_starts"] : at["term_starts"] + 8 * (v + 1)].cast("Q")
        self.post_offs = view[at["post_offs"] : at["post_offs"] + 8 * v].cast("Q")
        self.post_counts = view[at["post_counts"] : at["post_counts"] + 4 * v].cast("I")
        self._keys, self._terms = at["keys"], at["terms"]

    @classmethod
    def open(cls, path: Path) -> IndexFile | None:
        """The file at `path`; None when it is missing, damaged or of another version."""
        try:
            with open(path, "rb") as fh:
                return cls.of_handle(fh)
        except (OSError, ValueError):
            return None

    @classmethod
    def of_handle(cls, fh: IO[bytes]) -> IndexFile | None:
        """The file open as `fh` (which the caller still closes: this keeps its own fd)."""
        try:
            size = os.fstat(fh.fileno()).st_size
            tail = TRAILER.size + len(END)
            if size < tail:
                return None
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        head = _head(mm, size - tail)
        if head is None:
            mm.close()
            return None
        try:
            fd = os.dup(fh.fileno())
        except OSError:
            mm.close()
            return None
        try:
            found = cls(fd, mm, head)
        except (ValueError, TypeError):
            os.close(fd)
            return None
        return found if found._sane(head["at"]) else None

    def _sane(self, at: dict[str, int]) -> bool:
        """The offsets inside the file point where they may (a few ms at 50k documents; the
        bytes themselves are trusted, as the file was written whole and renamed)."""
        n, v = self.n_docs, self.n_terms
        ks, ts, offs, counts = self.key_starts, self.term_starts, self.post_offs, self.post_counts
        if ks[0] != 0 or ks[n] > at["order"] - at["keys"] or any(map(int.__gt__, ks, ks[1:])):
            return False
        if ts[0] != 0 or ts[v] > at["post_offs"] - at["terms"] or any(map(int.__gt__, ts, ts[1:])):
            return False
        if any(d >= n for d in self.order) or sum(self.lengths) != self.total:
            return False
        low, high = at["postings"], at["term_starts"]
        return all(low <= o and o + 6 * c <= high for o, c in zip(offs, counts, strict=True))

    def read(self, offset: int, size: int) -> bytes:
        return os.pread(self.fd, size, offset)

    def term_bytes(self, tid: int) -> bytes:
        base = self._terms
        return self.mm[base + self.term_starts[tid] : base + self.term_starts[tid + 1]]

    def find(self, term: bytes) -> int:
        """The term's id, or -1."""
        lo, hi = 0, self.n_terms
        mm, base, starts = self.mm, self._terms, self.term_starts
        while lo < hi:
            mid = (lo + hi) // 2
            if mm[base + starts[mid] : base + starts[mid + 1]] < term:
                lo = mid + 1
            else:
                hi = mid
        if lo < self.n_terms and mm[base + starts[lo] : base + starts[lo + 1]] == term:
            return lo
        return -1

    def postings(self, tid: int) -> tuple[array[int], array[int]]:
        """The term's doc ids and frequencies, read with `pread`: a common term's list is
        large, and through the mapping it would stay in the resident set after the query."""
        at, n = self.post_offs[tid], self.post_counts[tid]
        raw = self.read(at, 6 * n)
        ids, tfs = array("I"), array("H")
        ids.frombytes(raw[: 4 * n])
        tfs.frombytes(raw[4 * n : 6 * n])
        return ids, tfs

    def key_bytes(self, doc: int) -> bytes:
        return self.mm[self._keys + self.key_starts[doc] : self._keys + self.key_starts[doc + 1]]

    def key(self, doc: int) -> str | None:
        raw = self.key_bytes(doc)
        return raw.decode(*_UTF8) if raw else None

    def doc_of(self, key: str) -> int:
        """The live document stored under `key`, or -1 (bisection over the sorted keys)."""
        want = key.encode(*_UTF8)
        lo, hi = 0, self.n_live
        order = self.order
        while lo < hi:
            mid = (lo + hi) // 2
            if self.key_bytes(order[mid]) < want:
                lo = mid + 1
            else:
                hi = mid
        if lo < self.n_live and self.key_bytes(order[lo]) == want:
            return int(order[lo])
        return -1

    def stamp(self, doc: int) -> object:
        return _stamp_of(self.stamps[5 * doc : 5 * doc + 5])

    def live(self) -> Iterator[tuple[str, int]]:
        """(key, doc) of every live document, in key order."""
        for doc in self.order:
            yield self.key_bytes(doc).decode(*_UTF8), doc


_CRC_AT = 64  # where the trailer keeps its CRC (after two doubles and six ints)


def _sealed(body_crc: int, trailer: bytes) -> int:
    """The CRC-32 of the body and of the trailer with its own CRC field as zeros."""
    blank = trailer[:_CRC_AT] + bytes(8) + trailer[_CRC_AT + 8 :]
    return zlib.crc32(blank, body_crc)


def _head(mm: mmap.mmap, at: int) -> dict[str, Any] | None:
    """The trailer's figures, checked against the file's size; None when they do not fit."""
    if mm[at + TRAILER.size :] != END:
        return None
    k1, b, version, order, n_docs, n_live, total, n_terms, crc, *offs = TRAILER.unpack_from(mm, at)
    if version != SearchIndex.SNAPSHOT_VERSION or order != _ORDER:
        return None
    where = dict(zip(_SECTIONS, offs, strict=True))
    sizes = {
        "lengths": 4 * n_docs,
        "stamps": 40 * n_docs,
        "key_starts": 8 * (n_docs + 1),
        "order": 4 * n_live,
        "term_starts": 8 * (n_terms + 1),
        "post_offs": 8 * n_terms,
        "post_counts": 4 * n_terms,
    }
    if where["end"] != at or not 0 <= n_live <= n_docs or n_terms < 0:
        return None
    last = 0
    for name in _SECTIONS:  # in order, inside the file, each as large as its counts say
        if where[name] < last or where[name] > at:
            return None
        last = where[name] + sizes.get(name, 0)
    if last > at:
        return None
    with memoryview(mm) as view, view[:at] as body:  # a flipped byte would index past an end
        if _sealed(zlib.crc32(body), bytes(mm[at : at + TRAILER.size])) != crc:
            return None
    return {
        "k1": k1,
        "b": b,
        "n_docs": n_docs,
        "n_live": n_live,
        "total": total,
        "n_terms": n_terms,
        "at": where,
    }


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

    # -- documents ------------------------------------------------------------------------
    def _base_doc(self, key: str) -> int:
        if self.base is None:
            return -1
        doc = self.base.doc_of(key)
        return -1 if doc in self._dead else doc

    def __len__(self) -> int:
        live = self.base.n_live if self.base is not None else 0
        return live - len(self._dead) + len(self._ids)

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
        self._stamps.extend(_stamp_ints(stamp))
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
        self._stamps[5 * i : 5 * i + 5] = array("q", _NONE_STAMP)
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
            tid = self.base.find(term.encode(*_UTF8))
            if tid >= 0:
                ids, tfs = self.base.postings(tid)
                dead = self._dead
                if dead and not dead.isdisjoint(ids):
                    keep = [i for i, d in enumerate(ids) if d not in dead]
                    ids = array("I", [ids[i] for i in keep])
                    tfs = array("H", [tfs[i] for i in keep])
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


# -- writing ---------------------------------------------------------------------------------
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
        if len(self.buf) >= _BUFFER:
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
            stamp = tuple(base.stamps[5 * doc : 5 * doc + 5]) if raw else _NONE_STAMP
        else:
            key = index._keys[doc - index._first]
            raw = key.encode(*_UTF8) if key is not None else b""
            length = index._lengths[doc - index._first]
            at = 5 * (doc - index._first)
            stamp = tuple(index._stamps[at : at + 5]) if raw else _NONE_STAMP
        lengths.append(length)
        stamps.extend(stamp)
        keys += raw
        key_starts.append(len(keys))
        total += length
    order = array("I", (doc for _, doc in _sorted_live(index)))
    for name, data in (
        ("lengths", lengths),
        ("stamps", stamps),
        ("key_starts", key_starts),
        ("keys", keys),
        ("order", order),
    ):
        yield from out.section(name)
        yield from out.put(data)
    n_live = len(order)
    del lengths, stamps, key_starts, keys, order
    yield from out.section("postings")
    term_starts, terms = array("Q", [0]), bytearray()
    post_offs, post_counts = array("Q"), array("I")
    for term, tid, added in _merged_terms(index):
        ids, tfs = array("I"), array("H")
        if tid >= 0:
            assert base is not None
            ids, tfs = base.postings(tid)
            if dead and not dead.isdisjoint(ids):
                keep = [i for i, d in enumerate(ids) if d not in dead]
                ids = array("I", [ids[i] for i in keep])
                tfs = array("H", [tfs[i] for i in keep])
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
    for name, data in (
        ("term_starts", term_starts),
        ("terms", terms),
        ("post_offs", post_offs),
        ("post_counts", post_counts),
    ):
        yield from out.section(name)
        yield from out.put(data)
    yield from out.section("end")
    figures = [SearchIndex.SNAPSHOT_VERSION, _ORDER, slots, n_live, total, len(post_offs), 0]
    offsets = [out.at[name] for name in _SECTIONS]
    figures[-1] = _sealed(out.crc, TRAILER.pack(index.k1, index.b, *figures, *offsets))
    yield from out.put(TRAILER.pack(index.k1, index.b, *figures, *offsets) + END)
    yield from out.flush()


def _sorted_live(index: FileIndex) -> Iterator[tuple[bytes, int]]:
    """(key, doc) of every live document in key order: the file's, already sorted, merged
    with the added ones (at most a chunk while building), so no list of every key is made."""
    base, dead = index.base, index._dead
    added = sorted((k.encode(*_UTF8), d) for k, d in index._ids.items())
    kept: Iterator[tuple[bytes, int]] = iter(())
    if base is not None:
        kept = ((base.key_bytes(d), int(d)) for d in base.order if d not in dead)
    return heapq.merge(kept, added)


def _merged_terms(
    index: FileIndex,
) -> Iterator[tuple[bytes, int, tuple[array[int], array[int]] | None]]:
    """(term, id in the file or -1, added postings or None), in the terms' byte order."""
    added = sorted((t.encode(*_UTF8), t) for t in index._postings)
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
        from canon_ls.core import fsio  # the one atomic writer, keeping what it wrote open

        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = fsio.atomic_write(path, pieces(index), 0o600, durable=False, keep=True)
            assert fd is not None
            with os.fdopen(fd, "rb") as fh:
                found = IndexFile.of_handle(fh)
            if found is not None:
                return found
        except (OSError, ValueError):
            pass
    try:
        with tempfile.TemporaryFile(dir=scratch) as fh:
            fh.writelines(pieces(index))
            fh.flush()
            return IndexFile.of_handle(fh)
    except (OSError, ValueError):
        return None


def _unlink(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


# -- building --------------------------------------------------------------------------------
def build(
    path: Path | None, docs: Mapping[str, tuple[object, Callable[[], str | list[str]]]]
) -> FileIndex:
    """The index over `docs` (key -> (stamp, thunk giving the text or its tokens)), reusing
    the file at `path`: documents whose stamp matches the file's are not read again (a None
    stamp never matches), the rest are added, vanished ones dropped, and a new file is
    written only when something changed. A file with many holes is built afresh."""
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
        _unlink(path.with_suffix(".bin"))  # the snapshot of earlier versions
    return FileIndex(written)


HOLES = 0.25  # a file rewritten with more holes than this share of its documents is rebuilt
CHUNK = 4000  # documents added in memory before they are written out to a file


def _reconciled(
    base: IndexFile | None,
    docs: Mapping[str, tuple[object, Callable[[], str | list[str]]]],
    scratch: Path | None = None,
) -> FileIndex | None:
    """The file's index with what differs from `docs` done over it; None when that would leave too
    many holes."""
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
