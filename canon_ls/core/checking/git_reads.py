"""The whole-store pass's git work (check.run): run in a thread of its own at a lower CPU
priority, one git at a time, so git and the server's first answers go before the pass."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canon_ls.core.checking.assets import Assets
from canon_ls.core.git.changes import ChangeTimes
from canon_ls.core.git.renames import search_early
from canon_ls.core.storage import freshness
from canon_ls.core.storage.address import asset_folder

if TYPE_CHECKING:
    from canon_ls.core.storage.store import Store


def niceness(tid: int) -> int | None:
    try:
        return os.getpriority(os.PRIO_PROCESS, tid)
    except (OSError, AttributeError):  # not on every platform
        return None


def yield_cpu() -> None:
    """Lower this thread's priority five steps (Linux niceness is per thread) so git and a first
    hover go first; relative, so a process that stepped back never rises above its own git."""
    with contextlib.suppress(Exception):
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(os.getpriority(os.PRIO_PROCESS, tid) + 5, 19))


def in_order(
    project: Path, store: Store, staleness: bool, box: dict[str, Any], listed: threading.Event
) -> None:
    """The pass's git work in order, one process at a time: the asset listing (`box["assets"]`,
    packed, then `listed` is set), the rename search for the articles with no asset (its
    answer kept for the check's own), the change times (`box["times"]`, `box["seconds"]`)."""
    try:
        box["assets"] = assets = Assets(project, store_root=store.root)
        likely = likely_orphans(store, assets) if staleness else []
        assets.pack()  # idle while the store loads: compressed until the survey
    except Exception as exc:  # re-raised by run() on its own thread
        box["error"] = exc
    finally:
        listed.set()
    if not staleness or "error" in box:
        return
    with contextlib.suppress(Exception):  # an answer ahead of time: the check asks again
        search_early(project, likely)
    started = time.perf_counter()
    try:
        box["times"] = ChangeTimes(project)
        box["seconds"] = time.perf_counter() - started
    except Exception as exc:
        box["error"] = exc


def likely_orphans(store: Store, assets: Assets) -> list[str]:
    """The likely orphans, found without loading the store: the nested articles on disk (the
    store's own scan) whose address has no asset and whose parent directory exists
    (check._is_orphan's rule but for what needs the articles read)."""
    base, project = store.paths.articles_dir, Path(assets.project)
    return [
        a
        for a in freshness.addresses(base, os.path.realpath(base))
        if "/" in a and not assets.of(a) and asset_folder(project, a)
    ]
