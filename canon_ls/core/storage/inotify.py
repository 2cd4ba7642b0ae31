"""Linux file events straight from inotify: for the watcher child (`lsp/helpers/fswatch.py`), and
the newest change below each folder for a process that stays up (`canon mcp`)."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import select
import struct
import sys
import threading
import time
from typing import Any, cast

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

MASK = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE  # not open
MASK |= IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
ADDED, MODIFIED, DELETED = 1, 2, 3
_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)
_POLL_MS = 100  # the longest wait between two looks at the stop flag


def available() -> bool:
    """Whether this system has inotify (Linux with a C library that offers it)."""
    return sys.platform.startswith("linux") and _libc() is not None


@functools.cache
def _libc() -> Any:
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the C library this process runs on
        libc.inotify_init1, libc.inotify_add_watch, libc.inotify_rm_watch  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


class Inotify:
    """Watch `paths` (with their subdirectories when `recursive`, but for those named in
    `skip`) until closed."""

    def __init__(
        self, paths: list[str], recursive: bool, skip: frozenset[str] = frozenset()
    ) -> None:
        libc = _libc()
        if libc is None:
            raise OSError(errno.ENOSYS, "inotify is not available")
        self._libc = libc
        self.recursive, self._skip = recursive, skip
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise _error("inotify_init1")
        self._fd = fd
        self._dirs: dict[int, str] = {}  # watch descriptor -> its directory
        self._wds: dict[str, int] = {}  # directory -> its watch descriptor
        self._pending: set[tuple[int, str]] = set()
        self.skipped = 0  # directories that cannot be watched (named past PATH_MAX, unreadable)
        self.overflowed = False  # the kernel's queue overflowed: some events are lost
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)
        try:
            for path in paths:
                self._add(path, walk=recursive, root=True)
        except BaseException:
            self.close()
            raise

    # -- watches ------------------------------------------------------------------------
    def _add(self, path: str, walk: bool, root: bool = False) -> None:
        """Watch `path` (and, when `walk`, every directory under it). Iterative."""
        if not root and os.path.basename(path) in self._skip:
            return
        stack = [path] if self._watch_new(path, root) and walk else []
        while stack:
            for entry in _subdirectories(stack.pop()):
                if os.path.basename(entry) not in self._skip and self._watch_new(entry, False):
                    stack.append(entry)

    def _watch_new(self, path: str, root: bool) -> bool:
        """`_watch_one`, True only when the directory was not watched already."""
        known = self._wds.get(path)
        return self._watch_one(path, root) and self._wds.get(path) != known

    def _watch_one(self, path: str, root: bool) -> bool:
        """Add the watch of one directory; False when it is gone again (not for a root)."""
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), MASK)
        if wd < 0:
            err = ctypes.get_errno()
            if err in (errno.ENOENT, errno.ENOTDIR) and not root:
                return False  # gone again already: its parent's watch reports the deletion
            if err in (errno.ENAMETOOLONG, errno.ELOOP, errno.EACCES) and not root:
                self.skipped += 1  # past PATH_MAX or unreadable: skipped, as the walk skips it
                return False
            raise _error(f"inotify_add_watch {path}", err)
        old = self._dirs.get(wd)
        if old is not None and old != path:
            self._wds.pop(old, None)
        self._dirs[wd] = path
        self._wds[path] = wd
        return True

    def _forget(self, path: str) -> None:
        """Drop the watches of `path` and everything under it (it moved away)."""
        prefix = path + os.sep
        for directory in [d for d in self._wds if d == path or d.startswith(prefix)]:
            wd = self._wds.pop(directory)
            self._dirs.pop(wd, None)
            self._libc.inotify_rm_watch(self._fd, wd)

    # -- events -------------------------------------------------------------------------
    def _read(self) -> None:
        """Turn every event waiting on the descriptor into changes."""
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except OSError:  # BlockingIOError: nothing more waits
                return
            if not data:
                return
            at = 0
            while at + _HEADER.size <= len(data):
                wd, mask, _cookie, size = _HEADER.unpack_from(data, at)
                raw = data[at + _HEADER.size : at + _HEADER.size + size].rstrip(b"\0")
                at += _HEADER.size + size
                self._event(wd, mask, os.fsdecode(raw))

    def _event(self, wd: int, mask: int, name: str) -> None:
        if mask & IN_Q_OVERFLOW:
            self.overflowed = True  # nothing names what was lost
            return
        directory = self._dirs.get(wd)
        if directory is None:
            return
        if mask & IN_IGNORED:  # the watch went (its directory deleted or unmounted)
            self._dirs.pop(wd, None)
            if self._wds.get(directory) == wd:
                del self._wds[directory]
            return
        if not name:  # about the watched directory itself
            if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                self._pending.add((DELETED, directory))
            elif mask & IN_ATTRIB:
                self._pending.add((MODIFIED, directory))
            return
        path = os.path.join(directory, name)
        if mask & (IN_CREATE | IN_MOVED_TO):
            self._pending.add((ADDED, path))
            if mask & IN_ISDIR and self.recursive:
                self._add(path, walk=True)
        elif mask & (IN_DELETE | IN_MOVED_FROM):
            self._pending.add((DELETED, path))
            if mask & IN_ISDIR and mask & IN_MOVED_FROM:
                self._forget(path)
        elif mask & (IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB):
            self._pending.add((MODIFIED, path))

    def _wait(self, ms: float) -> bool:
        """Wait up to `ms` for events and read them; whether any came."""
        if ms > 0 and self._poll.poll(ms):
            self._read()
            return True
        return False

    def watch(self, debounce_ms: int, step_ms: int, timeout_ms: int, stop: Any) -> Any:
        """RustNotify.watch: wait for changes."""
        started = time.monotonic()
        first = last = 0.0
        while True:
            if stop is not None and stop.is_set():
                self._pending.clear()
                return "stop"
            now = time.monotonic()
            if self._pending:
                if not first:
                    first = last = now
                quiet = (now - last) * 1000
                if quiet >= step_ms or (now - first) * 1000 >= debounce_ms:
                    changes, self._pending = self._pending, set()
                    return changes
                if self._wait(min(step_ms - quiet, _POLL_MS)):
                    last = time.monotonic()
                continue
            if timeout_ms and (now - started) * 1000 >= timeout_ms:
                return "timeout"
            self._wait(_POLL_MS)

    # -- lifetime -----------------------------------------------------------------------
    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Inotify:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TreeTimes:
    """The newest change (ctime) below each folder of a tree: one walk in the background, then
    kept by its events, so a folder of 20k files is one lookup instead of 20k stats. `.git` is
    neither walked nor watched: no article governs it, and `git gc` deleting its folders would
    start the walk again."""

    SKIP = frozenset({".git"})

    def __init__(self, top: str) -> None:
        self.top, self.below, self.notify = top, dict[str, int](), cast("Inotify | None", None)
        self.ready = threading.Event()  # set when a walk ends with every folder watched
        threading.Thread(target=self._start, daemon=True).start()

    def _start(self) -> None:  # watch, then walk: a change after a folder's listing is an event
        with contextlib.suppress(OSError):  # no inotify, or the watch limit: never ready
            notify, times = Inotify([self.top], True, self.SKIP), dict[str, int]()
            own = []  # (folder, its subfolders, the newest ctime of its own entries)
            for folder, subs, files in os.walk(self.top):  # above before below, pruned
                subs[:] = [n for n in subs if n not in self.SKIP]
                with contextlib.suppress(OSError):  # a file gone meanwhile: an event says so
                    ctimes = [os.lstat(os.path.join(folder, n)).st_ctime_ns for n in subs + files]
                    own.append((folder, subs, max([0, *ctimes])))
            for folder, subs, newest in reversed(own):  # below before above
                below = [times.get(os.path.join(folder, name), 0) for name in subs]
                times[folder] = max([newest, *below])
            if notify.skipped:  # a folder it cannot watch (unreadable, too deep): never ready
                return notify.close()
            self.below, self.notify = times, notify
            self.ready.set()

    def newest(self, folder: str) -> int | None:
        """The newest ctime of anything below `folder` (a change seen as an event counts as
        now), or None when not known: not walked yet, or a folder new since."""
        notify, now, moved = self.notify, time.time_ns(), True
        if notify is None:
            return None
        with contextlib.suppress(OSError):  # the watch limit, reached by a new folder: events lost
            notify._read()
            moved = any(kind != MODIFIED and path in self.below for kind, path in notify._pending)
        if moved or notify.overflowed or notify.skipped:  # a folder walked is gone: walk again
            notify.close()
            self.notify = None
            self.ready.clear()
            threading.Thread(target=self._start, daemon=True).start()
            return None
        for _, path in notify._pending:
            while len(path) > len(self.top):
                path = os.path.dirname(path)
                if path in self.below:
                    self.below[path] = now
        notify._pending.clear()
        return self.below.get(folder)


def _subdirectories(path: str) -> list[str]:
    """The directories in `path` (not through symlinks), read as a stream."""
    found = []
    with contextlib.suppress(OSError), os.scandir(path) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):  # an entry that cannot be looked at: skipped
                found += [entry.path] if entry.is_dir(follow_symlinks=False) else []
    return found


def _error(what: str, err: int | None = None) -> OSError:
    code = ctypes.get_errno() if err is None else err
    return OSError(code, f"{what}: {os.strerror(code)}")
