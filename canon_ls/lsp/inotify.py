"""Linux inotify through ctypes, read on the asyncio loop: store writes seen in milliseconds.

Without client file events the own watcher polls directory mtimes every 0.5 s, which bounds
how fast an external write reaches diagnostics. inotify reports it at once; the fd is
registered with the loop's `add_reader` (no thread, no dependency). Events are gathered per
loop tick and handed over as one set of paths (with those only written in place marked); a
queue overflow or a deleted root asks for a full refresh instead. Anything that goes wrong
(not Linux, no libc symbol, the watch limit) is the caller's cue to keep polling.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import logging
import os
import struct
import sys
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x1000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = 0o2000000

MASK = (
    IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
)
# Asset directories: only what changes the asset set (files and directories appearing or
# going); content writes to assets do not change orphans, and saves arrive from the editor.
ASSET_MASK = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR
HEADER = struct.Struct("iIII")  # wd, mask, cookie, name length

# (changed paths, full refresh wanted)
OnChange = Callable[[set[Path], bool], None]


class WatchLimit(Exception):
    """The kernel refused another watch (max_user_watches or memory): poll instead."""


class Inotify:
    """One inotify instance watching whole directory trees; reports to `on_change`."""

    def __init__(
        self, fd: int, libc: ctypes.CDLL, on_change: OnChange, mask: int, trees: bool
    ) -> None:
        self.fd = fd
        self.libc = libc
        self.on_change = on_change
        self.mask = mask
        self.trees = trees  # new directories are watched too (else only reported)
        self.dirs: dict[int, Path] = {}  # watch descriptor -> directory
        self.watched: set[Path] = set()
        self.roots: set[Path] = set()
        self.pending: dict[Path, int] = {}  # path -> its events' masks, or'ed
        self.full = False
        self.flush_scheduled = False
        self.loop = asyncio.get_running_loop()
        self.loop.add_reader(fd, self._read)

    @classmethod
    def open(cls, on_change: OnChange, mask: int = MASK, trees: bool = True) -> Inotify | None:
        """An instance on the running loop, or None where inotify is unavailable.

        `trees`: whole directory trees, following new directories (the store); otherwise the
        directories given to `watch_dirs` only, new ones merely reported (assets)."""
        if not sys.platform.startswith("linux"):
            return None
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.inotify_init1.argtypes = [ctypes.c_int]
            libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
            fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        except (OSError, AttributeError) as exc:
            log.info("inotify is unavailable (%s)", exc)
            return None
        if fd < 0:
            log.info("inotify_init1 failed: %s", os.strerror(ctypes.get_errno()))
            return None
        return cls(fd, libc, on_change, mask, trees)

    def watch_tree(self, root: Path) -> list[Path]:
        """Watch `root` and every directory below it; the files found there.

        Raises WatchLimit when the kernel refuses a watch. The files are returned so a caller
        adding a directory that appeared can read what was written before its watch existed.
        """
        found: list[Path] = []
        for directory, subdirs, files in os.walk(root):
            if not self._add(Path(directory)):
                subdirs.clear()
                continue
            found.extend(Path(directory, name) for name in files)
        return found

    def watch_dirs(self, directories: list[Path]) -> None:
        """Watch these directories (not their subtrees); vanished ones are skipped.
        Raises WatchLimit when the kernel refuses a watch."""
        for directory in directories:
            if directory not in self.watched:
                self._add(directory)

    def add_root(self, root: Path) -> None:
        """Watch the tree under `root` once (again after it was deleted)."""
        if root not in self.roots and root.is_dir():
            self.watch_tree(root)
            self.roots.add(root)

    def _add(self, directory: Path) -> bool:
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(directory), self.mask)
        if wd < 0:
            errno = ctypes.get_errno()
            if errno in (28, 24, 12):  # ENOSPC (max_user_watches), EMFILE, ENOMEM
                raise WatchLimit(os.strerror(errno))
            return False  # vanished meanwhile, not a directory, no permission
        self.dirs[wd] = directory
        self.watched.add(directory)
        return True

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                log.exception("reading inotify events failed")
                self.full = True
                break
            if not data:
                break
            self._parse(data)
        if (self.pending or self.full) and not self.flush_scheduled:
            self.flush_scheduled = True
            self.loop.call_soon(self._flush)  # coalesce: one hand-over per loop tick

    def _parse(self, data: bytes) -> None:
        at = 0
        while at + HEADER.size <= len(data):
            wd, mask, _cookie, length = HEADER.unpack_from(data, at)
            raw = data[at + HEADER.size : at + HEADER.size + length].rstrip(b"\0")
            at += HEADER.size + length
            if mask & IN_Q_OVERFLOW:
                self.full = True
                continue
            directory = self.dirs.get(wd)
            if directory is None:
                continue
            if mask & IN_IGNORED:
                del self.dirs[wd]
                self.watched.discard(directory)
                if directory in self.roots:
                    self.roots.discard(directory)
                    self.full = True
                continue
            if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                if directory in self.roots:
                    self.full = True
                continue
            path = directory / os.fsdecode(raw)
            if mask & IN_ISDIR and not self.trees:
                self.pending[path] = self.pending.get(path, 0) | mask  # reported, not watched
                continue
            if mask & IN_ISDIR:
                if mask & (IN_CREATE | IN_MOVED_TO):
                    self._new_directory(path)
                elif mask & (IN_DELETE | IN_MOVED_FROM):
                    self.full = True  # a whole subtree went: let the refresh drop it
                continue
            if not path.name.endswith(".tmp"):  # canon's atomic writes rename these into place
                self.pending[path] = self.pending.get(path, 0) | mask

    def _new_directory(self, path: Path) -> None:
        try:
            for found in self.watch_tree(path):
                self.pending[found] = self.pending.get(found, 0) | IN_CREATE
        except WatchLimit:
            log.warning("inotify watch limit reached; a full refresh covers %s", path)
            self.full = True

    def _flush(self) -> None:
        self.flush_scheduled = False
        pending, full = self.pending, self.full
        self.pending, self.full = {}, False
        try:
            self.on_change(set(pending), full)
        except Exception:
            log.exception("handling file events failed")

    def close(self) -> None:
        with contextlib.suppress(Exception):  # the loop may be closed at exit
            self.loop.remove_reader(self.fd)
        with contextlib.suppress(OSError):
            os.close(self.fd)
