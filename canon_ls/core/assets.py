"""Asset sets, orphans, staleness and graph relations over the whole store (SPEC §9, §7).

What the editor adds on top of the write path: the project's files by address, their change
times from ONE `git log` pass (cached by HEAD, then incremental), and the whole-store check that
`canon check` and the language server publish.

Decision (SPEC §9 leaves it open): when a file `x.py` and a directory `x/` both exist, the
article `x` governs both; its asset set is their union.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import marshal
import os
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from canon_ls.core import cache, gitrun, lint
from canon_ls.core import schema as schema_mod
from canon_ls.core.address import governing_in
from canon_ls.core.clock import today as _today
from canon_ls.core.evidence import Evidence, date_of, day, gather, is_stale, reference_of
from canon_ls.core.lint import Finding

if TYPE_CHECKING:
    from canon_ls.core.article import Article
    from canon_ls.core.schema import Schema
    from canon_ls.core.store import Store

__all__ = [
    "Assets",
    "ChangeTimes",
    "Commit",
    "Finding",
    "address_of_path",
    "article_findings",
    "check",
    "evidence_for",
    "evidence_one",
    "children_unlisted",
    "governed_files",
    "orphans",
    "parse_history",
    "parse_log",
    "scope_pathspecs",
    "stale",
    "stale_evidence",
    "stale_finding",
    "stale_one",
    "unreferenced",
]

_SKIP_DIRS = frozenset({".git", ".canon"})
# Never assets in a project with no .gitignore or no git at all: environments, dependencies,
# caches and build output (a `.venv` alone is thousands of files no article is about).
DEFAULT_IGNORES = frozenset(
    {".venv", "venv", "node_modules", "__pycache__", ".tox", "dist", "build", ".mypy_cache"}
)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def address_of_path(relpath: str) -> str:
    """SPEC §3 for a clean project-relative path: strip one extension from the last segment.

    Directories are given with or without a trailing '/'. Same result as address.normalise for
    the paths git and os.walk produce, at a fraction of its cost (it runs for every file).
    """
    if "\\" in relpath or "/." in relpath or relpath.startswith("."):
        from canon_ls.core.address import normalise

        return normalise(relpath)
    relpath = relpath.rstrip("/")
    slash = relpath.rfind("/")
    dot = relpath.rfind(".")
    if dot > slash + 1:
        return relpath[:dot]
    return relpath


def scope_pathspecs(address: str) -> tuple[str, str]:
    """Git pathspecs for what an article at `address` can govern: the address itself (a file,
    or a directory and all below) and the address plus one extension."""
    escaped = "".join("\\" + c if c in "*?[]\\" else c for c in address)
    return f":(literal){address}", f":(glob){escaped}.*"


def _ignored(relpath: str) -> bool:
    if ".git" not in relpath and ".canon" not in relpath:
        return False
    return any(seg in _SKIP_DIRS for seg in relpath.split("/"))


def has_gitignore(project: Path) -> bool:
    """A `.gitignore` in the project or an ancestor up to its work tree's top (the directory
    holding `.git`): then git's own rules say what is ignored, not DEFAULT_IGNORES."""
    for directory in (Path(project), *Path(project).parents):
        if os.path.isfile(os.path.join(directory, ".gitignore")):
            return True
        if os.path.exists(os.path.join(directory, ".git")):
            return False
    return False


