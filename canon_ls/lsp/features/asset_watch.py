"""Asset files appearing or going, seen without client file events (SPEC §10 external changes).

VS Code reports creations and deletions of any file (`**/*`, registered dynamically); Neovim
offers no watcher, and the store's inotify covers `.canon/` only. Here a second inotify
instance watches the directories the last whole-store check listed assets in (so gitignored
trees such as node_modules are never watched) for files and directories created, deleted or
moved. Such an event can heal or make an orphan, change a rename guess or make an article
stale (an untracked file's change time is its mtime, SPEC §9), so it queues the debounced
whole-store re-check the client's events queue. Content writes to assets are not watched:
they change no orphan, and editors report saves. New directories are reported, not watched:
the next check lists them (unless ignored) and they are added then.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from .. import inotify
from ..state import CanonLanguageServer, Folder
from . import checks

log = logging.getLogger(__name__)

STEP = 200  # watches added between yields to the event loop (~1 ms)
MAX_DIRS = 50_000  # beyond this the kernel memory (~1 KB a watch) outweighs the gain

# Files editors and tools create and delete around a save: never an asset change.
_NOISE_SUFFIXES = ("~", ".swp", ".swx", ".swo", ".tmp")


async def follow(ls: CanonLanguageServer, folder: Folder) -> None:
    """Watch the asset directories the last check listed that are not watched yet
    (own-watcher mode, Linux only); the listing is consumed, so later polls cost nothing."""
    if ls.watched_by_client or ls.inotify is None or ls.asset_watch_off or not folder.asset_dirs:
        return
    if len(folder.asset_dirs) > MAX_DIRS:
        log.info(
            "%d asset directories (over %d): new or deleted assets show after a save, a commit "
            "or a branch switch",
            len(folder.asset_dirs),
            MAX_DIRS,
        )
        ls.asset_watch_off = True
        return
    if ls.asset_inotify is None:
        ls.asset_inotify = inotify.Inotify.open(
            lambda paths, full: on_events(ls, paths, full), mask=inotify.ASSET_MASK, trees=False
        )
        if ls.asset_inotify is None:
            return
    watcher = ls.asset_inotify
    listed, folder.asset_dirs = folder.asset_dirs, []  # taken once per check, not per poll
    wanted = (folder.project / d if d else folder.project for d in listed)
    new = [path for path in wanted if path not in watcher.watched]
    if not new:
        return
    try:
        for i in range(0, len(new), STEP):
            watcher.watch_dirs(new[i : i + STEP])
            await asyncio.sleep(0)
    except inotify.WatchLimit as exc:
        log.warning(
            "inotify watch limit reached (%s); new or deleted assets show after a save, a "
            "commit or a branch switch instead",
            exc,
        )
        watcher.close()
        ls.asset_inotify = None
        ls.asset_watch_off = True
        return
    log.info("canon watches %d asset directories through inotify", len(watcher.watched))


def on_events(ls: CanonLanguageServer, paths: set[Path], full: bool) -> None:
    """Creations, deletions, moves of asset paths: a debounced whole-store re-check."""
    folders = {f.uri: f for f in list(ls.folders.values()) if full and f.serving}
    for path in paths:
        owner = None if _noise(path.name) else ls.folder_of(path)
        if owner is not None and owner.serving and not _internal(owner, path):
            folders[owner.uri] = owner
    for folder in folders.values():
        checks.schedule(ls, folder, checks.ASSET_DEBOUNCE)


def _noise(name: str) -> bool:
    return name.endswith(_NOISE_SUFFIXES) or name == "4913" or name.startswith(".#")


def _internal(folder: Folder, path: Path) -> bool:
    """Paths that are no asset: the git directory and the store itself."""
    store = folder.store
    roots = [folder.project / ".git"] + ([store.root] if store is not None else [])
    return any(path == root or root in path.parents for root in roots)


def close(ls: CanonLanguageServer) -> None:
    if ls.asset_inotify is not None:
        ls.asset_inotify.close()
        ls.asset_inotify = None
