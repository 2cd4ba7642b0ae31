"""Whether one article's files are exactly as committed, read from git's index file itself (SPEC
§9.1): `git status` and `git ls-files` each parse the whole index (60-90 ms at 500k files) to
answer about a handful of entries, while the index is sorted, so a few bisection steps find them.
Anything unusual (index v4, a split or sparse index, a conflict, a flag, a stat that differs, an
untracked file) answers None, and git decides as before: it costs time, never a wrong answer."""

from __future__ import annotations

import mmap
import os
import stat
import struct
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import NamedTuple

from canon_ls.core.git import gitrun
from canon_ls.core.git.pathtable import after
from canon_ls.core.storage.address import may_name

_FILE_MODES = frozenset({0o100644, 0o100755, 0o120000})
_ENTRY = struct.Struct(">10I20sH")  # ctime s ns, mtime s ns, dev, ino, mode, uid, gid, size
_UNSURE_FLAGS = 0x8000 | 0x3000  # assume-valid, or a merge stage
_HEADER = 12
_EMPTY_BLOB = bytes.fromhex("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")


class Quiet(NamedTuple):
    """The probe's answer, with what git said on the way (ChangeTimes need not ask again)."""

    files: list[bytes]  # project-relative, sorted
    prefix: str  # the project's path inside the work tree ('' at its top)
    index_path: str  # as `git rev-parse --git-path index` gives it
    head: str


