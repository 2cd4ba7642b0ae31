"""The asset set (SPEC §9): the project's files and directories by address."""

from __future__ import annotations

import contextlib
import os
import re
import time
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from canon_ls.core.git import gitrun
from canon_ls.core.git.pathtable import after as _after
from canon_ls.core.git.pathtable import encode as _encode
from canon_ls.core.git.pathtable import lower as _lower
from canon_ls.core.git.pathtable import split as _split
from canon_ls.core.storage import walk
from canon_ls.core.storage.address import governing_in, may_name

_SKIP_DIRS = frozenset({".git", ".canon"})
# Never assets in a project with no .gitignore or no git at all: environments, dependencies,
# caches and build output (a `.venv` alone is thousands of files no article is about).
DEFAULT_IGNORES = frozenset(
    {".venv", "venv", "node_modules", "__pycache__", ".tox", "dist", "build", ".mypy_cache"}
)


_SKIP_SEGMENTS = frozenset(d.encode() for d in _SKIP_DIRS)
_SKIP_NEEDLES = tuple(sorted(_SKIP_SEGMENTS))
_EDITS_MAX = 20_000  # untracked plus deleted files merged into git's sorted listing in place
_LOOKUPS_MAX = 64  # any_mapped: bisect for each address up to this many, else one pass


def address_of_path(relpath: str) -> str:
    """SPEC §3 for a clean project-relative path: strip one extension from the last segment."""
    if "\\" in relpath or "/." in relpath or relpath.startswith("."):
        from canon_ls.core.storage.address import normalise

        return normalise(relpath)
    relpath = relpath.rstrip("/")
    slash = relpath.rfind("/")
    dot = relpath.rfind(".")
    return relpath[:dot] if dot > slash + 1 else relpath


def scope_pathspecs(address: str) -> tuple[str, str]:
    """Git pathspecs for what an article at `address` can govern: the address itself (a file,
    or a directory and all below) and the address plus one extension."""
    escaped = "".join("\\" + c if c in "*?[]\\" else c for c in address)
    return f":(literal){address}", f":(glob){escaped}.*"


def _ignored(relpath: bytes) -> bool:
    if b".git" not in relpath and b".canon" not in relpath:
        return False
    return any(seg in _SKIP_SEGMENTS for seg in relpath.split(b"/"))


def has_gitignore(project: Path) -> bool:
    """A `.gitignore` in the project or an ancestor up to its work tree's top (the directory
    holding `.git`): then git's own rules say what is ignored, not DEFAULT_IGNORES."""
    for directory in (Path(project), *Path(project).parents):
        if os.path.isfile(os.path.join(directory, ".gitignore")):
            return True
        if os.path.exists(os.path.join(directory, ".git")):
            return False
    return False


_OTHER_OR_GONE = re.compile(rb"\0[?R] [^\0]*")  # an untracked (?) or deleted (R) file's entry


def _tagged(out: bytes) -> tuple[bytes, list[bytes], list[bytes], bool]:
    """`git ls-files -z -t -c -o -d`: the index's paths as git lists them (byte order, the tags
    taken off), the untracked (`?`), the deleted (`R`, each also listed as in the index), and
    whether a conflict (`M`: one entry per stage) is among them."""
    out = b"\0" + out
    extra = re.findall(rb"\0\? ([^\0]*)", out)
    dropped = re.findall(rb"\0R ([^\0]*)", out)
    unmerged = b"\0M " in out
    if extra or dropped:
        out = _OTHER_OR_GONE.sub(b"", out)
    for tag in (b"\0H ", b"\0S ", b"\0M "):  # tracked, skip-worktree, unmerged
        if tag in out:
            out = out.replace(tag, b"\0")
    return out[1:], [p for p in extra if p], [p for p in dropped if p], unmerged


