"""The BM25 index file's layout and its reader (core/retrieval/search_file.py writes it): sections
behind a trailer sealed by a CRC-32, read through mmap so a query touches only its terms."""

from __future__ import annotations

import mmap
import os
import struct
import weakref
import zlib
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from canon_ls.core.retrieval.search import SearchIndex

END = b"canon-ls search file 2\n"  # 2: the trailer carries the CRC-32 of all before it
ORDER = 0x0102030405060708  # reads back as itself only in the byte order that wrote it
SECTIONS = (
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
TRAILER = struct.Struct("=dd7q" + "q" * len(SECTIONS))
UTF8 = ("utf-8", "surrogatepass")  # byte order of the encoding is the order of the strings
NONE_STAMP = (-1, 0, 0, 0, 0)
BUFFER = 1 << 20  # bytes gathered before each write


def stamp_ints(stamp: object) -> tuple[int, int, int, int, int]:
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
    return NONE_STAMP


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
            from canon_ls.core.storage.fsio import open_regular

            with open_regular(path) as fh:
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

    def postings(self, tid: int, dead: set[int]) -> tuple[array[int], array[int]]:
        """The term's doc ids and frequencies but those of the `dead` documents, read with
        `pread`: a common term's list is large, and through the mapping it would stay in the
        resident set after the query."""
        at, n = self.post_offs[tid], self.post_counts[tid]
        raw = self.read(at, 6 * n)
        ids, tfs = array("I"), array("H")
        ids.frombytes(raw[: 4 * n])
        tfs.frombytes(raw[4 * n : 6 * n])
        if dead and not dead.isdisjoint(ids):
            keep = [i for i, d in enumerate(ids) if d not in dead]
            return array("I", [ids[i] for i in keep]), array("H", [tfs[i] for i in keep])
        return ids, tfs

    def key_bytes(self, doc: int) -> bytes:
        return self.mm[self._keys + self.key_starts[doc] : self._keys + self.key_starts[doc + 1]]

    def key(self, doc: int) -> str | None:
        raw = self.key_bytes(doc)
        return raw.decode(*UTF8) if raw else None

    def doc_of(self, key: str) -> int:
        """The live document stored under `key`, or -1 (bisection over the sorted keys)."""
        want = key.encode(*UTF8)
        lo, hi = 0, self.n_live
        order = self.order
        while lo < hi:
            mid = (lo + hi) // 2
            if self.key_bytes(order[mid]) < want:
                lo = mid + 1
            else:
                hi = mid
        return int(order[lo]) if lo < self.n_live and self.key_bytes(order[lo]) == want else -1

    def stamp(self, doc: int) -> object:
        return _stamp_of(self.stamps[5 * doc : 5 * doc + 5])

    def live(self) -> Iterator[tuple[str, int]]:
        """(key, doc) of every live document, in key order."""
        for doc in self.order:
            yield self.key_bytes(doc).decode(*UTF8), doc


_CRC_AT = 64  # where the trailer keeps its CRC (after two doubles and six ints)


def sealed(body_crc: int, trailer: bytes) -> int:
    """The CRC-32 of the body and of the trailer with its own CRC field as zeros."""
    return zlib.crc32(trailer[:_CRC_AT] + bytes(8) + trailer[_CRC_AT + 8 :], body_crc)


def _head(mm: mmap.mmap, at: int) -> dict[str, Any] | None:
    """The trailer's figures, checked against the file's size; None when they do not fit."""
    if mm[at + TRAILER.size :] != END:
        return None
    k1, b, version, order, n_docs, n_live, total, n_terms, crc, *offs = TRAILER.unpack_from(mm, at)
    if version != SearchIndex.SNAPSHOT_VERSION or order != ORDER:
        return None
    where = dict(zip(SECTIONS, offs, strict=True))
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
    for name in SECTIONS:  # in order, inside the file, each as large as its counts say
        if where[name] < last or where[name] > at:
            return None
        last = where[name] + sizes.get(name, 0)
    if last > at:
        return None
    with memoryview(mm) as view, view[:at] as body:  # a flipped byte would index past an end
        if sealed(zlib.crc32(body), bytes(mm[at : at + TRAILER.size])) != crc:
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