def quiet_files(
    project: Path, address: str, own: str, nearer: Iterable[str] = (), most: int = 2000
) -> Quiet | None:
    """The tracked files an article at `address` can govern, but for those in the folders of the
    `nearer` articles below it, when each of them and the article's own file `own` match HEAD,
    the index and the disk by stat, and no untracked file lies among them; None when any of that
    is not sure (or more than `most` files)."""
    args = ("--show-toplevel", "--show-prefix", "--git-path", "index", "--git-dir")
    out = gitrun.run(project, "rev-parse", *args, "--show-object-format", "HEAD")
    lines = os.fsdecode(out).split("\n") if out else []
    if len(lines) < 6 or lines[4] != "sha1" or os.path.isabs(own):  # (20-byte ids in entries)
        return None
    (top, prefix), (index, git_dir) = lines[:2], (Path(project, x) for x in lines[2:4])
    if (git_dir / "info" / "sparse-checkout").exists() or any(git_dir.glob("sharedindex.*")):
        return None
    parent, _, leaf = address.rpartition("/")
    base = os.fsencode(prefix + (parent + "/" if parent else ""))
    skip = {os.fsencode(f"{prefix}{a}/") for a in nearer if a.startswith(address + "/")}
    try:
        with open(index, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            racy = os.fstat(fh.fileno()).st_mtime_ns
            entries = _entries(data, base + os.fsencode(leaf), base, leaf, most, skip)
            mine = _entries(data, os.fsencode(prefix + own), b"", "", 1, exact=True)
    except (OSError, ValueError):
        return None
    if entries is None or not mine or any(not _settled(top, e, racy) for e in (*entries, *mine)):
        return None
    paths = {e[0] for e in entries}
    if not _no_strangers(top, base, leaf, paths, most, skip):
        return None
    if not _as_committed(project, lines[5], {e[0]: e[1:3] for e in (*entries, *mine)}):
        return None
    files = sorted(p[len(prefix) :] for p in paths) if prefix else sorted(paths)
    return Quiet(files, prefix, lines[2], lines[5])


Entry = tuple[bytes, int, bytes, tuple[int, ...]]  # path, mode, object id, stat fields


def _entries(
    data: mmap.mmap,
    start: bytes,
    base: bytes,
    leaf: str,
    most: int,
    skip: AbstractSet[bytes] = frozenset(),
    exact: bool = False,
) -> list[Entry] | None:
    """The entries whose paths begin with `start` (equal it, if `exact`) and name a file the
    article governs, those in a folder of `skip` passed over by bisection; None when one is
    unusual or there are more than `most`."""
    if data[:4] != b"DIRC" or int.from_bytes(data[4:8], "big") not in (2, 3):
        return None
    pos, out = _first_at_or_after(data, start), list[Entry]()
    while pos is not None and (parsed := _entry_at(data, pos)) is not None:
        path, end, fields, oid, flags = parsed
        if not path.startswith(start) or (exact and path != start):
            break
        folder = path[: path.rfind(b"/") + 1]
        while folder and folder not in skip:
            folder = folder[: folder.rfind(b"/", 0, -1) + 1]
        if folder:  # below a nearer article: all of its folder at once
            pos = _first_at_or_after(data, after(folder), pos)
            continue
        pos = end
        name = path[len(base) :].split(b"/")[0].decode("utf-8", "surrogateescape")
        if not exact and not may_name(name, leaf):
            continue
        if flags & _UNSURE_FLAGS or fields[6] not in _FILE_MODES or len(out) >= most:
            return None
        out.append((path, fields[6], oid, fields))
    return out


def _entry_at(data: mmap.mmap, pos: int) -> tuple[bytes, int, tuple[int, ...], bytes, int] | None:
    """The entry at byte `pos` (path, where the next begins, stat fields, object id, flags), or
    None when those bytes do not hold one. An extended entry (v3) carries a second flags word,
    set only for skip-worktree or intent-to-add: both unusual here (reported as a merge stage)."""
    if pos + 64 > len(data) - 20:
        return None
    *fields, oid, flags = _ENTRY.unpack_from(data, pos)
    if fields[6] not in _FILE_MODES and fields[6] not in (0o160000, 0o040000):
        return None
    name_at = pos + 62 + (2 if flags & 0x4000 else 0)
    size = flags & 0xFFF
    nul = data.find(b"\0", name_at) if size == 0xFFF else name_at + size
    if not name_at < nul < len(data) or data[nul] != 0 or data.find(b"\0", name_at, nul) >= 0:
        return None
    extra = 0x3000 if flags & 0x4000 else 0
    return data[name_at:nul], (nul - pos + 8 & ~7) + pos, tuple(fields), oid, flags | extra


def _first_at_or_after(data: mmap.mmap, start: bytes, lo: int = _HEADER) -> int | None:
    """The byte offset of the first entry whose path sorts at or after `start`: entries begin at
    offsets of 4 mod 8 (8-byte padded after a 12-byte header), so from any offset the next
    two entries that parse re-synchronise a bisection over the bytes (from `lo`, an entry
    sorting before `start`)."""
    hi = len(data)
    if _entry_at(data, lo) is None:
        return None
    while hi - lo > 512:
        mid = lo + (hi - lo) // 2
        at = _sync(data, mid - (mid - 4) % 8, hi)
        if at is None:
            hi = mid
            continue
        parsed = _entry_at(data, at)
        if parsed is not None and parsed[0] < start:
            lo = at
        else:  # no entry starts between mid and `at`
            hi = mid
    pos: int | None = lo
    while pos is not None and (parsed := _entry_at(data, pos)) is not None and parsed[0] < start:
        pos = parsed[1]
    return pos


def _sync(data: mmap.mmap, at: int, hi: int) -> int | None:
    """The first offset from `at` (below `hi`, within 8 KB: an entry is at most ~4.2 KB) where
    an entry and the one after it both parse."""
    hi = min(hi, at + 8192)
    while at < hi:
        first = _entry_at(data, at)
        if first is not None and _entry_at(data, first[1]) is not None:
            return at
        at += 8
    return None


def _settled(top: str, entry: Entry, index_ns: int) -> bool:
    """Whether git would take the file as unchanged from its stat alone: every field as recorded
    and the file older than the index (else git re-reads it: racily clean), and a recorded size
    of 0 only for the empty blob (git writes 0 over a racily clean entry's size: "smudged")."""
    path, _, oid, f = entry
    try:
        st = os.lstat(os.path.join(top, os.fsdecode(path)))
    except OSError:
        return False
    c, m = divmod(st.st_ctime_ns, 10**9), divmod(st.st_mtime_ns, 10**9)
    seen = [v & 0xFFFFFFFF for v in (*c, *m, st.st_ino, st.st_uid, st.st_gid, st.st_size)]
    kind = stat.S_IFLNK if f[6] == 0o120000 else stat.S_IFREG
    return (
        seen == [f[0], f[1], f[2], f[3], f[5], f[7], f[8], f[9]]
        and stat.S_IFMT(st.st_mode) == kind
        and (kind == stat.S_IFLNK or bool(st.st_mode & 0o100) == bool(f[6] & 0o100))
        and f[2] * 10**9 + f[3] < index_ns
        and (f[9] != 0 or oid == _EMPTY_BLOB)
    )


def _no_strangers(
    top: str, base: bytes, leaf: str, tracked: set[bytes], most: int, skip: AbstractSet[bytes]
) -> bool:
    """Whether every file on disk the article can govern, but in the folders `skip`, is tracked
    (an untracked one may be ignored or not: git says), walking at most `most` of them,
    symlinks not followed."""
    root = os.fsencode(top) + b"/"
    try:
        todo = [base + n for n in os.listdir(root + base) if may_name(os.fsdecode(n), leaf)]
    except OSError:
        return False
    seen = 0
    while todo:
        rel = todo.pop()
        if rel + b"/" in skip:
            continue
        if os.path.isdir(root + rel) and not os.path.islink(root + rel):
            try:
                todo.extend(rel + b"/" + n for n in os.listdir(root + rel))
            except OSError:
                return False
            continue
        seen += 1
        if seen > most or rel not in tracked:
            return False
    return True


def _as_committed(project: Path, head: str, entries: dict[bytes, tuple]) -> bool:
    """Whether commit `head` (the HEAD the probe read) holds each of these paths as the index
    does (mode, object id): nothing staged. A path it holds and the index not (a staged
    deletion) is no file on disk to govern."""
    specs = [":(literal)" + os.fsdecode(n) for n in sorted(entries)]
    out = gitrun.run(project, "ls-tree", "-z", "--full-tree", head, "--", *specs)
    if out is None:
        return False
    committed: dict[bytes, tuple] = {}
    for row in out.split(b"\0"):
        meta, tab, path = row.partition(b"\t")
        mode, _, rest = meta.partition(b" ")
        if tab:
            committed[path] = (int(mode, 8), bytes.fromhex(rest.split(b" ")[-1].decode()))
    return committed == entries
