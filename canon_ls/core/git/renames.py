"""Where an orphan's asset went when it was renamed in its own folder (SPEC §6.1 item 5, §10 "Move
article to …")."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from canon_ls.core.checking.assets import address_of_path
from canon_ls.core.git import gitrun
from canon_ls.core.git.changes import SMALL_WINDOWS
from canon_ls.core.storage import cache
from canon_ls.core.storage.address import parent

COMMITS = 500  # the newest commits touching the orphans' folders that are looked at
FOLDERS = 64  # at most this many folders in the one git call (its pathspec)
# The pack mapped up to 16 MB and a 16 MB delta cache: as fast as 48 MB and 32 MB, and 75 -> 37
# MB of git at 100k files, 107 -> 68 MB at 500k (docs/BENCHMARKS.md, issue 40 item 3).
SMALL_PASS = (*SMALL_WINDOWS, "-c", "core.deltaBaseCacheLimit=16m")


def renamed_in_place(
    project: Path,
    orphans: Iterable[str],
    files: Callable[[str], list[str]],
    has_article: Callable[[str], bool],
    tracked: Callable[[str], bool] | None = None,
    limit: int = 3,
) -> dict[str, list[str]]:
    """For each orphan, the addresses in its folder that likely replaced its asset: renames git
    detected first (newest first), then files new since HEAD."""
    by_folder = orphan_folders(orphans)
    if not by_folder:
        return {}
    out: dict[str, list[str]] = {}

    def offer(orphan: str, path: str) -> None:
        folder = parent(orphan)
        rest = path[len(folder) + 1 :] if path.startswith(folder + "/") else ""
        if not rest:
            return
        head, slash, _ = rest.partition("/")
        candidate = f"{folder}/{head if slash else address_of_path(head)}"
        guesses = out.setdefault(orphan, [])
        fresh = candidate != orphan and candidate not in guesses and len(guesses) < limit
        if fresh and not has_article(candidate) and os.path.exists(os.path.join(project, path)):
            guesses.append(candidate)

    for old, new in _git_renames(project, sorted(by_folder)[:FOLDERS]):
        for orphan in by_folder.get(_folder_of(old, by_folder), ()):
            if old == orphan or address_of_path(old) == orphan or old.startswith(orphan + "/"):
                offer(orphan, new)
    if tracked is not None:
        for folder, wanted in by_folder.items():
            for path in files(folder):
                if not tracked(path):
                    for orphan in wanted:
                        offer(orphan, path)
    return {k: v for k, v in out.items() if v}


def orphan_folders(orphans: Iterable[str]) -> dict[str, list[str]]:
    """The folders the search looks in (each orphan's own), with their orphans."""
    by_folder: dict[str, list[str]] = {}
    for orphan in orphans:
        if "/" in orphan and ":" not in orphan:
            by_folder.setdefault(parent(orphan), []).append(orphan)
    return by_folder


def _folder_of(path: str, folders: dict[str, list[str]]) -> str:
    """The orphans' folder `path` lies in (at any depth), or ''."""
    at = path
    while "/" in at:
        at = at.rpartition("/")[0]
        if at in folders:
            return at
    return ""


def search_early(project: Path, orphans: Iterable[str]) -> None:
    """Run the search for these likely orphans now, while the check is small (its answer is
    kept: the check's own search for the same folders runs no git)."""
    if folders := orphan_folders(orphans):
        _git_renames(project, sorted(folders)[:FOLDERS])


def _git_renames(project: Path, folders: list[str]) -> list[tuple[str, str]]:
    """(old path, new path) of the renames git finds in the newest commits touching
    `folders`, newest first; [] without git. The answer for a HEAD and these folders is kept
    (here and in the cache directory): a check again, or the next start, runs no `log -M` (its
    git held 35-68 MB beside the check's store, issue 40 item 3)."""
    head = (gitrun.run(project, "rev-parse", "--verify", "-q", "HEAD") or b"").strip().decode()
    file = cache.project_cache_file(project, "renames") if head else None
    kept = _kept.get(str(project)) or cache.read_sealed(file)
    if isinstance(kept, list) and len(kept) == 3 and kept[:2] == [head, folders]:
        return [tuple(pair) for pair in kept[2]]
    out = gitrun.run(
        project,
        *SMALL_PASS,
        "log",
        "-M",
        "--diff-filter=R",
        "--name-status",
        "--relative",
        "-z",
        "--format=",
        f"--max-count={COMMITS}",
        "HEAD",
        "--",
        *folders,
    )
    fields = (out or b"").decode("utf-8", "surrogateescape").split("\0")
    pairs = []
    at = 0
    while at + 2 < len(fields):
        status = fields[at].strip()
        if status.startswith("R"):
            pairs.append((fields[at + 1], fields[at + 2]))
            at += 3
        else:
            at += 2 if status else 1
    if file is not None and out is not None:
        cache.write_sealed(file, [head, folders, pairs])
    if out is not None:
        _kept[str(project)] = [head, folders, pairs]
    return pairs


_kept: dict[str, list[Any]] = {}  # the last answer per project (a process without a cache)