class Assets:
    """The project's files and directories by address (SPEC §9)."""

    def __init__(
        self,
        project: Path,
        store_root: Path | None = None,
        scope: str | None = None,
        listed: list[bytes] | None = None,
    ) -> None:
        """`scope`: list only the files an article at that address can govern (its exact-address
        files and its directory), for a one-article question such as `canon read`; `listed`:
        those files, known already (core/git/indexprobe.py), in place of git's listing."""
        self.project = Path(project)
        self._scope = scope.strip("/") if scope else None
        self._skip_prefix = ""
        if store_root is not None:
            with contextlib.suppress(ValueError):
                rel = Path(store_root).resolve().relative_to(self.project.resolve()).as_posix()
                self._skip_prefix = "" if rel == "." else rel + "/"
        self.git = False
        self.default_ignores = False  # DEFAULT_IGNORES apply (no .gitignore, or no git)
        self._data = b""  # every listed file's path, NUL-ended, in byte order
        self._packed: bytes | None = None  # the same compressed, while pack()ed
        self._dirs: set[str] | None = None  # derived on first need
        self._odd: dict[str, list[str]] = {}  # address -> paths not starting with it ('\\')
        self._listed = listed
        self.refresh()

    def refresh(self) -> None:
        """Re-list the project (a few git processes at once, or a walk)."""
        self.started_ns = time.time_ns()  # the listing is as the files were from here on
        self.default_ignores = not has_gitignore(self.project)
        listed, self._listed = self._listed, None  # (once: a refresh lists anew)
        blob = self._git_blob() if listed is None else self._joined(listed)
        self.git = blob is not None
        if blob is None:
            self.default_ignores = True
            blob = self._joined(_encode(f) for f in self._walk_files())
        self._set(blob)

    def _keep(self, path: bytes) -> bool:
        skip = self._skip_prefix
        return bool(path) and not _ignored(path) and not (skip and path.startswith(_encode(skip)))

    def _joined(self, paths: Iterable[bytes]) -> bytes:
        """The blob of any paths: filtered, deduplicated, sorted."""
        return b"".join(p + b"\0" for p in sorted({p for p in paths if self._keep(p)}))

    def _git_blob(self) -> bytes | None:
        spec = ("--", *scope_pathspecs(self._scope)) if self._scope else ()
        # --exclude skips untracked files only: a file committed under build/ stays an asset
        defaults = (
            [f"--exclude={d}/" for d in sorted(DEFAULT_IGNORES)] if self.default_ignores else []
        )
        if self._scope:  # one index read, not four (each is ~50 ms at 500k files); see on_disk
            both = ("-z", "-c", "-o", "--exclude-standard", *defaults, *spec)
            out = gitrun.run(self.project, "ls-files", *both)
            return None if out is None else self._joined(out.split(b"\0"))
        # One index read, not four: each git reading it held ~180 MB at 500k files (issue 40)
        out = gitrun.run(
            self.project, "ls-files", "-z", "-t", "-c", "-o", "-d", "--exclude-standard",
            *defaults, *spec,
        )  # fmt: skip
        if out is None:
            return None
        cached, extra, dropped, unmerged = _tagged(out)
        if unmerged or len(extra) + len(dropped) > _EDITS_MAX:
            # a conflict lists a path once per stage; many edits: merging costs more than this
            gone_set = set(dropped)
            return self._joined(p for p in (*cached.split(b"\0"), *extra) if p not in gone_set)
        # git lists the index in byte order: edit it in place of re-sorting 500k names
        return _edited(cached, self._unwanted(cached, dropped), sorted(filter(self._keep, extra)))

    def _unwanted(self, blob: bytes, dropped: list[bytes]) -> list[tuple[int, int]]:
        """Byte spans of `blob` to leave out: deleted files, `.git`/`.canon` segments, the
        store root. A skipped directory is one contiguous span (byte order)."""
        spans: list[tuple[int, int]] = []
        for path in dropped:
            at = _lower(blob, path)
            end = at + len(path) + 1
            if blob[at:end] == path + b"\0":
                spans.append((at, end))
        skip = _encode(self._skip_prefix) if self._skip_prefix else b""
        if skip:
            spans.append((_lower(blob, skip), _lower(blob, _after(skip))))
        for needle in _SKIP_NEEDLES:
            i = blob.find(needle)
            while i >= 0:
                j = i + len(needle)
                tail = blob[j : j + 1]
                if (i == 0 or blob[i - 1] in b"\0/") and tail in (b"/", b"\0"):
                    start = blob.rfind(b"\0", 0, i) + 1
                    # a directory: every file below it is one span
                    end = j + 1 if tail == b"\0" else _lower(blob, _after(blob[start : j + 1]))
                    spans.append((start, end))
                    i = blob.find(needle, end)
                else:
                    i = blob.find(needle, j)
        return spans

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
            if not may_name(name, leaf):
                continue
            full = os.path.join(base, name)
            if os.path.isdir(full) and name not in _SKIP_DIRS and name not in DEFAULT_IGNORES:
                out.extend(self._walk(full))
            elif os.path.isfile(full):
                out.append(prefix + name)
        return out

    def _walk(self, top: str) -> list[str]:
        """Every file under `top` without git: an iterative walk (deep trees cost no recursion),
        symlinks not followed, special files and paths past the length limit left out."""
        root = str(self.project)
        rel = top[len(root.rstrip(os.sep)) + 1 :].replace(os.sep, "/") if top != root else ""
        out: list[str] = []
        stack = [(top, rel + "/" if rel else "")]
        for entry, prefix in walk.entries(stack):
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in _SKIP_DIRS and entry.name not in DEFAULT_IGNORES:
                        stack.append((entry.path, prefix + entry.name + "/"))
                elif entry.is_file():
                    out.append(prefix + entry.name)
            except OSError:
                continue
        return out

    def _set(self, blob: bytes) -> None:
        self._data, self._packed = blob, None
        self._dirs = None
        self._odd = {}
        if b"\\" not in blob:
            return
        # a backslash is a separator to SPEC §3: such paths' addresses are not their prefixes
        for path in _split(blob):
            if "\\" not in path:
                continue
            self._odd.setdefault(address_of_path(path), []).append(path)
            cut = path.rfind("/")
            while cut > 0:
                d = path[:cut]
                if "\\" in d:
                    self._odd.setdefault(address_of_path(d), []).append(d + "/")
                cut = d.rfind("/")

    @property
    def _blob(self) -> bytes:
        if self._packed is not None:
            # its size given: zlib writes into one buffer (else blocks joined: twice the size)
            size = int.from_bytes(self._packed[:8], "big")
            self._data = zlib.decompress(memoryview(self._packed)[8:], bufsize=size)
            self._packed = None
        return self._data

    def pack(self) -> None:
        """Hold the listing compressed until the next question (sorted paths shrink ~8x): the
        check child's wait for git, when git's output is about to arrive."""
        if self._packed is None and self._data:
            size = len(self._data).to_bytes(8, "big")
            self._packed, self._data = size + zlib.compress(self._data, 1), b""

    def iter_files(self) -> Iterator[str]:
        """Every listed file in byte order, decoded a chunk at a time (no list of them all)."""
        return _split(self._blob)

    def files(self) -> list[str]:
        """Every listed file, sorted."""
        return list(self.iter_files())

    def dirs(self) -> set[str]:
        """Every directory holding listed files, at any depth (not the project root)."""
        if self._dirs is None:
            self.survey([])
        assert self._dirs is not None
        return self._dirs

    def is_dir(self, relpath: str) -> bool:
        """Whether the listing holds files under this directory."""
        prefix = _encode(relpath.strip("/") + "/")
        at = _lower(self._blob, prefix)
        return self._blob.startswith(prefix, at)

    def of(self, address: str) -> list[str]:
        """Project-relative paths whose address is `address`; directories end with '/'."""
        blob = self._blob
        key = _encode(address)
        files: list[str] = []
        dirs: set[str] = set()
        at = _lower(blob, key)
        if blob.startswith(key + b"\0", at):
            files.append(address)
        lo, hi = _lower(blob, key + b"."), _lower(blob, key + b"/")
        for path in _split(blob, lo, hi):  # 'address.ext' files and 'address.ext/' dirs
            cut = path.find("/", len(address))
            if cut < 0:
                if address_of_path(path) == address:
                    files.append(path)
            elif address_of_path(path[:cut]) == address:
                dirs.add(path[: cut + 1])
        if address and address_of_path(address) == address and self.is_dir(address):
            dirs.add(address + "/")  # (a directory 'x.d' has the address 'x', not 'x.d')
        found = files + sorted(dirs)
        for path in self._odd.get(address, ()):
            if path not in found:
                found.append(path)
        return found

    def any_mapped(self, addresses: Iterable[str]) -> bool:
        """Whether at least one of the addresses has an asset."""
        wanted = list(addresses)
        if len(wanted) <= _LOOKUPS_MAX:
            return any(self.of(a) for a in wanted)
        return bool(self.survey(sorted(wanted)).mapped)

    def under(self, directory: str, skip: Iterable[str] = ()) -> list[str]:
        """Files below `directory` (any depth), sorted, but for those below the folders `skip`."""
        prefix = _encode(directory.strip("/") + "/")
        blob, last, out = self._blob, b"\0", list[str]()
        lo = _lower(blob, prefix)
        for folder in sorted(_encode(d + "/") for d in skip):
            if not folder.startswith(last):  # (else inside a folder skipped already)
                out.extend(_split(blob, lo, _lower(blob, folder)))
                lo, last = _lower(blob, _after(folder)), folder
        return out + list(_split(blob, lo, _lower(blob, _after(prefix))))

    def on_disk(self, paths: Iterable[str]) -> Iterator[str]:
        """These listed paths less those deleted: a scoped listing holds deleted files too (an
        lstat each of a folder's 31k files costs ~80 ms; its article governs a few of them)."""
        if not self._scope:  # (git listed the deleted ones apart: left out already)
            return iter(paths)
        return (p for p in paths if os.path.lexists(os.path.join(self.project, p)))

    def blob(self) -> bytes:
        """Every listed file's path, NUL-ended, in byte order (as iter_files, undecoded)."""
        return self._blob

    def survey(self, articles: list[str]) -> Survey:
        """One streaming pass over the listing for every article at once: which have an asset
        and which article governs each file (SPEC §4, §9); it derives the directories too."""
        index = {a: i for i, a in enumerate(articles)}
        get = index.get
        governing = array("i")
        add = governing.append
        mapped: set[str] = set()
        seen: set[str] = set()
        dir_gov: dict[str, int] = {"": -1}
        odd = bool(self._odd)
        last_dir, last_gov = None, -1
        for path in self.iter_files():
            slash = path.rfind("/")
            d = path[:slash] if slash > 0 else ""
            if d != last_dir:
                last_dir = d
                last_gov = _dir_governing(d, get, dir_gov)
                while d and d not in seen:  # directories first met here, and their addresses
                    seen.add(d)
                    a = address_of_path(d) if odd else _address(d)
                    if a in index:
                        mapped.add(a)
                    cut = d.rfind("/")
                    d = d[:cut] if cut > 0 else ""
            if odd:
                a = address_of_path(path)
                i = get(a)
                if i is None:
                    g = governing_in(a, index)
                    i = -1 if g is None else index[g]
                elif a not in mapped:
                    mapped.add(a)
            else:
                dot = path.rfind(".")
                i = get(path[:dot] if dot > slash + 1 else path)
                if i is None:
                    i = last_gov
                else:
                    mapped.add(articles[i])
            add(i)
        self._dirs = seen
        return Survey(articles, mapped, governing)


