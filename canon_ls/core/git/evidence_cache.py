"""A read's staleness evidence (SPEC §6 read, §9.1) without git while nothing it rests on moved:
kept per article in sealed files with when it was measured, and trusted only while git's state
(HEAD, its ref, packed refs, index, config, excludes), the day, the article file, and every file and
folder the article can govern (and the folders above) are unchanged since (ctime before then)."""

from __future__ import annotations

import os
import stat
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canon_ls.core.storage import cache, freshness
from canon_ls.core.storage.address import may_name
from canon_ls.core.storage.clock import today

if TYPE_CHECKING:
    from canon_ls.core.storage.store import Store

WALK_MAX = 100_000  # entries checked before a read asks git instead
SHARDS = 32  # files: a read loads 1/32 of a 50k-article store's evidence
_SOURCES = ("canon_ls.core.git.evidence", "canon_ls.core.git.staleness", __name__)
Newest = Callable[[str], int | None] | None  # a folder's newest change below, when known
_GIT_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY")


def _stat(path: Path) -> tuple[int, ...] | None:
    try:
        return freshness.key(os.stat(path))
    except (OSError, ValueError):
        return None


def git_state(project: Path) -> tuple[Any, ...] | None:
    """What a commit, checkout, reset, `git add` or an ignore rule moves; None when the environment
    places git elsewhere (then git is asked every time)."""
    if any(name in os.environ for name in _GIT_ENV):
        return None
    top = next((d for d in (project, *project.parents) if os.path.lexists(d / ".git")), None)
    if top is None:
        return ("no git",)
    try:
        git = top / ".git"
        if git.is_file():
            git = top / git.read_text("utf-8").removeprefix("gitdir:").strip()
        head = (git / "HEAD").read_bytes()
        shared = git / "commondir"
        common = git / shared.read_text("utf-8").strip() if shared.exists() else git
    except (OSError, ValueError):
        return None
    ref = head[4:].strip().decode("utf-8", "replace") if head[:4] == b"ref:" else "HEAD"
    home = Path(os.path.expanduser("~"))  # never raises, unlike Path.home()
    user = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "git"
    files = [git / "index", git / ref, common / ref, common / "packed-refs", common / "config"]
    files += [common / "info/exclude", common / "reftable/tables.list", user / "ignore"]
    return (str(top), head, *map(_stat, [*files, user / "config", home / ".gitconfig"]))


def _shard(store: Store, address: str) -> Path | None:
    file = cache.cache_file(store.root, store.project, "evidence")
    n = zlib.crc32(address.encode("utf-8", "surrogateescape")) % SHARDS
    return None if file is None else file.with_suffix(f".{n}.bin")


def _load(file: Path | None, header: tuple[Any, ...] | None) -> dict[str, Any]:
    try:
        saved, kept = cache.read_sealed(file)
    except (TypeError, ValueError):  # None or not a pair: nothing kept
        return {}
    return kept if saved == header and isinstance(kept, dict) else {}


def unmoved(project: Path, address: str, since: int, folders_only: bool, newest: Newest) -> bool:
    """Whether every file and folder the article at `address` can govern (`folders_only`: under
    the articles folder, where an article nearer to them moves its folder), and the folders above
    them, last changed (ctime: no tool sets it back) before `since`; a big tree is not walked,
    nor one whose `newest` change below is known (`canon mcp`)."""
    parent, _, leaf = address.rpartition("/")
    folders = [project, *(project / parent[:i] for i, c in enumerate(parent + "/") if c == "/")]
    rules = [f / ".gitignore" for f in folders]  # an ignore rule edited in place moves no folder
    if any((_stat(p) or (0, 0, 0, 0))[3] >= since for p in folders + rules):  # nor does an edit
        return False
    stack, seen, below = [str(folders[-1])] if folders[-1].is_dir() else [], 0, False
    try:
        while stack:
            with os.scandir(stack.pop()) as it:
                for entry in it:  # the parent folder: the article's own names; below: all
                    if folders_only and below and not entry.is_dir(follow_symlinks=False):
                        continue
                    if below or may_name(entry.name, leaf):
                        st = entry.stat(follow_symlinks=False)
                        seen += 1
                        known = newest(entry.path) if newest and stat.S_ISDIR(st.st_mode) else None
                        if max(st.st_ctime_ns, known or 0) >= since or seen > WALK_MAX:
                            return False
                        if stat.S_ISDIR(st.st_mode) and known is None:
                            stack.append(entry.path)
            below = True
    except OSError:
        return False
    return True


def remember(store: Store, found: dict[str, tuple[Any, str | None]], since: int) -> None:
    """Keep address -> (the article file's stat key as parsed, line or None) measured from `since`
    (ns, taken before git and the listing ran); never raises."""
    state, shards = git_state(store.project), dict[Path | None, dict[str, Any]]()
    header = state and (cache.fingerprint(_SOURCES), state, today())
    for address, (own, line) in found.items():
        entry = (since - freshness.RACY_NS, own, line)
        shards.setdefault(_shard(store, address), {})[address] = entry
    for file, fresh in shards.items() if header else ():
        if file is not None:
            cache.write_sealed(file, (header, {**_load(file, header), **fresh}))


def cached_line(store: Store, address: str) -> tuple[bool, str | None]:
    """(found, the read's evidence line) from the cache while nothing it rests on moved: such a
    read imports and runs no git; else (False, None) and staleness.measured_line measures."""
    own, state = store.stat_key(address), git_state(store.project)
    header = state and own and (cache.fingerprint(_SOURCES), state, today())
    hit = _load(_shard(store, address), header).get(address) if header else None
    found = (
        hit is not None
        and tuple(hit[1]) == own
        and unmoved(store.project, address, hit[0], False, store.newest_below)
        and unmoved(store.articles_dir, address, hit[0], True, store.newest_below)
    )
    return (True, hit[2]) if found and hit is not None else (False, None)
