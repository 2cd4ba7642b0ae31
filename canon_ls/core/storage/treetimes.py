"""The newest change (ctime) below each folder of a tree, for a process that stays up (`canon
mcp`): one walk in the background, then kept by Linux file events, so checking that nothing moved
under a folder governing 20k files is one lookup instead of 20k stats (docs/BENCHMARKS.md)."""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time

from canon_ls.core.storage import inotify

NEVER = 1 << 62  # the time of a folder that could not be read


class TreeTimes:
    def __init__(self, top: str) -> None:
        self.top, self.below = top, dict[str, int | None]()  # None: moved since, not known
        self.notify: inotify.Inotify | None = None
        threading.Thread(target=self._start, daemon=True).start()

    def _start(self) -> None:
        """Watch first, then walk: a change after a folder's listing is an event (not Linux,
        the watch limit: never ready, every check walks)."""
        try:
            notify = inotify.Inotify([self.top], recursive=True)
        except OSError:
            return
        order, stack, times = [], [self.top], dict[str, int]()
        while stack:
            order.append(folder := stack.pop())
            times[folder], stats = NEVER, []  # unreadable, or gone meanwhile: never quiet
            with contextlib.suppress(OSError), os.scandir(folder) as it:
                stats = [(e.path, e.stat(follow_symlinks=False)) for e in it]
                times[folder] = max((st.st_ctime_ns for _, st in stats), default=0)
            stack += [path for path, st in stats if stat.S_ISDIR(st.st_mode)]
        for folder in reversed(order[1:]):  # each folder after those below it
            up = os.path.dirname(folder)
            times[up] = max(times[up], times[folder])
        self.below.update(times)
        self.notify = notify

    def newest(self, folder: str) -> int | None:
        """The newest ctime of anything below `folder` (a change seen as an event counts as
        now), or None when not known: outside the tree, created or moved since, events lost."""
        notify, now, changes = self.notify, time.time_ns(), None
        try:
            if notify is not None and not (notify.overflowed or notify.skipped):
                changes = notify.changes()
        except OSError:  # the watch limit, reached by a new folder: events may be lost
            self.notify = None
        for kind, path in changes or ():
            if kind != inotify.MODIFIED and path in self.below:
                self.below[path] = None  # what lies below it now is not what was walked
            for up in self._chain(os.path.dirname(path)):
                self.below[up] = None if self.below.get(up) is None else now
        kept = [self.below.get(up) for up in self._chain(folder)]
        return None if changes is None or not kept or None in kept else kept[0]

    def _chain(self, folder: str) -> list[str]:
        """`folder` and the folders above it, to the top of the tree."""
        chain: list[str] = []
        while folder.startswith(self.top) and folder not in chain[-1:]:
            chain.append(folder)
            folder = os.path.dirname(folder)
        return chain
