"""Reading and writing `canon init`'s files without following a link (SPEC §12).

`canon init` configures one directory (the project, or the directory named on the command
line). A cloned repository may carry a symbolic link where a configuration file or directory
belongs (`.claude -> ~/elsewhere`, `.codex/config.toml -> ~/.secrets`); writing through it
would write outside, and replacing it would copy the linked file's contents into the
repository. So every component below that directory is opened with O_NOFOLLOW from a
descriptor of its parent (a link swapped in between a check and the use fails the open
rather than redirects it), only regular files are read (a FIFO would hang the read), and a
file is replaced atomically through a temp file named like the tool's others.

A local helper until core's one atomic writer (`canon_ls/core/fsio.py`, with its no-follow
mode) lands on main; then `write` becomes a call to it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
DIR_FD = bool(_NOFOLLOW and _DIRECTORY) and {os.open, os.mkdir, os.rename} <= os.supports_dir_fd
_LINKED = (errno.ELOOP, errno.ENOTDIR, errno.EMLINK)


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
    """Refuse up front (before anything is written) a path whose way from `root` holds a link
    or whose end is not a regular file; missing components are fine (they will be created)."""
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
    try:
        parent = _open_parent(path, root, create=False)
    except FileNotFoundError:
        return None
    try:
        flags = os.O_RDONLY | _CLOEXEC | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(path.name, flags, dir_fd=parent) if DIR_FD else os.open(path, flags)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno in _LINKED:
                raise linked(rel, root) from None
            raise
        with open(fd, "rb", closefd=True) as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise special(rel)
            data = fh.read()
    finally:
        _close(parent)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(f"{rel} is not UTF-8 text ({exc.reason}); fix it and run again.") from None


def write(path: Path, root: Path, text: str) -> None:
    """Replace (or create) `path` atomically, creating real directories on the way; Refused
    when a link or a special file stands anywhere on the way or at the end."""
    rel = path.relative_to(root).as_posix()
    parent = _open_parent(path, root, create=True)
    try:
        try:
            st = (
                os.stat(path.name, dir_fd=parent, follow_symlinks=False) if DIR_FD else path.lstat()
            )
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise linked(rel, root)
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise special(rel)
        mode = stat.S_IMODE(st.st_mode) if st is not None else 0o644
        _replace(parent, path, text.encode("utf-8"), mode)
    finally:
        _close(parent)


def _open_parent(path: Path, root: Path, create: bool) -> int:
    """A descriptor of `path`'s directory, reached from `root` one component at a time with
    O_NOFOLLOW (-1 without dir_fd support, after the same check on paths)."""
    parts = path.parent.relative_to(root).parts
    if not DIR_FD:  # Windows: check the names, then use the paths (a small race remains)
        if parts:
            check(path.parent, root)
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        elif not path.parent.is_dir():
            raise FileNotFoundError(errno.ENOENT, "no such directory", str(path.parent))
        return -1
    if create:
        root.mkdir(parents=True, exist_ok=True)  # the directory the user named (checked)
    fd = os.open(root, os.O_RDONLY | _CLOEXEC | _DIRECTORY)
    try:
        for i, part in enumerate(parts):
            flags = os.O_RDONLY | _CLOEXEC | _DIRECTORY | _NOFOLLOW
            try:
                try:
                    child = os.open(part, flags, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o777, dir_fd=fd)
                    child = os.open(part, flags, dir_fd=fd)
            except OSError as exc:
                if exc.errno in _LINKED:
                    raise linked("/".join(parts[: i + 1]), root) from None
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _replace(parent: int, path: Path, data: bytes, mode: int) -> None:
    """Temp file `.<name>.canon-<random>.tmp` beside the target (never following a link),
    fsync, rename over the target: a reader sees the old or the new file, never a mix."""
    name = path.name
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC | _NOFOLLOW
    while True:
        tmp = f".{name}.canon-{secrets.token_hex(4)}.tmp"
        try:
            if parent >= 0:
                fd = os.open(tmp, flags, mode, dir_fd=parent)
            else:
                fd = os.open(path.parent / tmp, flags, mode)
        except FileExistsError:
            continue
        break
    try:
        with open(fd, "wb", closefd=True) as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if parent >= 0:
            os.rename(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
        else:
            os.replace(path.parent / tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            if parent >= 0:
                os.unlink(tmp, dir_fd=parent)
            else:
                os.unlink(path.parent / tmp)
        raise


def _close(fd: int) -> None:
    if fd >= 0:
        os.close(fd)
