"""The history pass's output (`git log -z --name-status`, core/changes.py) as a compact History.

At 500k files the pass names ~550k paths; held as dicts of str they cost ~100 MB, and parsing
them as one decoded str split into a list cost twice that again. Here the paths end up in one
sorted blob with an int array (core/pathtable.py), and the parse never holds more than the
output bytes plus one range of paths at a time: a big output is read in a few passes, each
keeping only the paths of its own byte range, which then append to the blob in order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from canon_ls.core.pathtable import CHUNK, Builder, Table, decode, encode

_PART_BYTES = 4 << 20  # output bytes per range of paths (one pass over the output each)
# a path field follows a status field (the first of a commit's after a newline)
_PATH = re.compile(rb"\0\n?[A-Z][0-9]*\0([^\0]+)\0")


class Commit(NamedTuple):
    """One commit of the history pass: committer time, abbreviated hash, author, subject."""

    time: int
    hash: str
    author: str
    subject: str


class Older:
    """history.older as a mapping: path -> its other commits, for paths that have any."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def get(self, path: str, default: list[int] | None = None) -> list[int] | None:
        return self._table.extra(path) or default

    def __getitem__(self, path: str) -> list[int]:
        found = self._table.extra(path)
        if not found:
            raise KeyError(path)
        return found

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and bool(self._table.extra(path))


class History(NamedTuple):
    """What one `git log --name-status` pass says about every path it saw.

    `commits` holds only commits that touched a path of the project; the others hold indices
    into it, newest event first (ties and clock skew: the largest committer time leads).
    `newest`: each kept path (its newest commit did not delete it) -> that commit, with its
    other commits as the table's extra ints; `gone`: each path whose newest commit deleted
    it -> all its commits.
    """

    commits: list[Commit]
    newest: Table
    gone: dict[str, list[int]]

    @property
    def older(self) -> Older:
        return Older(self.newest)


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


def _fields(out: bytes) -> Iterator[bytes]:
    """out.split(b'\\0'), a chunk at a time."""
    lo, n = 0, len(out)
    while True:
        stop = out.find(b"\0", min(lo + CHUNK, n))
        if stop < 0:
            yield from out[lo:].split(b"\0")
            return
        yield from out[lo:stop].split(b"\0")
        lo = stop + 1


def _bounds(out: bytes) -> list[bytes]:
    """Path ranges for the parse's passes: [b'', cut1, ..., cutN], from a sample of paths."""
    parts = 1 + len(out) // _PART_BYTES
    if parts == 1:
        return [b""]
    step = max(1, len(out) // (parts * 32))
    sample = []
    for pos in range(0, len(out), step):
        m = _PATH.search(out, pos)
        if m is not None:
            sample.append(m.group(1))
    sample.sort()
    if not sample:
        return [b""]
    cuts = {sample[len(sample) * k // parts] for k in range(1, parts)}
    return [b"", *sorted(cuts - {b""})]


def parse_history(out: bytes) -> History:
    """`git log -z --name-status` in the pass's format -> History."""
    commits: list[Commit] = []
    gone: dict[str, list[int]] = {}
    builder = Builder()
    bounds = _bounds(out)
    for k, lo in enumerate(bounds):
        hi = bounds[k + 1] if k + 1 < len(bounds) else None
        _parse_range(out, lo, hi, commits, k == 0, builder, gone)
    return History(commits, builder.table(), gone)


def _parse_range(
    out: bytes,
    lo: bytes,
    hi: bytes | None,
    commits: list[Commit],
    first_pass: bool,
    builder: Builder,
    gone: dict[str, list[int]],
) -> None:
    """One pass: the paths in [lo, hi) into `builder` (in order) and `gone`; the first pass
    also collects the commits.

    Each commit is NUL, its header, NUL, then (when it touched files) a newline and pairs of
    status and path, each ended by NUL; an empty field always precedes a commit's header.
    """
    newest: dict[bytes, int] = {}
    older: dict[bytes, list[int]] = {}
    deleted: set[bytes] = set()
    get = newest.get
    idx = -1  # the current commit's index (commits with paths only)
    ct = 0
    fields = _fields(out)  # the walk of _events, inlined: it runs once per range
    fresh = False
    header = b""
    for status in fields:
        if not status:  # a commit: its header follows
            header = next(fields, b"")
            fresh = True
            continue
        path = next(fields, None)
        if path is None:
            break
        if fresh:
            fresh = False
            idx += 1
            if first_pass:
                commits.append(_commit(decode(header)))
            ct = commits[idx].time
        if path < lo or (hi is not None and path >= hi):
            continue
        seen = get(path)
        if seen is None:
            newest[path] = idx
            if status[-1:] == b"D":
                deleted.add(path)
            continue
        if ct > commits[seen].time:  # clock skew: a commit listed later is the newer one
            newest[path] = idx
            older.setdefault(path, []).insert(0, seen)
            if status[-1:] == b"D":
                deleted.add(path)
            else:
                deleted.discard(path)
            continue
        lst = older.get(path)
        if lst is None:
            older[path] = [idx]
        else:
            lst.append(idx)
    for path in sorted(newest):
        first, rest = newest.pop(path), older.pop(path, ())
        if path in deleted:
            gone[decode(path)] = [first, *rest]
        else:
            builder.add(path, first, rest)


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
    return History(old.commits + new.commits, builder.table(), gone)


def events_of(h: History) -> Iterator[tuple[str, list[int], bool]]:
    """(path, its commits newest first, whether the newest deleted it) for every path."""
    for raw, first, rest in h.newest.rows():
        yield decode(raw), [first, *rest], False
    for name, events in h.gone.items():
        yield name, events, True


def parse_log(out: bytes) -> tuple[dict[str, int], dict[str, int]]:
    """(changed, deleted): each path's newest committer time, split by whether that newest
    event kept the file or deleted it (parse_history, reduced to times)."""
    h = parse_history(out)
    changed = {p: h.commits[i].time for p, i in h.newest.items()}
    deleted = {p: h.commits[events[0]].time for p, events in h.gone.items()}
    return changed, deleted
