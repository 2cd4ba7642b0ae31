"""The asset set (SPEC §9): the project's files and directories by address.

In a git work tree the listing is what git lists (gitignored files never count); elsewhere a
walk. The checker (core/check.py), staleness (core/staleness.py) and `canon graph` read it; the
change times come from core/changes.py.

Decision (SPEC §9 leaves it open): when a file `x.py` and a directory `x/` both exist, the
article `x` governs both; its asset set is their union.
"""

from __future__ import annotations

import bisect
import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

from canon_ls.core import gitrun, walk
from canon_ls.core.lint import Finding  # re-exported: the finding adapters name from here

__all__ = [
    "DEFAULT_IGNORES",
    "Assets",
    "Finding",
    "address_of_path",
    "has_gitignore",
    "scope_pathspecs",
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
