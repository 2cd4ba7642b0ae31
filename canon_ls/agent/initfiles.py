"""Reading and writing `canon init`'s files without following a link (SPEC §12)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from canon_ls.core.storage import fsio
from canon_ls.core.storage.address import OutsideStore

MAX_BYTES = 8 * 1024 * 1024  # a configuration file larger than this is not one canon wrote


class Refused(ValueError):
    """A path canon init will not touch (one sentence naming it)."""


def linked(rel: str, root: Path) -> Refused:
    return Refused(
        f"{rel} is a symbolic link; canon init writes only real files inside {root}, never "
        "through a link: replace it with a real file or directory, or edit the target by hand."
    )


def special(rel: str) -> Refused:
    return Refused(f"{rel} is not a regular file; canon init leaves it alone: remove it first.")


def check(path: Path, root: Path) -> None:
    """Refuse, before any write, a path through a link or ending in a non-regular file."""
    if root.is_symlink():
        raise linked(str(root), root)
    current = root
    parts = path.relative_to(root).parts
    for i, part in enumerate(parts):
        current = current / part
        rel = "/".join(parts[: i + 1])
        try:
            st = current.lstat()
        except FileNotFoundError:
            return
        if stat.S_ISLNK(st.st_mode):
            raise linked(rel, root)
        last = i == len(parts) - 1
        if not last and not stat.S_ISDIR(st.st_mode):
            raise Refused(f"{rel} is not a directory; canon init leaves it alone.")
        if last and not stat.S_ISREG(st.st_mode):
            raise special(rel)


def read(path: Path, root: Path) -> str | None:
    """The file's text, None when it does not exist; Refused for a link or special file."""
    rel = path.relative_to(root).as_posix()
    check(path, root)
    inside = os.path.realpath(root)
    try:
        if not fsio.DIR_FD:  # Windows: the check above, then the path (a small race remains)
            data, longer = fsio.read_regular(path, MAX_BYTES, inside=inside)
        else:
            parent = fsio.open_dir(path.parent, root, follow=False)
            try:
                if stat.S_ISLNK(os.stat(path.name, dir_fd=parent, follow_symlinks=False).st_mode):
                    raise linked(rel, root)
                data, longer = fsio.read_regular(path.name, MAX_BYTES, dir_fd=parent, inside=inside)
            finally:
                os.close(parent)
    except FileNotFoundError:
        return None
    except fsio.NotRegular:
        raise special(rel) from None
    except OutsideStore:
        raise _refusal(path, root) from None
    if longer:
        raise Refused(f"{rel} is larger than {MAX_BYTES // 2**20} MB; canon init leaves it alone.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(f"{rel} is not UTF-8 text ({exc.reason}); fix it and run again.") from None


def write(path: Path, root: Path, text: str) -> None:
    """Replace (or create) `path` atomically, creating real directories on the way."""
    check(path, root)
    try:
        mode = stat.S_IMODE(path.lstat().st_mode)  # keep the file's permissions
    except FileNotFoundError:
        mode = 0o644
    root.mkdir(parents=True, exist_ok=True)  # the directory being configured (checked)
    try:
        fsio.atomic_write(path, text.encode("utf-8"), mode, anchor=root, follow=False)
    except OutsideStore:
        raise _refusal(path, root) from None


def _refusal(path: Path, root: Path) -> Refused:
    """The sentence for a link found while opening (swapped in after `check`, or the root)."""
    try:
        check(path, root)
    except Refused as exc:
        return exc
    return linked(path.relative_to(root).as_posix(), root)
