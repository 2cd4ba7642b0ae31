"""Every file the store and its caches touch goes through here (SPEC §6, §12)."""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import re
import stat
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from canon_ls.core.storage.address import OutsideStore, within

try:
    import fcntl
except ImportError:  # Windows: the lock is a documented no-op
    fcntl = None  # type: ignore[assignment]

ABANDONED_S = 15 * 60  # a temp file this old belongs to no live writer (a write takes ms)
_TMP = re.compile(r"\..+\.canon-[0-9a-z]{8}\.tmp", re.DOTALL)
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_READ = os.O_RDONLY | _CLOEXEC | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOCTTY", 0)
_READ |= getattr(os, "O_NONBLOCK", 0)  # opening a FIFO never waits for a writer
_DIR = os.O_RDONLY | _CLOEXEC | _DIRECTORY
# The component-by-component walk needs openat/mkdirat/renameat and O_NOFOLLOW|O_DIRECTORY.
DIR_FD = bool(_NOFOLLOW and _DIRECTORY) and {os.open, os.mkdir, os.rename} <= os.supports_dir_fd
_GETPATH = getattr(fcntl, "F_GETPATH", None) if fcntl is not None else None


class NotRegular(OSError):
    """A path that exists but is not a regular file (FIFO, device, socket, directory)."""


def temp_name(name: str) -> str:
    """The tool's temp file name for `name`: unmistakably ours, so only ours is ever swept."""
    # os.urandom, not `secrets`: the hooks write through here and `secrets` costs their
    # start-up a few ms; the name needs no secrecy (O_EXCL settles a collision).
    return f".{name}.canon-{''.join(_ALPHABET[b % 36] for b in os.urandom(8))}.tmp"


def is_temp(name: str) -> bool:
    """Whether a file name is one `temp_name` makes (a user's `.x.md.draft.tmp` is not)."""
    return name.startswith(".") and name.endswith(".tmp") and bool(_TMP.fullmatch(name))


def sweep(path: str, now: float | None = None) -> bool:
    """Remove the tool's own temp file at `path` when it is older than ABANDONED_S (a killed
    writer left it; it never was an article or entry). True when removed. Anything else stays."""
    if not is_temp(os.path.basename(path)):
        return False
    with contextlib.suppress(OSError):
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode) and (now or time.time()) - st.st_mtime > ABANDONED_S:
            os.unlink(path)
            return True
    return False


def leads_outside(directories: Iterable[str | Path], anchor: str | Path) -> tuple[Path, str] | None:
    """The first of `directories` that exists and resolves outside `anchor` (a symlink leading out
    of the project), with where it leads; None when all stay inside."""
    base = os.path.realpath(anchor)
    for directory in directories:
        if os.path.lexists(directory):
            real = os.path.realpath(directory)
            if not within(real, base):
                return Path(directory), real
    return None


def fd_path(fd: int) -> str | None:
    """The path the kernel has for an open descriptor, or None where it cannot tell."""
    if sys.platform.startswith("linux"):
        try:
            return os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return None
    if _GETPATH is not None:
        try:
            raw = fcntl.fcntl(fd, _GETPATH, bytes(1024))
        except OSError:
            return None
        return os.fsdecode(raw.split(b"\0", 1)[0])
    return None


def open_dir(
    directory: str | Path,
    anchor: str | Path,
    *,
    create: bool = False,
    follow: bool = True,
    inside: str | None = None,
    what: str = "",
) -> int:
    """Open `directory` (which must lie under `anchor`) and return its descriptor."""
    shown = what or str(directory)
    for _attempt in range(3):
        resolved = os.path.realpath if follow else os.path.abspath
        base, target = resolved(anchor), resolved(directory)
        if not within(target, base) or (inside is not None and not within(target, inside)):
            raise OutsideStore(f"{shown} lies outside {inside or anchor}")
        parts = [p for p in target[len(base.rstrip(os.sep)) :].split(os.sep) if p]
        if not DIR_FD:
            return _open_dir_by_path(target, create, follow, shown)
        fd = os.open(base, _DIR)
        try:
            for part in parts:
                child = _child(fd, part, create)
                os.close(fd)
                fd = child
        except _Swapped:
            os.close(fd)
            if not follow:
                break
            continue
        except BaseException:
            os.close(fd)
            raise
        return fd
    if not follow:
        raise OutsideStore(f"{shown} is reached through a symbolic link")
    raise OutsideStore(f"{shown} is a symbolic link or changed while it was being opened")


