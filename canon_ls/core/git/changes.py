"""When each project file last changed, and which commits touched it (SPEC §9, §9.1, §9.2)."""

from __future__ import annotations

import contextlib
import os
import time
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from canon_ls.core.git import gitrun
from canon_ls.core.git.gitlog import Commit, History, empty, merged, parse_outputs
from canon_ls.core.git.pathtable import Table, after, decode, encode
from canon_ls.core.storage import cache

if TYPE_CHECKING:
    from canon_ls.core.git.indexprobe import Quiet

__all__ = ["ChangeTimes", "Commit", "History", "log_args"]

T = TypeVar("T")


# The pass's format: an empty field (NUL) then one header field per commit; `%x1f` separates
# the parts that may hold spaces (author, subject), the subject last so nothing can split it.
_LOG_FORMAT = "--format=%x00%ct %h%x1f%an%x1f%s"


# The whole-history pass's delta base cache, sized by the index: twice its bytes, 16 to 128 MB.
# Measured in docs/BENCHMARKS.md ("the editor's first answers"): a 15 MB index (100k files) takes
# as long at 32 MB as at git's default 96 MB, each half of the pass 60-70 MB smaller; a 75 MB one
# (500k files) at 128 MB, 96 MB, 64 MB, 32 MB: 5.6, 9.5, 29, 63 s for one half.
DELTA_CACHE_PER_INDEX_BYTE = 2
DELTA_CACHE_MIN = 16 * 1024 * 1024
DELTA_CACHE_MAX = 128 * 1024 * 1024
# How far the whole pass steps back in CPU priority: further than the check's own five
# (core/checking/check.py), so its work ends first on two cores (measured at 50k articles).
PASS_STEP_BACK = 9
# The pack mapped in windows of 8 MB up to 48 MB: at 500k files one half of the pass peaked at
# 469 MB with 216 MB of cache, 296 MB with these limits (docs/BENCHMARKS.md).
PACK_WINDOWS = ("-c", "core.packedGitLimit=48m", "-c", "core.packedGitWindowSize=8m")
# The smaller reads (the root's tree, the rename search) map at most 16 MB of the pack.
SMALL_WINDOWS = ("-c", "core.packedGitLimit=16m", "-c", "core.packedGitWindowSize=8m")
# The root's tree listed with a 4 MB delta cache: git's default 96 MB held 172 MB at 500k files,
# 71 at 100k; 4 MB, 65 and 27 MB, as fast (issue 40 item 3).
ROOT_TREE = (*SMALL_WINDOWS, "-c", "core.deltaBaseCacheLimit=4m", "ls-tree", "-r", "-z")
# From an index of 2 x PART_INDEX_BYTES on, the whole pass runs as logs of disjoint folders of
# about that many bytes of index each, one after another, with a 16 MB delta cache: one log over
# 500k files needed ~128 MB of cache (~250 MB of git, 12.5 s); folders of ~27k files fit in 16 MB
# (56-71 MB each at 500k files, 37-40 MB at 100k; issue 40 item 3).
PART_INDEX_BYTES = 4 << 20
PART_CACHE = 16 << 20  # a quarter of the index, 8 to 16 MB (100k files: 8 MB, 8 MB less, as fast)
PART_SPECS = 4096  # at most this many folders (the last log names each: its argument list)
# The cache file holds the history's paths in up to CHUNKS files of consecutive rows (at least
# CHUNK_ROWS each): a read about one article loads only those its paths lie in (1/32 at 50k).
CHUNKS, CHUNK_ROWS = 32, 4096


def index_bytes(project: Path, index: str | None = None) -> int | None:
    """The index file's size (`index`: its path from `rev-parse --git-path`, when known)."""
    if index is None:
        out = gitrun.run(project, "rev-parse", "--git-path", "index")
        index = decode(out).strip() if out else ""
    try:
        return os.stat(Path(project) / index).st_size if index else None
    except (OSError, ValueError):
        return None


def delta_cache_limit(project: Path, index: str | None = None) -> int | None:
    """Bytes of delta base cache for the whole-history pass, or None for git's default (no
    index); `index`: the index file's path when known."""
    return _limit_for(index_bytes(project, index))


def _limit_for(size: int | None) -> int | None:
    if size is None:
        return None
    return max(DELTA_CACHE_MIN, min(size * DELTA_CACHE_PER_INDEX_BYTE, DELTA_CACHE_MAX))