class Assets:
    """The project's files and directories by address (SPEC §9).

    In a git work tree the listing is `git ls-files --cached --others --exclude-standard` minus
    files deleted from the work tree, so gitignored files never count; elsewhere an os.walk.
    `.git/` and `.canon/` (and a custom store root) are skipped. Directories are derived from
    the files: `src/core/config/` has the address `src/core/config`.

    Decision (SPEC §9 says only "what .gitignore ignores"): without a `.gitignore` the
    directories in DEFAULT_IGNORES are not assets either: without git none of their files
    count; in a git work tree their untracked files do not (a file committed there does).
    """

    def __init__(
        self, project: Path, store_root: Path | None = None, scope: str | None = None
    ) -> None:
        """`scope`: list only the files an article at that address can govern (its exact-address
        files and its directory), for a one-article question such as `canon read`."""
        self.project = Path(project)
        self._scope = scope.strip("/") if scope else None
        self._skip_prefix = ""
        if store_root is not None:
            with contextlib.suppress(ValueError):
                rel = Path(store_root).resolve().relative_to(self.project.resolve()).as_posix()
                self._skip_prefix = "" if rel == "." else rel + "/"
        self.git = False
        self.default_ignores = False  # DEFAULT_IGNORES apply (no .gitignore, or no git)
        self._files: list[str] = []  # sorted project-relative file paths
        self._dirs: set[str] = set()
        self._by_address: dict[str, list[str]] = {}
        self.refresh()

    # -- listing --------------------------------------------------------------------------
    def refresh(self) -> None:
        """Re-list the project (one or two git processes, or a walk)."""
        self.default_ignores = not has_gitignore(self.project)
        files = self._git_files()
        self.git = files is not None
        if files is None:
            self.default_ignores = True
            files = self._walk_files()
        skip = self._skip_prefix
        files = sorted({f for f in files if not _ignored(f) and not (skip and f.startswith(skip))})
        self._build(files)

    def _git_files(self) -> list[str] | None:
        spec = ("--", *scope_pathspecs(self._scope)) if self._scope else ()
        # --exclude skips untracked files only: a file committed under build/ stays an asset
        defaults = (
            [f"--exclude={d}/" for d in sorted(DEFAULT_IGNORES)] if self.default_ignores else []
        )
        listed, gone = gitrun.run_many(
            self.project,
            ("ls-files", "-z", "--cached", "--others", "--exclude-standard", *defaults, *spec),
            ("ls-files", "-z", "--deleted", *spec),
        )
        if listed is None:
            return None
        names = _decode(listed).split("\0")
        missing = set(_decode(gone).split("\0")) if gone else set()
        return [n for n in names if n and n not in missing]

    def _walk_files(self) -> list[str]:
        if self._scope is None:
            return self._walk(str(self.project))
        parent, _, leaf = self._scope.rpartition("/")
        if any(seg in DEFAULT_IGNORES or seg in _SKIP_DIRS for seg in parent.split("/")):
            return []  # as the whole listing: nothing below such a directory is an asset
        base = os.path.join(self.project, parent) if parent else str(self.project)
        prefix = parent + "/" if parent else ""
        out: list[str] = []
        try:
            names = os.listdir(base)
        except OSError:
            return out
        for name in names:
            if name != leaf and not name.startswith(leaf + "."):
                continue
            full = os.path.join(base, name)
            if os.path.isdir(full) and name not in _SKIP_DIRS and name not in DEFAULT_IGNORES:
                out.extend(self._walk(full))
            elif os.path.isfile(full):
                out.append(prefix + name)
        return out

    def _walk(self, top: str) -> list[str]:
        """Every file under `top` without git: an iterative walk (a 3,000-deep tree costs no
        recursion; what lies past the path-length limit is skipped), symlinks not followed,
        special files left out."""
        root = str(self.project)
        rel = top[len(root.rstrip(os.sep)) + 1 :].replace(os.sep, "/") if top != root else ""
        out: list[str] = []
        stack = [(top, rel + "/" if rel else "")]
        while stack:
            directory, prefix = stack.pop()
            try:
                it = os.scandir(directory)
            except OSError:
                continue
            with it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if entry.name not in _SKIP_DIRS and entry.name not in DEFAULT_IGNORES:
                                stack.append((entry.path, prefix + entry.name + "/"))
                        elif entry.is_file():
                            out.append(prefix + entry.name)
                    except OSError:
                        continue
        return out

    def _build(self, files: list[str]) -> None:
        self._files = files
        dirs: set[str] = set()
        by_address: dict[str, list[str]] = {}
        for path in files:
            by_address.setdefault(address_of_path(path), []).append(path)
            cut = path.rfind("/")
            while cut > 0:
                d = path[:cut]
                if d in dirs:
                    break
                dirs.add(d)
                cut = d.rfind("/")
        for d in dirs:
            by_address.setdefault(address_of_path(d), []).append(d + "/")
        self._dirs = dirs
        self._by_address = by_address

    # -- queries --------------------------------------------------------------------------
    def files(self) -> list[str]:
        """Every listed file, sorted."""
        return self._files

    def dirs(self) -> set[str]:
        """Every directory holding listed files, at any depth (not the project root)."""
        return self._dirs

    def is_dir(self, relpath: str) -> bool:
        """Whether the listing holds files under this directory."""
        return relpath.strip("/") in self._dirs

    def of(self, address: str) -> list[str]:
        """Project-relative paths whose address is `address`; directories end with '/'."""
        return list(self._by_address.get(address, ()))

    def any_mapped(self, addresses: Iterable[str]) -> bool:
        """Whether at least one of the addresses has an asset."""
        by = self._by_address
        return any(a in by for a in addresses)

    def under(self, directory: str) -> list[str]:
        """Files below `directory` (any depth), sorted."""
        prefix = directory.strip("/") + "/"
        lo = bisect.bisect_left(self._files, prefix)
        hi = bisect.bisect_left(self._files, prefix[:-1] + "0")  # '0' sorts right after '/'
        return self._files[lo:hi]