class _Swapped(Exception):
    """A component was a symlink (or not a directory) when it was opened."""


def _child(fd: int, part: str, create: bool) -> int:
    """Open one component under `fd` without following a symlink (mkdirat it if asked)."""
    try:
        try:
            return os.open(part, _DIR | _NOFOLLOW, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=fd)
            return os.open(part, _DIR | _NOFOLLOW, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            if _is_other_file(fd, part):  # a plain file where a directory belongs: say so
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", part) from None
            raise _Swapped from None
        raise


def _is_other_file(fd: int, part: str) -> bool:
    """`part` under `fd` exists and is neither a directory nor a symbolic link."""
    try:
        mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
    except OSError:
        return False
    return not (stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


def _open_dir_by_path(target: str, create: bool, follow: bool, shown: str) -> int:
    """Fallback without dir_fd support: resolve, check, open (a check-then-use window)."""
    if create:
        os.makedirs(target, exist_ok=True)
    if not follow and os.path.realpath(target) != os.path.abspath(target):
        raise OutsideStore(f"{shown} is reached through a symbolic link")
    return os.open(target, os.O_RDONLY | _CLOEXEC)


def read_regular(
    path: str | Path,
    limit: int,
    size: int = -1,
    *,
    inside: str | None = None,
    dir_fd: int | None = None,
    regular: bool = False,
) -> tuple[bytes, bool]:
    """At most `limit` bytes of a regular file, and whether it was longer."""
    if not regular and not stat.S_ISREG(os.stat(path, dir_fd=dir_fd).st_mode):
        raise NotRegular(errno.EINVAL, "not a regular file", os.fspath(path))  # no device
    fd = os.open(path, _READ, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # swapped since the stat
            raise NotRegular(errno.EINVAL, "not a regular file", os.fspath(path))
        if inside is not None:
            where = fd_path(fd)
            if where is None and dir_fd is None:
                where = os.path.realpath(path)  # no descriptor path here: check the name
            if where is not None and not within(where, inside):
                raise OutsideStore(f"{path} lies outside {inside}")
        return _read_fd(fd, limit, size if size >= 0 else st.st_size)
    finally:
        os.close(fd)


def open_regular(path: str | Path) -> BinaryIO:
    """A regular file opened for reading whole (a cache, mapped or read in records): anything
    else raises NotRegular before a byte is read, so a FIFO left in its place hangs nothing."""
    fd = os.open(path, _READ)  # non-blocking: a FIFO opens at once
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotRegular(errno.EINVAL, "not a regular file", os.fspath(path))
    return os.fdopen(fd, "rb")


def _read_fd(fd: int, limit: int, size: int) -> tuple[bytes, bool]:
    cap = limit + 1
    want = min(size, limit) + 1
    chunks: list[bytes] = []
    total = 0
    while total < cap:
        chunk = os.read(fd, min(want, cap - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total == size:
            break  # all the stat promised; a later growth changes the key, so it is re-read
        want = max(want, 65536)
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    return (data[:limit], True) if total > limit else (data, False)


def _fsync_dir_fd(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.fsync(fd)


def fsync_dir(directory: str | Path) -> None:
    """fsync a directory so a rename or link in it survives a crash (best effort)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | _CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


Data = bytes | Iterable[bytes]  # the bytes to write, or pieces of them written in turn


def _pieces(data: Data) -> Iterable[bytes]:
    """Pieces (a generator may make each as it is written): a cache of 50k articles is never
    whole in memory, nor a header joined to a copy of its payload."""
    return (data,) if isinstance(data, bytes) else data


def _write_all(fd: int, data: Data) -> None:
    for piece in _pieces(data):
        view = memoryview(piece)
        while view:
            view = view[os.write(fd, view) :]


def _write_temp(dir_fd: int, name: str, data: Data, mode: int, durable: bool) -> str:
    """Create and fill the tool's temp file beside `name` in the opened directory."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC | _NOFOLLOW | getattr(os, "O_BINARY", 0)
    while True:
        tmp = temp_name(name)
        with contextlib.suppress(FileExistsError):
            fd = os.open(tmp, flags, mode, dir_fd=dir_fd)
            break
    try:
        _write_all(fd, data)
        if durable:
            os.fsync(fd)
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)  # exactly `mode`, whatever the umask
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    os.close(fd)
    return tmp


def replace_in(
    dir_fd: int, name: str, data: Data, mode: int = 0o644, durable: bool = True, keep: bool = False
) -> int | None:
    """Atomically replace (or create) `name` in the opened directory: temp, fsync, rename, fsync."""
    tmp = _write_temp(dir_fd, name, data, mode, durable)
    kept = None
    try:
        if keep:
            kept = os.open(tmp, _READ | _NOFOLLOW, dir_fd=dir_fd)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        if kept is not None:
            os.close(kept)
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    if durable:
        _fsync_dir_fd(dir_fd)
    return kept


def link_new_in(dir_fd: int, names: Iterator[str], data: bytes, mode: int = 0o644) -> str:
    """Create a new file whole or not at all (SPEC §12 journal): temp file, fsync, link it to the
    first of `names` not yet there (never replacing), unlink the temp, fsync the directory."""
    first = next(names)
    tmp = _write_temp(dir_fd, first, data, mode, durable=True)
    try:
        for name in itertools.chain((first,), names):  # lazily: a tuple made 100k names
            try:
                os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
            except FileExistsError:
                continue
            _fsync_dir_fd(dir_fd)
            return name
        raise FileExistsError(errno.EEXIST, "every candidate name is taken", first)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)


def atomic_write(
    path: str | Path,
    data: Data,
    mode: int = 0o644,
    *,
    anchor: str | Path | None = None,
    follow: bool = True,
    durable: bool = True,
    keep: bool = False,
) -> int | None:
    """Replace `path` atomically with `data` (temp file, fsync, rename, fsync directory)."""
    path = Path(os.path.abspath(path))
    fd = open_dir(path.parent, anchor or path.parent, create=True, follow=follow)
    try:
        if not follow and _is_link(path, fd):
            raise OutsideStore(f"{path} is a symbolic link")
        if DIR_FD:
            return replace_in(fd, path.name, data, mode, durable, keep)
        _atomic_by_path(path, data, mode, durable)
        return os.open(path, _READ) if keep else None
    finally:
        os.close(fd)


def write_out(path: str | Path, data: Data, mode: int = 0o644) -> None:
    """Write a file the user named (`canon graph --out`): a new or regular file is replaced
    atomically; anything else already there (a device, a FIFO, a symlink) is opened and
    written through, never renamed over, so `--out /dev/null` leaves /dev/null a device."""
    try:
        special = not stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        special = False
    if not special:
        atomic_write(path, data, mode)
        return
    fd = os.open(
        path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _CLOEXEC | getattr(os, "O_NOCTTY", 0), mode
    )
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def _is_link(path: Path, dir_fd: int) -> bool:
    try:
        if DIR_FD:
            return stat.S_ISLNK(os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
        return os.path.islink(path)
    except FileNotFoundError:
        return False


def _atomic_by_path(path: Path, data: Data, mode: int, durable: bool) -> None:
    """atomic_write without dir_fd support (Windows): the same steps on paths."""
    tmp = path.parent / temp_name(path.name)
    try:
        with open(tmp, "xb") as fh:
            fh.writelines(_pieces(data))
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


@contextlib.contextmanager
def locked(dir_fd: int) -> Iterator[None]:
    """Hold the store lock: an exclusive flock on the store root's directory descriptor."""
    if fcntl is None:
        yield
        return
    try:
        fcntl.flock(dir_fd, fcntl.LOCK_EX)
    except OSError:
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(dir_fd, fcntl.LOCK_UN)