def log_args(
    project: Path,
    revs: str,
    whole: bool = False,
    *,
    limit: int | None = None,
    part: Sequence[str] = (),
    windows: Sequence[str] = PACK_WINDOWS,
) -> list[str]:
    """The history pass's git arguments (benchmarks/bench_git_pass.py times these); `whole`: all of
    history with its delta cache (`limit`, when known); `part`: more options of `git log`."""
    if whole and limit is None:
        limit = delta_cache_limit(project)
    config = ["-c", f"core.deltaBaseCacheLimit={limit}"] if whole and limit else []
    return [
        *windows,
        *config,
        "log",
        "--no-renames",
        "--no-show-signature",
        "--name-status",
        "--relative",
        "-z",
        _LOG_FORMAT,
        *part,
        revs,
        "--",
    ]


def _folders(listing: bytes, parts: int) -> list[list[str]]:
    """Pathspecs of the pass's logs from HEAD's files (`ls-tree -r -z --name-only`): folders of
    about 1/parts of the files each (a bigger one split into its own), grouped in path order,
    then one log of everything else (files beside them, folders gone since HEAD)."""
    direct = Counter(path.rpartition(b"/")[0] for path in listing.split(b"\0") if path)
    weight: Counter[bytes] = Counter()
    inside: dict[bytes, set[bytes]] = {}
    for folder, files in direct.items():
        while folder:
            weight[folder] += files
            parent = folder.rpartition(b"/")[0]
            inside.setdefault(parent, set()).add(folder)
            folder = parent
    budget = sum(direct.values()) / max(parts, 1)
    units: list[bytes] = []
    stack = sorted(inside.get(b"", ()), reverse=True)
    while stack:
        folder = stack.pop()
        if weight[folder] > budget and folder in inside:
            stack.extend(sorted(inside[folder], reverse=True))
        else:
            units.append(folder)
    groups: list[list[str]] = []
    load = budget
    for unit in units:
        if load + weight[unit] > budget:
            groups.append([])
            load = 0
        groups[-1].append(f":(literal){decode(unit)}")
        load += weight[unit]
    return [*groups, [".", *(f":(exclude,literal){decode(unit)}" for unit in units)]]


class _Step(NamedTuple):
    """A refresh's history pass under way (`base`: the cached history it goes on from)."""

    head: str | None  # the HEAD it reaches
    jobs: list[gitrun.Job]
    base: History | None
    root: str | None = None  # the root commit it left out, listed last (`_root_outputs`)
    later: Sequence[Sequence[str]] = ()  # the other folders' logs, one at a time
    order: list[bytes] | None = None  # every commit's header in the log's order