# ---------------------------------------------------------------------------------------
# Orphans (SPEC §6.1 item 5 over the whole store, §9)


def _mount_of(store: Store, address: str) -> str:
    """The mount name of 'lake:prices' when lake is a mount, else '' (a colon may be a name)."""
    name, colon, _ = address.partition(":")
    return name if colon and name in store.mounts else ""


def _project_addresses(store: Store) -> list[str]:
    return [a for a in store.addresses() if not _mount_of(store, a)]


def orphans(store: Store, assets: Assets) -> list[str]:
    """Nested articles no asset maps to although their parent directory exists on disk.

    Silent for one-segment addresses, declared `scope: rule`, and stores none of whose
    addresses maps to a file (a topic store, not a code map). Mount articles are not judged.
    """
    addresses = _project_addresses(store)
    if not assets.any_mapped(addresses):
        return []
    out = []
    for address in addresses:
        if "/" not in address or assets.of(address):
            continue
        art = store.article(address)
        if art is not None and _is_orphan(store, address, art, assets, checked_store=True):
            out.append(address)
    return out


# ---------------------------------------------------------------------------------------
# Change times (SPEC §9)


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
            history = self._log(head)
            self.full_passes += 1
        self.head, self._history = head, history
        self._save_cache()

    def _is_ancestor(self, old: str, head: str) -> bool:
        return gitrun.run(self.project, "merge-base", "--is-ancestor", old, head) is not None

    def _log(self, revs: str) -> History:
        out = gitrun.run(
            self.project,
            "log",
            "--no-renames",
            "--no-show-signature",
            "--name-status",
            "--relative",
            "-z",
            _LOG_FORMAT,
            revs,
            "--",
        )
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


# ---------------------------------------------------------------------------------------
# Staleness (SPEC §9)


def governed_files(address: str, assets: Assets, articles: set[str]) -> Iterator[str]:
    """Files whose change counts for `address`: its exact-address files, and files under its
    directory that no nearer article governs (SPEC §9)."""
    for path in assets.of(address):
        if not path.endswith("/"):
            yield path
    if assets.is_dir(address):
        for path in assets.under(address):
            if governing_in(address_of_path(path), articles) == address:
                yield path


def governed_pairs(articles: set[str], assets: Assets) -> list[tuple[str, str]]:
    """(file, governing article) for every project file some article governs (SPEC §4, §9).
    Independent of git, so the language server computes it while the git pass runs."""
    pairs = []
    for path in assets.files():
        gov = governing_in(address_of_path(path), articles)
        if gov is not None:
            pairs.append((path, gov))
    return pairs


