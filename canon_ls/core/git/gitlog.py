"""The history pass's output (`git log -z --name-status`, core/git/changes.py) as a compact
History."""

from __future__ import annotations

import os
import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from itertools import compress, count, islice, repeat
from operator import eq, gt, le
from typing import BinaryIO, NamedTuple

from canon_ls.core.git.pathtable import CHUNK, Builder, Table, decode, encode

_PART_BYTES = 4 << 20  # output bytes per range of paths (the paths of one range parse at once)
_WINDOW = 1 << 14  # bytes read at a sampled position to find a path there
# a path field follows a status field (the first of a commit's after a newline)
_PATH = re.compile(rb"\0\n?[A-Z][0-9]*\0([^\0]+)\0")


class Commit(NamedTuple):
    """One commit of the history pass: committer time, abbreviated hash, author, subject.
    Commits of one second are ordered by history: each one newer in the log than another of
    its second is a tick (1/4096 s) later (SPEC §9: "later" follows history)."""

    time: float
    hash: str
    author: str
    subject: str


class History(NamedTuple):
    """What one `git log --name-status` pass says about every path it saw."""

    commits: list[Commit]
    newest: Table
    gone: dict[str, list[int]]


def empty() -> History:
    return History([], Table(), {})


def _commit(header: str) -> Commit:
    """One header field of the pass: '<ct> <hash>\\x1f<author>\\x1f<subject>' (the older
    '<ct>' alone gives empty parts)."""
    stamp, _, rest = header.partition(" ")
    short, _, rest = rest.partition("\x1f")
    author, _, subject = rest.partition("\x1f")
    try:
        ct = int(stamp)
    except ValueError:
        ct = 0
    return Commit(ct, short, author, subject)


Output = bytes | BinaryIO  # one git output: in memory, or the file git wrote it to


def _size(out: Output) -> int:
    return len(out) if isinstance(out, bytes) else os.fstat(out.fileno()).st_size


def _window(out: Output, pos: int) -> bytes:
    """_WINDOW bytes of the output from `pos` (a file is read there, not through)."""
    if isinstance(out, bytes):
        return out[pos : pos + _WINDOW]
    return os.pread(out.fileno(), _WINDOW, pos)


def _blocks(out: Output) -> Iterator[bytes]:
    """The output a CHUNK of bytes at a time (a file from its start)."""
    if isinstance(out, bytes):
        for lo in range(0, len(out), CHUNK):
            yield out[lo : lo + CHUNK]
        return
    out.seek(0)
    while block := out.read(CHUNK):
        yield block


def _field_lists(outs: Sequence[Output]) -> Iterator[list[bytes]]:
    """The outputs laid end to end, split at NUL (what b''.join(outs).split(b'\\0') gives),
    a block's fields at a time: never the whole text in memory."""
    rest = b""
    for out in outs:
        for block in _blocks(out):
            parts = (rest + block if rest else block).split(b"\0")
            rest = parts.pop()  # the field the next block goes on with
            yield parts
    yield [rest]


