"""Sorted project paths held compactly: one bytes blob instead of a str object per path."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from itertools import accumulate, count, repeat
from operator import add

CHUNK = 1 << 20  # bytes of a blob split at a time
Blob = bytes | bytearray  # a blob built here stays the bytearray it was built in


def decode(data: Blob) -> str:
    return data.decode("utf-8", "surrogateescape")


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def after(prefix: bytes) -> bytes:
    """The smallest byte string above every string starting with `prefix` ('a/' -> 'a0')."""
    while prefix and prefix[-1] == 0xFF:
        prefix = prefix[:-1]
    return prefix[:-1] + bytes([prefix[-1] + 1]) if prefix else b"\xff" * 4096


def lower(blob: Blob, key: bytes) -> int:
    """Byte offset of the first entry of `blob` (NUL-ended, in byte order) not below `key`;
    len(blob) when there is none. A bisection over byte offsets, snapping to entry starts."""
    lo, hi = 0, len(blob)
    while lo < hi:
        mid = (lo + hi) // 2
        start = blob.rfind(b"\0", lo, mid) + 1 or lo
        end = blob.find(b"\0", start)
        if blob[start:end] < key:
            lo = end + 1
        else:
            hi = start
    return lo


def split_raw(blob: Blob, lo: int = 0, hi: int | None = None) -> Iterator[bytes]:
    """The entries of blob[lo:hi] (NUL-ended), a chunk at a time (never a list of them all)."""
    hi = len(blob) if hi is None else hi
    while lo < hi:
        stop = blob.find(b"\0", min(lo + CHUNK, hi - 1), hi)
        stop = hi - 1 if stop < 0 else stop
        yield from bytes(blob[lo:stop]).split(b"\0")
        lo = stop + 1


def split(blob: Blob, lo: int = 0, hi: int | None = None) -> Iterator[str]:
    """split_raw, decoded a chunk at a time."""
    hi = len(blob) if hi is None else hi
    while lo < hi:
        stop = blob.find(b"\0", min(lo + CHUNK, hi - 1), hi)
        stop = hi - 1 if stop < 0 else stop
        yield from decode(blob[lo:stop]).split("\0")
        lo = stop + 1


class Table:
    """Sorted paths, each with an int and a list of ints: the compact `dict[str, int]` plus
    `dict[str, list[int]]` of the history pass (newest commit, older commits)."""

    __slots__ = ("_at", "_blob", "_extra", "_first", "_starts")

    def __init__(
        self,
        blob: Blob = b"",
        starts: array | None = None,
        first: array | None = None,
        at: array | None = None,
        extra: array | None = None,
    ) -> None:
        self._blob = blob
        self._starts = starts if starts is not None else array("I", [0])  # n + 1 offsets
        self._first = first if first is not None else array("i")  # n ints
        self._at = at if at is not None else array("I", [0])  # n + 1 offsets into _extra
        self._extra = extra if extra is not None else array("i")

    def parts(self) -> tuple[Blob, array, array, array, array]:
        return self._blob, self._starts, self._first, self._at, self._extra

    def valid(self, limit: int) -> bool:
        """Whether the parts agree and every int lies in [0, limit) (a cache file read back:
        an int past the end once failed every later run)."""
        n = len(self._first)
        ints = [part for part in (self._first, self._extra) if part]
        return (
            len(self._starts) == n + 1
            and len(self._at) == n + 1
            and self._starts[0] == 0 == self._at[0]
            and self._starts[n] == len(self._blob)
            and self._at[n] == len(self._extra)
            and all(min(part) >= 0 and max(part) < limit for part in ints)
        )

    def __len__(self) -> int:
        return len(self._first)

    def index(self, path: str) -> int:
        """The path's row, or -1."""
        key = encode(path)
        blob, starts = self._blob, self._starts
        lo = lower_row(blob, starts, key, 0, len(self._first))
        if lo < len(self._first) and blob[starts[lo] : starts[lo + 1] - 1] == key:
            return lo
        return -1

    def get(self, path: str, default: int | None = None) -> int | None:
        row = self.index(path)
        return self._first[row] if row >= 0 else default

    def __getitem__(self, path: str) -> int:
        row = self.index(path)
        if row < 0:
            raise KeyError(path)
        return self._first[row]

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.index(path) >= 0

    def extra(self, path: str) -> list[int]:
        """The path's list of ints ([] when it has none or is absent)."""
        row = self.index(path)
        return self.extra_of(row) if row >= 0 else []

    def first_of(self, row: int) -> int:
        return self._first[row]

    def extra_of(self, row: int) -> list[int]:
        return self._extra[self._at[row] : self._at[row + 1]].tolist()

    def items(self) -> Iterator[tuple[str, int]]:
        """(path, int) in byte order."""
        return zip(split(self._blob), self._first, strict=True)

    def __iter__(self) -> Iterator[str]:
        return split(self._blob)

    def rows(self) -> Iterator[tuple[bytes, int, list[int]]]:
        """(path bytes, int, list of ints) in byte order."""
        for row, (path, first) in enumerate(zip(split_raw(self._blob), self._first, strict=True)):
            yield path, first, self.extra_of(row)

    def raw_items(self) -> Iterator[tuple[bytes, int]]:
        return zip(split_raw(self._blob), self._first, strict=True)


class Builder:
    """A Table from rows added in byte order."""

    def __init__(self) -> None:
        self._buf = bytearray()  # the blob so far (no object per path kept)
        self._starts = array("I", [0])
        self._first = array("i")
        self._at = array("I", [0])
        self._extra = array("i")

    def add(self, path: bytes, first: int, extra: Iterable[int] = ()) -> None:
        self._buf += path
        self._buf.append(0)
        self._starts.append(len(self._buf))
        self._first.append(first)
        self._extra.extend(extra)
        self._at.append(len(self._extra))

    def add_rows(
        self, paths: list[bytes], first: Iterable[int], extra: dict[int, list[int]]
    ) -> None:
        """add() for many rows at once, in C loops: `paths` in byte order, `first` their
        ints, `extra`: row -> its list of ints, for the few rows that have one."""
        base = len(self._buf)
        self._buf += b"\0".join(paths)
        if paths:
            self._buf.append(0)
        self._starts.extend(map(add, accumulate(map(len, paths)), count(base + 1)))
        self._first.extend(first)
        at, done = len(self._extra), 0
        for row in sorted(extra):
            self._at.extend(repeat(at, row - done))
            self._extra.extend(extra[row])
            at += len(extra[row])
            self._at.append(at)
            done = row + 1
        self._at.extend(repeat(at, len(paths) - done))

    def table(self) -> Table:
        blob = self._buf  # kept as is: a copy would double it for a moment
        self._buf = bytearray()
        return Table(blob, self._starts, self._first, self._at, self._extra)


def lower_row(blob: bytes | bytearray, starts: array, key: bytes, lo: int, hi: int) -> int:
    """The first row in [lo, hi) of a sorted path blob whose path is not below `key` (each
    path ends one byte before the next row's start)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if blob[starts[mid] : starts[mid + 1] - 1] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo
