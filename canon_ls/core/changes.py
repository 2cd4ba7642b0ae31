"""When each project file last changed, and which commits touched it (SPEC §9, §9.1, §9.2).

One `git log --no-renames --name-status` pass over the project's history, never a process per
file, kept by HEAD in memory and in a cache file outside the project; dirty and untracked files
fall back to their mtime. Staleness (core/staleness.py), the evidence and `canon history` read it.
"""

from __future__ import annotations

import hashlib
import marshal
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from canon_ls.core import cache, gitrun


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _default_cache_dir(project: Path) -> Path | None:
    """The canon-ls cache directory under the same rules as the parse cache (core/cache.py):
    None when CANON_NO_CACHE is set or the directory would lie inside the project."""
    file = cache.cache_file(Path(project) / ".canon", Path(project))
    return None if file is None else file.parent


class Commit(NamedTuple):
    """One commit of the history pass: committer time, abbreviated hash, author, subject."""

    time: int
    hash: str
    author: str
    subject: str


# The pass's format: an empty field (NUL) then one header field per commit; `%x1f` separates
# the parts that may hold spaces (author, subject), the subject last so nothing can split it.
_LOG_FORMAT = "--format=%x00%ct %h%x1f%an%x1f%s"


# The delta base cache of the one whole-history pass, by the repository's size. `git log
# --name-status` diffs every commit's trees; once the trees of one commit no longer fit in the
# cache (git's default core.deltaBaseCacheLimit is 96 MB), each is rebuilt from its delta chain
# again and again. Measured on generated repositories (docs/BENCHMARKS.md, "the git pass"): at
# 500k files (a 75 MB index) the pass took 30.9 s of CPU with 96 MB, 15.0 with 128 MB, 12.5 with
# 192 MB, 12.0 with 256 MB; at 250k and 100k files a bigger cache gains nothing. So the limit is
# three times the index file (whose size grows with the tracked files, as the trees do), never
# below git's default and at most 512 MB; git fills the cache up to the limit, so a smaller
# repository keeps git's own setting. Passes over OLD..HEAD (a few commits) keep the default.
GIT_DEFAULT_DELTA_CACHE = 96 * 1024 * 1024
DELTA_CACHE_PER_INDEX_BYTE = 3
DELTA_CACHE_MAX = 512 * 1024 * 1024


def delta_cache_limit(project: Path) -> int | None:
    """Bytes of delta base cache for the whole-history pass, or None for git's default."""
    out = gitrun.run(project, "rev-parse", "--git-path", "index")
    if not out:
        return None
    try:
        size = os.stat(Path(project) / _decode(out).strip()).st_size
    except (OSError, ValueError):
        return None
    limit = min(size * DELTA_CACHE_PER_INDEX_BYTE, DELTA_CACHE_MAX)
    return limit if limit > GIT_DEFAULT_DELTA_CACHE else None


def log_args(project: Path, revs: str, whole: bool = False) -> list[str]:
    """The history pass's git arguments (benchmarks/bench_git_pass.py times exactly these);
    `whole`: the pass over all of history, with the delta cache its size needs.

    No pathspec leaves the store out: `canon history` lists the commits of the article files
    (SPEC §9.2), and one leaving out only the journal (which nothing dates from git) made the
    pass slower, not faster: with a pathspec git also compares each commit's trees to prune
    history (CPU 4.9 -> 6.0 s at 250k files, 30.9 -> 34.1 s at 500k)."""
    limit = delta_cache_limit(project) if whole else None
    config = ["-c", f"core.deltaBaseCacheLimit={limit}"] if limit else []
    return [
        *config,
        "log",
        "--no-renames",
        "--no-show-signature",
        "--name-status",
        "--relative",
        "-z",
        _LOG_FORMAT,
        revs,
        "--",
    ]


class History(NamedTuple):
    """What one `git log --name-status` pass says about every path it saw.

    `commits` holds only commits that touched a path of the project; the others hold indices
    into it, newest event first (ties and clock skew: the largest committer time leads).
    """

    commits: list[Commit]
    newest: dict[str, int]  # kept path -> its newest commit (that commit did not delete it)
    older: dict[str, list[int]]  # kept path -> its other commits, when there are any
    gone: dict[str, list[int]]  # path whose newest commit deleted it -> all its commits


class ChangeTimes:
    """When each file last changed: committer date of the last commit touching it, or its
    mtime when it is dirty or untracked, or without git (SPEC §9); and which commits touched
    it, for the staleness evidence and history (SPEC §9.1, §9.2).

    One `git log --no-renames --name-status` pass, never a process per file. Paths whose
    newest event is a deletion are set aside, so every path kept is tracked at HEAD and anything
    else (untracked) falls back to its mtime. The result is kept by HEAD (in memory and in a
    cache file under $XDG_CACHE_HOME/canon-ls, never inside the store); a later HEAD that
    descends from the cached one costs only `git log OLD..HEAD`. `git status -uno` finds the
    dirty files on every refresh.
    """

    VERSION = 3

    def __init__(
        self,
        project: Path,
        cache_dir: Path | None = None,
        status_paths: Iterable[str] | None = None,
    ) -> None:
        """`status_paths`: pathspecs of the only files a caller asks about (`git status` looks
        only there, e.g. `scope_pathspecs(address)`); the history pass is the whole project's
        either way, from its cache."""
        self.project = Path(project)
        self.cache_dir = _default_cache_dir(self.project) if cache_dir is None else Path(cache_dir)
        self._status_paths = tuple(status_paths) if status_paths is not None else (".",)
        self.git = False
        self.head: str | None = None
        self.full_passes = 0  # how many whole-history passes ran (tests and benchmarks read it)
        self._history = History([], {}, {}, {})
        self._dirty: set[str] = set()
        self.refresh()

    # -- refresh --------------------------------------------------------------------------
    def refresh(self) -> None:
        """Bring committed times up to HEAD and re-read the set of dirty files. The three
        questions (work tree and prefix, HEAD, status) go to git at once."""
        top, head_out, status = gitrun.run_many(
            self.project,
            ("rev-parse", "--is-inside-work-tree", "--show-prefix"),
            ("rev-parse", "--verify", "-q", "HEAD"),
            (
                "status",
                "--porcelain=v1",
                "-z",
                "--no-renames",
                "--untracked-files=no",
                "--",
                *self._status_paths,
            ),
        )
        lines = _decode(top or b"").split("\n")
        self.git = lines[0].strip() == "true"
        if not self.git:
            self.head, self._history, self._dirty = None, History([], {}, {}, {}), set()
            return
        head = head_out.strip().decode() if head_out else None
        if head != self.head:
            self._advance(head)
        self._read_status(status, lines[1].strip() if len(lines) > 1 else "")

    def _advance(self, head: str | None) -> None:
        if head is None:  # a repository without commits
            self.head, self._history = None, History([], {}, {}, {})
            return
        if self.head is None:
            self._load_cache()
        old = self.head
        if old and old != head and self._is_ancestor(old, head):
            history = _merged(self._history, self._log(f"{old}..{head}"))
        elif old == head:
            return  # the cache file was at HEAD already: nothing to rewrite
        else:
            history = self._log(head, whole=True)
            self.full_passes += 1
        self.head, self._history = head, history
        self._save_cache()

    def _is_ancestor(self, old: str, head: str) -> bool:
        return gitrun.run(self.project, "merge-base", "--is-ancestor", old, head) is not None

    def _log(self, revs: str, whole: bool = False) -> History:
        out = gitrun.run(self.project, *log_args(self.project, revs, whole))
        return parse_history(out or b"")

    def _read_status(self, out: bytes | None, prefix: str) -> None:
        """Dirty files from `git status -z`; `prefix`: the project's path inside the work
        tree ('' at the top), since status paths are rooted there."""
        dirty: set[str] = set()
        for entry in _decode(out or b"").split("\0"):
            if len(entry) < 4:
                continue
            path = entry[3:]
            if prefix:
                if not path.startswith(prefix):
                    continue
                path = path[len(prefix) :]
            dirty.add(path)
        self._dirty = dirty

    # -- cache file -----------------------------------------------------------------------
    def _cache_file(self) -> Path | None:
        if self.cache_dir is None:
            return None
        key = hashlib.sha256(os.path.realpath(self.project).encode()).hexdigest()[:20]
        return self.cache_dir / f"changes-{key}.bin"

    def _load_cache(self) -> None:
        """marshal: plain data only (nothing executes on load), and fast for 100k paths."""
        file = self._cache_file()
        if file is None:
            return
        try:
            with open(file, "rb") as f:
                version, head, commits, newest, older, gone = marshal.loads(f.read())
            if (
                version != self.VERSION
                or not isinstance(head, str)
                or not isinstance(commits, list)
                or not all(isinstance(x, dict) for x in (newest, older, gone))
            ):
                return
            self.head = head
            self._history = History([Commit(*c) for c in commits], newest, older, gone)
        except (OSError, ValueError, EOFError, TypeError):
            self.head, self._history = None, History([], {}, {}, {})

    def _save_cache(self) -> None:
        file = self._cache_file()
        if file is None:
            return
        h = self._history
        state = (self.VERSION, self.head, [tuple(c) for c in h.commits], h.newest, h.older, h.gone)
        cache.write_file(file, marshal.dumps(state))

    # -- queries --------------------------------------------------------------------------
    def committed(self) -> dict[str, int]:
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

    def commits_of(self, relpath: str) -> list[Commit]:
        """The commits that touched a path still tracked at HEAD, newest first."""
        h = self._history
        first = h.newest.get(relpath)
        if first is None:
            return []
        commits = h.commits
        return [commits[first], *(commits[i] for i in h.older.get(relpath, ()))]

    def touched_since(
        self, paths: Iterable[str], cut: float
    ) -> tuple[dict[Commit, list[str]], list[str]]:
        """The evidence's walk (SPEC §9.1): commits at or after `cut` that touched each path
        (commit -> the paths it touched), and the paths git does not date (dirty, untracked,
        or no repository). A path whose newest commit is older than `cut` costs one lookup."""
        h = self._history
        newest, older, commits = h.newest, h.older, h.commits
        dirty, git = self._dirty, self.git
        hits: dict[Commit, list[str]] = {}
        undated: list[str] = []
        for path in paths:
            first = newest.get(path)
            if first is None or not git or path in dirty:
                undated.append(path)
            if first is None or commits[first].time < cut:  # the newest is the latest time
                continue
            for i in (first, *older.get(path, ())):
                commit = commits[i]
                if commit.time >= cut:
                    hits.setdefault(commit, []).append(path)
        return hits, undated


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


