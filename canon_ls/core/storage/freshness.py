"""The one freshness rule: when a file read earlier must be read again (SPEC §10 external changes,
§11.3 "written since")."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from canon_ls.core.storage.walk import entries

RACY_NS = 3 * 10**9  # files modified this recently are re-read (coarse mtimes)
Key = tuple[int, int, int, int]  # (mtime_ns, size, inode, ctime_ns)


def key(st: os.stat_result) -> Key:
    """A file's stat key."""
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def key_of(path: str | Path) -> Key | None:
    """The stat key of a regular file (symlinks followed); None when it is missing or not a
    regular file (a FIFO or device is never an article)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return key(st) if stat.S_ISREG(st.st_mode) else None


def settled(k: Key, now_ns: int | None = None) -> bool:
    """Whether a key is old enough to trust: a file whose key is unchanged and settled has
    not changed. `now_ns`: taken before the read the key stands for."""
    return (time.time_ns() if now_ns is None else now_ns) - max(k[0], k[3]) >= RACY_NS


def scan(
    base: str | Path, real: str, on_temp: Callable[[str], object] | None = None
) -> dict[str, Key]:
    """Every article file under `base` (resolved: `real`): address -> stat key. The file is
    `base`/address.md: no path is kept (7 MB of strings at 50k articles, held to the load's end)."""
    found: dict[str, Key] = {}
    for _ in scan_steps(base, real, found, on_temp, step=1 << 62):
        pass
    return found


def scan_steps(
    base: str | Path,
    real: str,
    found: dict[str, Key],
    on_temp: Callable[[str], object] | None = None,
    step: int = 500,
) -> Iterator[int]:
    """`scan` filling `found`, yielding the count so far after every `step` directory entries, so
    an event loop answers between steps (a 50k-article scan is half a second)."""
    from canon_ls.core.storage.fsio import is_temp, within  # fsio is not needed by the hooks

    seen = {real}
    stack = [(str(base), "")]
    n = 0
    for entry, prefix in entries(stack):
        name = entry.name
        try:
            if entry.is_symlink():
                st = _followed(entry, prefix, real, seen, stack, within)
                if st is not None and name.endswith(".md") and len(name) > 3:
                    found[prefix + name[:-3]] = key(st)
            elif entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, prefix + name + "/"))
            elif name.endswith(".md") and len(name) > 3:
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(st.st_mode):  # a FIFO or device named x.md is no article
                    found[prefix + name[:-3]] = key(st)
            elif on_temp is not None and name.endswith(".tmp") and is_temp(name):
                on_temp(entry.path)
        except OSError:
            continue
        n += 1
        if n >= step:
            n = 0
            yield len(found)


def _followed(
    entry: os.DirEntry[str],
    prefix: str,
    real: str,
    seen: set[str],
    stack: list[tuple[str, str]],
    within: Callable[[str, str], bool],
) -> os.stat_result | None:
    """A symbolic link met by a walk: a directory inside `real` is queued (each real one
    once); a regular file inside it is returned; anything else, or outside, is None."""
    target = os.path.realpath(entry.path)
    if not within(target, real):
        return None  # §12: never follow a link out of the store
    st = os.stat(target)
    if stat.S_ISDIR(st.st_mode):
        if target not in seen:
            seen.add(target)
            stack.append((entry.path, prefix + entry.name + "/"))
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def addresses(base: str | Path, real: str) -> list[str]:
    """The addresses `scan` finds without a stat per file (the entry's type says it is regular):
    half the time, for answers that need the names only (the server's first workspace symbols)."""
    from canon_ls.core.storage.fsio import within

    seen = {real}
    stack = [(str(base), "")]
    out = []
    for entry, prefix in entries(stack):
        name = entry.name
        try:
            if entry.is_symlink():
                if _followed(entry, prefix, real, seen, stack, within) is None:
                    continue
            elif entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, prefix + name + "/"))
                continue
            elif not entry.is_file(follow_symlinks=False):
                continue
        except OSError:
            continue
        if name.endswith(".md") and len(name) > 3:
            out.append(prefix + name[:-3])
    return out