class ChangeTimes:
    """When each file last changed (SPEC §9): the last commit touching it, else its mtime when
    dirty, untracked or without git; and which commits touched it (SPEC §9.1, §9.2)."""

    VERSION = 8  # 5: a sorted blob with int arrays; 6: sealed; 7: ticks (gitlog.ticked); 8: chunks

    def __init__(
        self,
        project: Path,
        cache_dir: Path | None = None,
        status_paths: Iterable[str] | None = None,
        only: Sequence[str] | None = None,
        quiet: Quiet | None = None,
    ) -> None:
        """`status_paths`: pathspecs of the only files a caller asks about (`git status` looks
        only there); `only`: the prefixes of those paths (one article's question): then the
        history holds only them, from the cache's chunks at HEAD or else `git log` of those
        pathspecs (never the whole pass); otherwise it is the whole project's, from its cache.
        `quiet`: the index probe found them as committed (core/git/indexprobe.py): the first
        refresh runs neither rev-parse nor status."""
        self.project = Path(project)
        self.cache_dir = (
            cache.project_cache_dir(self.project) if cache_dir is None else Path(cache_dir)
        )
        self._status_paths = tuple(status_paths) if status_paths is not None else (".",)
        self._only = [encode(p) for p in only] if only is not None else None
        self._quiet = quiet
        self.git = False
        self.head: str | None = None
        self.full_passes = 0  # how many whole-history passes ran (tests and benchmarks read it)
        self._history = empty()
        self._dirty: set[str] = set()
        self.refresh()

    def refresh(self) -> None:
        """Bring committed times up to HEAD and re-read the set of dirty files (git status starts
        after rev-parse: a read lists its files meanwhile, core/git/staleness.py; the whole
        project's status ends before its history is loaded or logged)."""
        self.started_ns = time.time_ns()  # dirty files are as they were from here on
        quiet, self._quiet = self._quiet, None  # (once: a later refresh asks git)
        head_out: bytes | None = None
        if quiet is not None:
            lines, head_out = ["true", quiet.prefix, quiet.index_path], quiet.head.encode()
        else:
            top, head_out = gitrun.run_many(
                self.project,
                ("rev-parse", "--is-inside-work-tree", "--show-prefix", "--git-path", "index"),
                ("rev-parse", "--verify", "-q", "HEAD"),
            )
            lines = [*decode(top or b"").split("\n"), "", ""]
        self.git = lines[0].strip() == "true"
        if not self.git:
            self.head, self._history, self._dirty = None, empty(), set()
            return
        status = None if quiet is not None else gitrun.start(
            self.project, "status", "--porcelain=v1", "-z", "--no-renames",
            "--untracked-files=no", "--", *self._status_paths,
        )  # fmt: skip
        step = None
        try:
            head = head_out.strip().decode() if head_out else None
            whole = self._only is None  # status reads the whole index: ~180 MB at 500k files
            if whole:  # so it ends before the history loads or its log starts (issue 40)
                self._read_status(status.output() if status else b"", lines[1].strip())
            step = self._advance(head, lines[2].strip()) if head != self.head else None
            if not whole:  # one article's: its history loads while git answers
                self._read_status(status.output() if status else b"", lines[1].strip())
            if step is not None:
                self._finish(step)
        finally:
            if status is not None:
                status.close()
            for job in step.jobs if step is not None else ():
                job.close()

    def _advance(self, head: str | None, index: str) -> _Step | None:
        """Start what brings the history to `head`: None when the cache file is there
        already. `index`: the index file's path (the whole pass's delta cache grows with it)."""
        if head is None:  # a repository without commits
            return _Step(None, [], None)
        if self.head is None:
            self._load_cache()
        old = self.head
        if old == head:
            return None  # the cache file was at HEAD already: nothing to rewrite
        paths = self._status_paths if self._only is not None else ()  # one article's alone
        full = ("--full-history",) if paths else ()  # every commit touching them, as unscoped
        if old and gitrun.run(self.project, "merge-base", "--is-ancestor", old, head) is not None:
            args = log_args(self.project, f"{old}..{head}", part=full)
            return _Step(head, [gitrun.start(self.project, *args, *paths)], self._history)
        if paths:  # all of history, of these paths alone (never the whole pass)
            args = log_args(self.project, head, part=full)
            return _Step(head, [gitrun.start(self.project, *args, *paths)], None)
        self.full_passes += 1
        return self._start_whole(head, index)

    def _finish(self, step: _Step) -> None:
        """Read the pass's outputs (in order, each a block at a time from its file) into the
        history at its HEAD, and keep it in the cache file."""
        if step.head is None:
            self.head, self._history = None, empty()
            return
        files: list[Any] = [job.file() for job in step.jobs]
        for args in step.later:  # one at a time: each starts once the one before has ended
            if files[-1] is not None:
                files.append(gitrun.start(self.project, *args, step_back=PASS_STEP_BACK).file())
        if step.root is not None and files[-1] is not None:
            files += self._root_outputs(step.root)  # after the log: never two at once
        try:
            if any(f is None for f in files):  # git failed: no dates this time, none cached
                self.head, self._history = step.head, empty()
                return
            history = parse_outputs([f for f in files if f is not None], step.order)
        finally:
            for f in files:
                if f is not None and not isinstance(f, bytes):
                    f.close()
        if step.base is not None:
            history = merged(step.base, history)
        self.head, self._history = step.head, history
        if self._only is None:
            self._save_cache()

    def _start_whole(self, head: str, index: str) -> _Step:
        """The pass over all of history, one git process at a time (two at once held twice the
        memory: ~250 MB each at 500k files): one log, or from 2 x PART_INDEX_BYTES of index
        logs of disjoint folders (`_folders`). A single root commit is left out of the logs:
        its diff against nothing (every file it added, 300k at 500k files) held ~40 MB more than
        a listing of its tree, which `_finish` runs once the logs have ended."""
        roots = (gitrun.run(self.project, "rev-list", "--max-parents=0", head) or b"").split()
        root = roots[0].decode() if len(roots) == 1 else None
        flags = ("--min-parents=1",) if root else ()
        size = index_bytes(self.project, index)
        if size is not None and size >= 2 * PART_INDEX_BYTES:
            listing = gitrun.run(self.project, *ROOT_TREE, "--name-only", head)
            order = gitrun.run(self.project, "log", "-z", "-s", _LOG_FORMAT, head, "--")
            plan = None if listing is None else _folders(listing, size // PART_INDEX_BYTES)
            if order is not None and plan is not None and len(plan[-1]) <= PART_SPECS:
                part = (*flags, "--full-history")  # no commit left out by simplification
                cache = min(PART_CACHE, max(PART_CACHE // 2, size // 4))
                logs = [
                    [*log_args(self.project, head, True, limit=cache, part=part,
                               windows=SMALL_WINDOWS), *pathspecs]
                    for pathspecs in plan
                ]  # fmt: skip
                job = gitrun.start(self.project, *logs[0], step_back=PASS_STEP_BACK)
                headers = [field for field in order.split(b"\0") if field]
                return _Step(head, [job], None, root, logs[1:], headers)
        args = log_args(self.project, head, True, limit=_limit_for(size), part=flags)
        job = gitrun.start(self.project, *args, step_back=PASS_STEP_BACK)
        return _Step(head, [job], None, root)

    def _root_outputs(self, root: str) -> list[Any]:
        """The root commit as the log would give it: its header, then `A` and each path of its
        tree (`ls-tree --format`, git 2.36 on; older, the root's own diff)."""
        header = gitrun.run(self.project, "log", "-1", "-z", "-s", _LOG_FORMAT, root, "--")
        listing = gitrun.start(self.project, *ROOT_TREE, "--format=A%x00%(path)", root).file()
        if listing is None:  # an older git: the root's diff
            return [gitrun.start(self.project, *log_args(self.project, root, True)).file()]
        return [header, listing]

    def _read_status(self, out: bytes | None, prefix: str) -> None:
        """Dirty files from `git status -z`; `prefix`: the project's path inside the work
        tree ('' at the top), since status paths are rooted there."""
        dirty: set[str] = set()
        for entry in decode(out or b"").split("\0"):
            if len(entry) < 4:
                continue
            path = entry[3:]
            if prefix:
                if not path.startswith(prefix):
                    continue
                path = path[len(prefix) :]
            dirty.add(path)
        self._dirty = dirty

    def _cache_file(self) -> Path | None:
        return cache.project_cache_file(self.project, "changes", self.cache_dir)

    def _load_cache(self) -> None:
        """marshal: plain data only (nothing executes on load), and fast for 500k paths (a blob
        and four arrays as bytes per chunk, offsets as in the whole table)."""
        file = self._cache_file()
        if file is None:
            return
        try:  # None (damaged, cut, extended) or another version: TypeError, rebuilt
            version, head, commits, gone, firsts = cache.read_sealed(file)
            if version != self.VERSION or not isinstance(head, str) or not isinstance(gone, dict):
                return
            wanted: Iterable[int] = range(len(firsts))
            if (only := self._only) is not None:  # the chunks holding paths under these
                spans = [(bisect_right(firsts, p) - 1, bisect_left(firsts, after(p))) for p in only]
                wanted = sorted({i for lo, hi in spans for i in range(max(lo, 0), hi)})
            parts: list[Any] = list(Table(bytearray()).parts())  # the chunks' rows joined
            for i in wanted:
                chunk_head, blob, *arrays = cache.read_sealed(file.with_suffix(f".{i}.bin"))
                if chunk_head != head:  # a save under way, or cut short
                    return
                starts, first, at, extra = map(array, "IiIi", arrays)
                base, ext = len(parts[0]) - starts[0], len(parts[4]) - at[0]
                parts[0] += blob
                parts[1].extend(starts[1:] if not base else map(base.__add__, starts[1:]))
                parts[2].extend(first)
                parts[3].extend(at[1:] if not ext else map(ext.__add__, at[1:]))
                parts[4].extend(extra)
            table = Table(*parts)
            if not table.valid(len(commits)):
                return
            self.head = head
            self._history = History([Commit(*c) for c in commits], table, gone)
        except (OSError, ValueError, EOFError, TypeError):
            self.head, self._history = None, empty()

    def _save_cache(self) -> None:
        file = self._cache_file()
        if file is None:
            return
        h = self._history
        blob, starts, first, at, extra = h.newest.parts()
        step, firsts = max(CHUNK_ROWS, -(-len(first) // CHUNKS)), []
        for i, lo in enumerate(range(0, len(first), step)):
            hi = min(lo + step, len(first))
            firsts.append(bytes(blob[starts[lo] : starts[lo + 1] - 1]))
            rows = [starts[lo : hi + 1], first[lo:hi], at[lo : hi + 1], extra[at[lo] : at[hi]]]
            chunk = (self.head, bytes(blob[starts[lo] : starts[hi]]), *(a.tobytes() for a in rows))
            cache.write_sealed(file.with_suffix(f".{i}.bin"), chunk)
        commits = [tuple(c) for c in h.commits]
        cache.write_sealed(file, (self.VERSION, self.head, commits, h.gone, firsts))
        for i in range(len(firsts), CHUNKS):  # a larger history's chunks, named by no head now
            with contextlib.suppress(OSError):
                file.with_suffix(f".{i}.bin").unlink(missing_ok=True)

    def committed(self) -> dict[str, float]:
        """Path -> committer time of the last commit touching it (tracked paths at HEAD)."""
        commits = self._history.commits
        return {path: commits[i].time for path, i in self._history.newest.items()}

    def of(self, relpath: str) -> float:
        """Epoch seconds of the file's last change; 0.0 when it does not exist."""
        if self.git and relpath not in self._dirty:
            i = self._history.newest.get(relpath)
            if i is not None:
                return float(self._history.commits[i].time)
        return self.mtime(relpath)

    def mtime(self, relpath: str) -> float:
        """The file's mtime; 0.0 when it does not exist."""
        try:
            return os.stat(os.path.join(self.project, relpath)).st_mtime
        except (OSError, ValueError):
            return 0.0

    def committed_only(self, relpath: str) -> bool:
        """Whether the file's change time is a commit's (tracked, unmodified) rather than its
        mtime (dirty, untracked, or no git)."""
        return self.git and relpath not in self._dirty and relpath in self._history.newest

    def tracked(self, relpath: str) -> bool:
        """Whether git tracks the file at HEAD (a file new since then is not)."""
        return self.git and relpath in self._history.newest

    def state(self) -> tuple[History, set[str]]:
        """The history pass and the dirty files as they are, for a caller that lays the
        listing over the history's paths itself (core/git/dated.py)."""
        return self._history, self._dirty

    def commits_of(self, relpath: str) -> list[Commit]:
        """The commits that touched a path still tracked at HEAD, newest first."""
        h = self._history
        row = h.newest.index(relpath)
        if row < 0:
            return []
        commits = h.commits
        return [commits[i] for i in (h.newest.first_of(row), *h.newest.extra_of(row))]

    def dated(self, pairs: Iterable[tuple[str, T]]) -> Iterator[tuple[str, T, float]]:
        """(path, payload, of(path)) for each pair, merged with the history's sorted paths: pairs in
        byte order cost no lookup each; a path out of that order is looked up on its own."""
        rows = self._history.newest.raw_items()
        commits, dirty, git = self._history.commits, self._dirty, self.git
        row = next(rows, None)
        previous = b""
        for path, payload in pairs:
            key = encode(path)
            if not git or path in dirty:
                yield path, payload, self.mtime(path)
                continue
            if key < previous:
                yield path, payload, self.of(path)
                continue
            previous = key
            while row is not None and row[0] < key:
                row = next(rows, None)
            if row is not None and row[0] == key:
                yield path, payload, float(commits[row[1]].time)
            else:
                yield path, payload, self.mtime(path)

    def touched_since(
        self, paths: Iterable[str], cut: float
    ) -> tuple[dict[Commit, list[str]], list[str]]:
        """The evidence's walk (SPEC §9.1): commits at or after `cut` that touched each path, and
        the paths git does not date (dirty, untracked, no git); an older one costs one lookup."""
        h = self._history
        table, commits = h.newest, h.commits
        dirty, git = self._dirty, self.git
        hits: dict[Commit, list[str]] = {}
        undated: list[str] = []
        for path in paths:
            row = table.index(path)
            if row < 0 or not git or path in dirty:
                undated.append(path)
            if row < 0:
                continue
            first = table.first_of(row)
            if commits[first].time < cut:  # the newest is the latest time
                continue
            for i in (first, *table.extra_of(row)):
                commit = commits[i]
                if commit.time >= cut:
                    hits.setdefault(commit, []).append(path)
        return hits, undated