class Survey(NamedTuple):
    """Every article's answers from one pass over the listing (Assets.survey)."""

    articles: list[str]  # the addresses asked about
    mapped: set[str]  # those with an asset: a file or directory at their address
    governing: array  # per listed file, in listing order: index of its governing article, or -1


def _address(path: str) -> str:
    """address_of_path for a clean path without a backslash (the survey's inner loop)."""
    slash = path.rfind("/")
    dot = path.rfind(".")
    return path[:dot] if dot > slash + 1 else path


def _dir_governing(d: str, get: Callable[[str], int | None], known: dict[str, int]) -> int:
    """Index of the article governing directory `d` (SPEC §4: itself or its nearest ancestor), -1
    for none; `known` (holding "") remembers every directory answered."""
    met: list[str] = []
    found = known.get(d)
    while found is None:
        found = get(d)
        if found is None:
            met.append(d)
            cut = d.rfind("/")
            d = d[:cut] if cut > 0 else ""
            found = known.get(d)
        else:
            known[d] = found
    for each in met:
        known[each] = found
    return found


def _edited(blob: bytes, drop: list[tuple[int, int]], add: list[bytes]) -> bytes:
    """`blob` without the byte spans `drop`, with the sorted paths `add` merged in order."""
    if not drop and not add:
        return blob
    events = sorted([(s, 1, e, b"") for s, e in drop] + [(_lower(blob, p), 0, 0, p) for p in add])
    out: list[bytes] = []
    cur = 0
    for at, kind, end, path in events:
        if at > cur:
            out.append(blob[cur:at])
            cur = at
        if kind == 0:
            out.append(path + b"\0")
        else:
            cur = max(cur, end)
    out.append(blob[cur:])
    return b"".join(out)