def newest_changes(
    governed: Iterable[tuple[str, str]], times: ChangeTimes
) -> dict[str, tuple[float, str]]:
    """Article -> (newest change, that file) over the files it governs, in one pass."""
    newest: dict[str, tuple[float, str]] = {}
    for path, gov in governed:
        ts = times.of(path)
        seen = newest.get(gov)
        if seen is None or ts > seen[0]:
            newest[gov] = (ts, path)
    return newest


def stale_reason(
    store: Store, address: str, newest: tuple[float, str] | None, today: str
) -> str | None:
    """The verdict with a short reason when no history is at hand, or None (SPEC §9): the
    language server's re-check after an edit, until the next pass brings the evidence."""
    art = store.article(address)
    if art is None:
        return None
    stale_after = date_of(art.stale_after)
    if stale_after and stale_after <= today:
        return f"{address} is past its stale_after date {stale_after}; review it or update it."
    reference, basis = reference_of(art)
    if newest is None or not reference:
        return None  # no reference date: the front matter finding already says so
    ts, path = newest
    changed = day(ts)
    if changed > reference:
        return (
            f"{address} is stale: {path} changed on {changed}, after the article was last "
            f"{basis} on {reference}; update it, or mark it reviewed if it still holds."
        )
    return None


def stale_evidence(
    store: Store,
    assets: Assets,
    times: ChangeTimes,
    governed: list[tuple[str, str]] | None = None,
    newest: dict[str, tuple[float, str]] | None = None,
) -> dict[str, Evidence]:
    """Address -> evidence for every stale article of the project store (SPEC §9, §9.1).

    The verdict comes from each article's newest governed change (one walk over the files);
    the evidence is gathered for the stale ones only, from the same history pass. Callers that
    already hold the (file, article) pairs or the newest changes pass them in.
    """
    addresses = _project_addresses(store)
    if governed is None:
        governed = governed_pairs(set(addresses), assets)
    if newest is None:
        newest = newest_changes(governed, times)
    now = _today()
    verdicts: dict[str, Article] = {}
    for address in addresses:
        art = store.article(address)
        if art is None:
            continue
        seen = newest.get(address)
        if is_stale(art, day(seen[0]) if seen else "", now):
            verdicts[address] = art
    files: dict[str, list[str]] = {a: [] for a in verdicts}
    if verdicts:  # the stale articles' files, in one walk over the pairs
        for path, gov in governed:
            bucket = files.get(gov)
            if bucket is not None:
                bucket.append(path)
    out = {}
    for address, art in verdicts.items():
        found = gather(address, art, files[address], times, now)
        if found is not None:
            out[address] = found
    return out


def stale(store: Store, assets: Assets, times: ChangeTimes) -> dict[str, str]:
    """Address -> reason sentence (with its evidence) for every stale article (SPEC §9.1)."""
    return {a: e.message() for a, e in stale_evidence(store, assets, times).items()}


def evidence_one(store: Store, address: str, assets: Assets, times: ChangeTimes) -> Evidence | None:
    """stale_evidence() for one article, touching only its governed files."""
    art = store.article(address)
    if art is None or _mount_of(store, address):
        return None
    articles = set(_project_addresses(store))
    files = list(governed_files(address, assets, articles))
    newest = max((times.of(path) for path in files), default=0.0)
    if not is_stale(art, day(newest) if files else "", _today()):
        return None
    return gather(address, art, files, times, _today())


def evidence_for(store: Store, address: str, times: ChangeTimes | None = None) -> Evidence | None:
    """The evidence of one article read on its own (`canon read`): lists only the files it
    can govern and dates them from the shared history pass (its cache, or the new commits).
    None when the article is not stale; never raises for a project git cannot read."""
    art = store.article(address)
    if art is None or _mount_of(store, address):
        return None
    stale_after = date_of(art.stale_after)
    reference, _ = reference_of(art)
    if not reference and not (stale_after and stale_after <= _today()):
        return None  # nothing to compare against (the front matter finding says so)
    assets = Assets(store.project, store.root, scope=address)
    times = times or ChangeTimes(store.project, status_paths=scope_pathspecs(address))
    return evidence_one(store, address, assets, times)