def parse_history(out: bytes) -> History:
    """`git log -z --name-status` in the pass's format -> History.

    Each commit is NUL, its header, NUL, then (when it touched files) a newline and pairs of
    status and path, each ended by NUL; an empty field always precedes a commit's header.
    """
    commits: list[Commit] = []
    newest: dict[str, int] = {}
    older: dict[str, list[int]] = {}
    deleted: set[str] = set()
    get = newest.get
    fields = _decode(out).split("\0")
    n = len(fields)
    i = 0
    header = ""
    idx = -1  # the current commit's index, -1 until its first path
    ct = 0
    while i < n:
        field = fields[i]
        if not field:  # a commit: its header follows
            i += 1
            header = fields[i] if i < n else ""
            idx = -1
            i += 1
            continue
        if i + 1 >= n:
            break
        path = fields[i + 1]
        i += 2
        if idx < 0:
            commits.append(_commit(header))
            idx = len(commits) - 1
            ct = commits[idx].time
        seen = get(path)
        if seen is None:
            newest[path] = idx
            if field[-1] == "D":
                deleted.add(path)
            continue
        if ct > commits[seen].time:  # clock skew: a commit listed later is the newer one
            newest[path] = idx
            older.setdefault(path, []).insert(0, seen)
            if field[-1] == "D":
                deleted.add(path)
            else:
                deleted.discard(path)
            continue
        lst = older.get(path)
        if lst is None:
            older[path] = [idx]
        else:
            lst.append(idx)
    gone: dict[str, list[int]] = {}
    for path in deleted:
        gone[path] = [newest.pop(path), *older.pop(path, ())]
    return History(commits, newest, older, gone)


def _merged(old: History, new: History) -> History:
    """The history of OLD..HEAD laid over the cached one: every new commit is newer."""
    offset = len(old.commits)
    newest, older, gone = dict(old.newest), dict(old.older), dict(old.gone)
    for path, events, deleted in _events(new):
        shifted = [i + offset for i in events]
        kept = path in newest
        before = [newest.pop(path), *older.pop(path, ())] if kept else gone.pop(path, [])
        every = shifted + before
        if deleted:
            gone[path] = every
        else:
            newest[path] = every[0]
            if len(every) > 1:
                older[path] = every[1:]
    return History(old.commits + new.commits, newest, older, gone)


def _events(h: History) -> Iterator[tuple[str, list[int], bool]]:
    """(path, its commits newest first, whether the newest deleted it) for every path."""
    for path, first in h.newest.items():
        yield path, [first, *h.older.get(path, ())], False
    for path, events in h.gone.items():
        yield path, events, True


def parse_log(out: bytes) -> tuple[dict[str, int], dict[str, int]]:
    """(changed, deleted): each path's newest committer time, split by whether that newest
    event kept the file or deleted it (parse_history, reduced to times)."""
    h = parse_history(out)
    changed = {p: h.commits[i].time for p, i in h.newest.items()}
    deleted = {p: h.commits[events[0]].time for p, events in h.gone.items()}
    return changed, deleted