def _bounds(outs: Sequence[Output]) -> list[bytes]:
    """Path ranges for the parse: [b'', cut1, ..., cutN], from a sample of paths, so that
    each range holds about _PART_BYTES of the output."""
    sizes = [_size(out) for out in outs]
    total = sum(sizes)
    parts = 1 + total // _PART_BYTES
    if parts == 1:
        return [b""]
    step = max(1, total // (parts * 32))
    sample = []
    for out, size in zip(outs, sizes, strict=True):
        for pos in range(0, size, step):
            m = _PATH.search(_window(out, pos))
            if m is not None:
                sample.append(m.group(1))
    sample.sort()
    if not sample:
        return [b""]
    cuts = {sample[len(sample) * k // parts] for k in range(1, parts)}
    return [b"", *sorted(cuts - {b""})]


def parse_outputs(outs: Sequence[Output], order: Sequence[bytes] | None = None) -> History:
    """`git log -z --name-status` in the pass's format -> History, the outputs laid end to end,
    each given as bytes or as the file git wrote it to (read a block at a time): one log, or
    with `order` (every commit's header field, in the log's order) logs of disjoint paths,
    each listing its commits in that order (core/git/changes.py `_start_whole`)."""
    bounds = _bounds(outs)
    index_of = None if order is None else {header: i for i, header in enumerate(order)}
    commits, ranges, used = _walk(outs, bounds, index_of)
    if order is not None:  # the commits that touched a path, in the log's order
        commits, ranges = _renumbered(order, used, ranges)
    commits = ticked(commits)
    builder = Builder()
    gone: dict[str, list[int]] = {}
    times = [c.time for c in commits]
    for k in range(len(ranges)):
        paths, events = ranges[k]
        ranges[k] = (bytearray(), array("i"))  # each range dropped as it is parsed
        blob = bytes(paths)
        del paths
        _parse_range(blob, events, times, builder, gone)
        del blob, events
    return History(commits, builder.table(), gone)


def _renumbered(
    order: Sequence[bytes], used: set[int], ranges: list[tuple[bytearray, array]]
) -> tuple[list[Commit], list[tuple[bytearray, array]]]:
    """The commits of `order` that touched a path (`used`), in order, the events renumbered."""
    kept = sorted(used)
    new = dict(zip(kept, range(len(kept)), strict=True))
    for _, events in ranges:
        events[:] = array("i", [new[e] if e >= 0 else ~new[~e] for e in events])
    return [_commit(decode(order[i])) for i in kept], ranges


def _walk(
    outs: Sequence[Output], bounds: list[bytes], index_of: dict[bytes, int] | None = None
) -> tuple[list[Commit], list[tuple[bytearray, array]], set[int]]:
    """The commits that touched a path, and per range of `bounds` its events in output order: the
    paths NUL-ended in one bytearray, an int per event (commit index, ~index for a deletion;
    with `index_of`, the index of the commit's header there, each one used also returned)."""
    commits: list[Commit] = []
    ranges = [(bytearray(), array("i")) for _ in bounds]
    cuts = bounds[1:]
    idx = -1  # the current commit's index (commits with paths only)
    used: set[int] = set()
    fresh = False  # a header was read, its commit not yet counted
    header = b""
    want_header = False
    carry: list[bytes] = []  # a status whose path is in the next block
    for parts in _field_lists(outs):
        if carry:
            parts = [*carry, *parts]
            carry = []
        at, n = 0, len(parts)
        while at < n:
            if want_header:
                header, want_header, fresh = parts[at], False, True
                at += 1
                continue
            try:
                stop = parts.index(b"", at)
            except ValueError:
                stop = n
            pairs = (stop - at) // 2 * 2
            if pairs:
                if fresh and index_of is not None:
                    fresh, idx = False, index_of[header]
                    used.add(idx)
                elif fresh:
                    fresh = False
                    idx += 1
                    commits.append(_commit(decode(header)))
                end = at + pairs
                _route(parts[at:end:2], parts[at + 1 : end : 2], idx, cuts, ranges)
            if stop == n:
                carry = parts[at + pairs : n]
                break
            want_header = True
            at = stop + 1
    return commits, ranges, used


def _route(
    statuses: list[bytes],
    paths: list[bytes],
    idx: int,
    cuts: list[bytes],
    ranges: list[tuple[bytearray, array]],
) -> None:
    """One commit's run of (status, path) pairs into the ranges' events."""
    if not cuts:
        spans = [(0, 0, len(paths))]
    elif all(map(le, paths, islice(paths, 1, None))):  # in byte order: a slice per range
        at = [0, *(bisect_left(paths, cut) for cut in cuts), len(paths)]
        spans = [(k, at[k], at[k + 1]) for k in range(len(ranges)) if at[k] < at[k + 1]]
    else:
        for status, path in zip(statuses, paths, strict=True):
            buf, events = ranges[bisect_right(cuts, path)]
            buf += path
            buf.append(0)
            events.append(~idx if status[-1:] == b"D" else idx)
        return
    some_deleted = b"D" in statuses or b"\nD" in statuses
    for k, lo, hi in spans:
        buf, events = ranges[k]
        buf += b"\0".join(paths[lo:hi])
        buf.append(0)
        base = len(events)
        events.extend(repeat(idx, hi - lo))
        if some_deleted:
            for j in range(lo, hi):
                if statuses[j][-1:] == b"D":
                    events[base + j - lo] = ~idx


def _parse_range(
    blob: bytes, events: array, times: list[float], builder: Builder, gone: dict[str, list[int]]
) -> None:
    """One range's events (in the output's order) into `builder` (in byte order) and `gone`."""
    paths = blob.split(b"\0")
    paths.pop()  # the blob ends in NUL
    order = sorted(range(len(paths)), key=paths.__getitem__)
    keys = list(map(paths.__getitem__, order))
    del paths
    idx = array("i", map(events.__getitem__, order))
    del order
    drop: list[int] = []  # rows to leave out: deleted paths, and folded events
    extra: dict[int, list[int]] = {}
    gone_rows: dict[int, list[int]] = {}
    start = size = -1  # the rows of one path with several events: start .. start+size-1
    for row in compress(count(), map(eq, keys, islice(keys, 1, None))):  # same as the next
        if start >= 0 and row == start + size - 1:
            size += 1
            continue
        if start >= 0:
            _fold(idx, start, size, times, drop, extra, gone_rows)
        start, size = row, 2
    if start >= 0:
        _fold(idx, start, size, times, drop, extra, gone_rows)
    folded = set(drop)
    for row in compress(count(), map(gt, repeat(0), idx)):  # a path deleted by its one event
        if row not in folded:
            gone_rows[row] = [~idx[row]]
            drop.append(row)
    if drop:
        drop.sort()
        for row in sorted(gone_rows):
            gone[decode(keys[row])] = gone_rows[row]
        keep = bytearray(b"\1") * len(keys)
        for row in drop:
            keep[row] = 0
        keys = list(compress(keys, keep))
        idx = array("i", compress(idx, keep))
        extra = {row - bisect_left(drop, row): e for row, e in extra.items()}
    builder.add_rows(keys, idx, extra)


def _fold(
    idx: array,
    start: int,
    size: int,
    times: list[float],
    drop: list[int],
    extra: dict[int, list[int]],
    gone_rows: dict[int, list[int]],
) -> None:
    """The rows start..start+size-1 (one path's events, in the output's order; ~commit for
    a deletion) folded into the first: its newest commit is the first listed, unless one
    listed later was committed later (clock skew), then the other commits in order."""
    newest = -1
    older: list[int] = []
    deleted = False
    for event in idx[start : start + size]:
        commit = ~event if event < 0 else event
        if newest < 0:
            newest, deleted = commit, event < 0
        elif times[commit] > times[newest]:
            older.insert(0, newest)
            newest, deleted = commit, event < 0
        else:
            older.append(commit)
    drop.extend(range(start + 1, start + size))
    if deleted:
        drop.append(start)
        gone_rows[start] = [newest, *older]
    else:
        idx[start] = newest
        extra[start] = older


def merged(old: History, new: History) -> History:
    """The history of OLD..HEAD laid over the cached one: every new commit is newer."""
    offset = len(old.commits)
    updates: dict[bytes, tuple[list[int], bool]] = {}
    for name, events, deleted in events_of(new):
        updates[encode(name)] = ([i + offset for i in events], deleted)
    keys = sorted(updates)
    gone = dict(old.gone)
    builder = Builder()

    def place(key: bytes, before: list[int]) -> None:
        shifted, deleted = updates[key]
        every = shifted + before
        if deleted:
            gone[decode(key)] = every
        else:
            builder.add(key, every[0], every[1:])

    u = 0
    for path, first, rest in old.newest.rows():
        while u < len(keys) and keys[u] < path:
            place(keys[u], gone.pop(decode(keys[u]), []))
            u += 1
        if u < len(keys) and keys[u] == path:
            place(path, [first, *rest])
            u += 1
        else:
            builder.add(path, first, rest)
    for key in keys[u:]:
        place(key, gone.pop(decode(key), []))
    top = max((c.time for c in old.commits), default=0.0)
    return History(old.commits + ticked(new.commits, top), builder.table(), gone)


def ticked(commits: list[Commit], after: float = 0.0) -> list[Commit]:
    """Commits (newest first) with a tick per commit newer than another of its second, going
    on from `after` (the newest time of the history they extend)."""
    out = commits[:]
    second, k = int(after), round((after - int(after)) * TICKS) if after else -1
    for i in range(len(out) - 1, -1, -1):
        t = int(out[i].time)
        k = min(k + 1, TICKS - 1) if t == second else 0
        second = t
        out[i] = out[i]._replace(time=t + k / TICKS)
    return out


TICKS = 4096


def events_of(h: History) -> Iterator[tuple[str, list[int], bool]]:
    """(path, its commits newest first, whether the newest deleted it) for every path."""
    for raw, first, rest in h.newest.rows():
        yield decode(raw), [first, *rest], False
    for name, events in h.gone.items():
        yield name, events, True