def stale_one(store: Store, address: str, assets: Assets, times: ChangeTimes) -> str | None:
    """stale() for one article, touching only its governed files (incremental re-check)."""
    found = evidence_one(store, address, assets, times)
    return found.message() if found is not None else None


# ---------------------------------------------------------------------------------------
# Graph relations (SPEC §7 relations: orphan.warn, children.listed)


def _inbound(store: Store, addresses: Iterable[str]) -> dict[str, set[str]]:
    """Target address -> the other articles whose wikilinks reach it."""
    inbound: dict[str, set[str]] = {}
    for source in addresses:
        art = store.article(source)
        if art is None:
            continue
        for link in art.links:
            if link.target != source:
                inbound.setdefault(link.target, set()).add(source)
    return inbound


def _children(address: str, addresses: list[str], articles: set[str]) -> list[str]:
    """Direct child articles: below `address`, with no nearer article in between."""
    prefix = address + "/"
    lo = bisect.bisect_left(addresses, prefix)
    hi = bisect.bisect_left(addresses, address + "0")
    out = []
    for child in addresses[lo:hi]:
        up = child.rpartition("/")[0]
        while up != address and up not in articles:
            up = up.rpartition("/")[0]
        if up == address:
            out.append(child)
    return out


def unreferenced(store: Store) -> list[str]:
    """orphan.warn: articles no other article references (SPEC §7)."""
    addresses = store.addresses()
    inbound = _inbound(store, addresses)
    return [a for a in addresses if a not in inbound]


def children_unlisted(store: Store) -> dict[str, list[str]]:
    """children.listed: article -> its direct child articles it does not reference (SPEC §7)."""
    addresses = sorted(store.addresses())
    articles = set(addresses)
    out: dict[str, list[str]] = {}
    for address in addresses:
        children = _children(address, addresses, articles)
        if not children:
            continue
        art = store.article(address)
        targets = {link.target for link in art.links} if art else set()
        missing = [c for c in children if c not in targets]
        if missing:
            out[address] = missing
    return out


def _linked_from_others(store: Store, address: str) -> bool:
    return any(source != address for source in store.backlinks(address))


def _unreferenced_message(address: str) -> str:
    return (
        f"No other article references {address}; the schema asks every article to be linked "
        f"from another one: add [[{address}]] where it belongs (e.g. its parent)."
    )


def _children_message(address: str, missing: list[str]) -> str:
    shown = ", ".join(f"[[{c}]]" for c in missing[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    return (
        f"{address} does not reference its child article(s) {shown}{more}; the schema asks "
        "every article to list its direct children."
    )


# ---------------------------------------------------------------------------------------
# The whole-store check (canon check, language server diagnostics)


def _schema_findings(address: str, art: Article, schema: Schema) -> list[Finding]:
    if schema.error:
        return []  # reported once for the store by check()
    values = {"capsule": art.capsule, "title": art.title, "body": art.body}
    out = []
    for line in schema_mod.violations(schema, values):
        severity = "error" if line.startswith("The schema requires") else "warning"
        out.append(Finding(address, "schema", severity, line))
    return out


def _lint_findings(store: Store, address: str, art: Article, schema: Schema) -> list[Finding]:
    """lint's per-article findings plus schema violations, under the store-level address
    (a mount article knows only its address inside the mount; its links may name either)."""
    mount = _mount_of(store, address)

    def exists(target: str) -> bool:
        if store.article(target) is not None:
            return True
        return bool(mount) and store.article(f"{mount}:{target}") is not None

    found = lint.article_findings(art, exists)
    if art.address != address:
        found = [replace(f, address=address) for f in found]
    if not schema.error:  # a schema-declared bound replaces the built-in line (SPEC §7)
        if schema.declares("capsule", "max_chars"):
            found = [f for f in found if f.code != "capsule-long"]
        if schema.declares("body", "max_chars"):
            found = [f for f in found if f.code != "body-long"]
    return found + _schema_findings(address, art, schema)


def stale_finding(evidence: Evidence) -> Finding:
    """The stale finding of an article, carrying its evidence (SPEC §9.1)."""
    return Finding(evidence.address, "stale", "info", evidence.message(), evidence=evidence)


def _orphan_finding(address: str) -> Finding:
    return Finding(address, "orphan", "warning", " ".join(lint.orphan_question(address)))


def check(
    store: Store,
    assets: Assets | None = None,
    times: ChangeTimes | None = None,
    *,
    staleness: bool = True,
) -> list[Finding]:
    """Every finding of the store (SPEC §11.1 canon check, §10 diagnostics): lints, broken
    links, front matter problems, schema, relations, orphans, stale. A malformed schema.json
    is one finding with the empty address. Missing `assets`/`times` are built here;
    `staleness=False` skips the stale signal and its git pass."""
    if not store.exists():
        return []
    problem = store.layout_problem()
    if problem:  # SPEC §12: nothing is read through a store that leads outside
        return [Finding("", "store-outside", "error", problem)]
    schema = store.schema()
    found: list[Finding] = []
    if schema.error:
        found.append(Finding("", "schema-malformed", "error", schema.malformed_line))
    addresses = store.addresses()
    for address in addresses:
        art = store.article(address)
        if art is not None:
            judge = schema if ":" not in address else store.schema_for(address)
            found += _lint_findings(store, address, art, judge)
    rel = schema.relations if not schema.error else None
    if rel is not None and rel.orphan_warn:
        for address in unreferenced(store):
            found.append(
                Finding(address, "relations-orphan", "warning", _unreferenced_message(address))
            )
    if rel is not None and rel.children_listed:
        for address, missing in children_unlisted(store).items():
            found.append(
                Finding(
                    address, "relations-children", "warning", _children_message(address, missing)
                )
            )
    if assets is None:
        assets = Assets(store.project, store_root=store.root)
    for address in orphans(store, assets):
        found.append(_orphan_finding(address))
    if staleness:
        if times is None:
            times = ChangeTimes(store.project)
        found += [stale_finding(e) for e in stale_evidence(store, assets, times).values()]
    order = {a: i for i, a in enumerate(addresses)}
    found.sort(key=lambda f: (order.get(f.address, -1), f.line, f.start))
    return found


def article_findings(
    store: Store,
    address: str,
    assets: Assets | None = None,
    times: ChangeTimes | None = None,
) -> list[Finding]:
    """check() for one article (the language server's re-check on change): cheap, using the
    caller's `assets`/`times`; orphan needs `assets`, stale needs both (else skipped)."""
    art = store.article(address)
    if art is None:
        return []
    schema = store.schema()
    found = _lint_findings(store, address, art, store.schema_for(address))
    rel = schema.relations if not schema.error else None
    if rel is not None and rel.orphan_warn and not _linked_from_others(store, address):
        found.append(
            Finding(address, "relations-orphan", "warning", _unreferenced_message(address))
        )
    if rel is not None and rel.children_listed:
        addresses = sorted(store.addresses())
        children = _children(address, addresses, set(addresses))
        targets = {link.target for link in art.links}
        missing = [c for c in children if c not in targets]
        if missing:
            found.append(
                Finding(
                    address, "relations-children", "warning", _children_message(address, missing)
                )
            )
    project_article = not _mount_of(store, address)
    if assets is not None and project_article and _is_orphan(store, address, art, assets):
        found.append(_orphan_finding(address))
    if assets is not None and times is not None and project_article:
        evidence = evidence_one(store, address, assets, times)
        if evidence is not None:
            found.append(stale_finding(evidence))
    return found


def _is_orphan(
    store: Store, address: str, art: Article, assets: Assets, checked_store: bool = False
) -> bool:
    """SPEC §6.1 item 5 for one article; `checked_store`: the caller knows some address maps."""
    if "/" not in address or art.scope == "rule" or assets.of(address):
        return False
    if not os.path.isdir(os.path.join(assets.project, address.rpartition("/")[0])):
        return False
    return checked_store or assets.any_mapped(_project_addresses(store))
