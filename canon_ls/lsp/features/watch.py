"""External changes (agents, git, hand edits): client file events, else inotify, else a poll.

With dynamic registration (VS Code) the client reports `.canon/**` changes and asset
creations/deletions. Without it (Neovim's profile) on Linux inotify reports `.canon/**` writes
at once (`..inotify`), through the same handling as the client's events. Always, an asyncio
loop watches the articles tree's directory mtimes every `pollInterval` (chunked, so requests
keep flowing; slower as a safety net when events arrive), runs a full `Store.refresh()` now and
then within a small time budget, and watches git's HEAD and schema.json for store-wide
changes. Either way one changed article re-reads one article.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.uris import to_fs_path

from canon_ls.core.address import address_of_file

from .. import inotify
from ..state import CanonLanguageServer, Folder
from . import asset_watch, checks, sync

log = logging.getLogger(__name__)

CLIENT_SAFETY = 4.0  # x pollInterval: the directory watch when the client reports events
INOTIFY_SAFETY = 8.0  # x pollInterval: the directory watch when inotify reports them


async def start(ls: CanonLanguageServer) -> None:
    """Register client-side watchers if possible, else start polling."""
    dynamic = get_capability(
        ls.client_capabilities, "workspace.did_change_watched_files.dynamic_registration", False
    )
    if dynamic:
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[
                types.FileSystemWatcher(glob_pattern="**/.canon/**"),
                types.FileSystemWatcher(
                    glob_pattern="**/*", kind=types.WatchKind.Create | types.WatchKind.Delete
                ),
            ]
        )
        registration = types.Registration(
            id="canon-watch",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=options,
        )
        try:
            await asyncio.wait_for(
                ls.client_register_capability_async(
                    types.RegistrationParams(registrations=[registration])
                ),
                timeout=10,
            )
            ls.watched_by_client = True
            log.info("canon watches files through the client")
        except Exception as exc:
            log.info("client refused file watching (%s); polling instead", exc)
    if not ls.watched_by_client:
        start_inotify(ls)
    # Without events poll at the configured period; with them, a slow safety poll catches
    # what a client may drop (events outside the workspace, overflowed watchers).
    ls.poller = asyncio.ensure_future(poll(ls))


def start_inotify(ls: CanonLanguageServer) -> None:
    """Watch every store through inotify, or say once why the poll stays in charge."""
    if os.environ.get("CANON_NO_INOTIFY"):
        log.info("inotify disabled (CANON_NO_INOTIFY); canon polls the store")
        return
    ls.inotify = inotify.Inotify.open(lambda paths, full: on_inotify(ls, paths, full))
    if ls.inotify is None:
        log.info("inotify unavailable; canon polls the store")
        return
    for folder in list(ls.folders.values()):
        if not watch_store(ls, folder):
            return
    log.info("canon watches the store through inotify")


def watch_store(ls: CanonLanguageServer, folder: Folder) -> bool:
    """Add `folder`'s store tree to inotify (once); False after falling back to the poll."""
    if ls.inotify is None:
        return False
    if folder.store is None or not folder.store.exists():
        return True
    try:
        ls.inotify.add_root(folder.store.root)
    except inotify.WatchLimit as exc:
        log.warning("inotify watch limit reached (%s); canon polls the store instead", exc)
        ls.inotify.close()
        ls.inotify = None
        return False
    return True


def on_inotify(ls: CanonLanguageServer, paths: set[Path], full: bool) -> None:
    """One loop tick's inotify events: as the client's events would be, or a full refresh.
    Every write counts, in place or by rename, open in the editor or not: the store follows
    the disk (SPEC §10 external changes), as it does for the client's own file events."""
    if full:
        for folder in list(ls.folders.values()):
            store = folder.store
            if store is None or not store.exists():
                continue
            changed = store.refresh()
            if changed:
                sync.store_changed(ls, folder, changed)
            checks.schedule(ls, folder, checks.ASSET_DEBOUNCE)
            watch_store(ls, folder)  # a deleted and re-created root is watched again
    if paths:
        handle_paths(ls, paths)


def on_did_change_watched_files(
    ls: CanonLanguageServer, params: types.DidChangeWatchedFilesParams
) -> None:
    paths = []
    for event in params.changes:
        fs = to_fs_path(event.uri)
        if fs:
            paths.append(Path(os.path.abspath(fs)))
    handle_paths(ls, paths)


def handle_paths(ls: CanonLanguageServer, paths: Iterable[Path]) -> None:
    """Changed files on disk (client events or inotify): re-read articles, re-check assets."""
    assets: set[str] = set()
    for path in paths:
        folder = ls.folder_of(path)
        if folder is None:
            continue
        where = folder.where(path)
        if where is None:
            continue
        if where.kind == "asset":
            assets.add(folder.uri)
            continue
        if folder.store is None:
            continue
        if path == folder.store.schema_file:
            assets.add(folder.uri)  # the schema judges every article: re-check the store
            continue
        try:
            changed = folder.store.reload_file(path)
        except Exception:
            log.exception("re-reading %s failed", path)
            continue
        sync.store_changed(ls, folder, changed)
        if where.kind != "article":
            sync.schedule_notify(ls)  # journal entries change lens counts and hovers
        if folder.serving and not folder.check_requested:
            checks.schedule(ls, folder)  # the folder just gained a store
    for uri in assets:
        folder = ls.folders.get(uri)
        if folder is not None:
            checks.schedule(ls, folder, checks.ASSET_DEBOUNCE)


FULL_BUDGET = 0.01  # share of the loop a full `Store.refresh()` safety pass may use
FULL_EVERY = 60.0  # seconds, at least, between full passes (one blocks ~0.3 s at 10k articles)
SLICE = 0.0002  # seconds of stat'ing between yields to the event loop: a request that
# arrives meanwhile waits at most about this long (200 directories per slice, 0.7-0.9 ms of
# CPU, showed up as the idle hover p99 at 10k articles)


class DirWatch:
    """Cheap change detection for one articles tree: the mtimes of its directories.

    A write by `canon` (atomic rename), a new or a deleted article all move their directory's
    mtime; only such directories are listed again, and only files whose (mtime, size) differ
    from the index are re-read (`Store.reload_file`). Stat'ing ~5k directories at 10k articles
    runs in slices of ~0.2 ms between which requests are served. In-place edits that keep the
    directory mtime are left to the slow full `Store.refresh()` pass and the per-request check.
    """

    def __init__(self, base: Path) -> None:
        self.base = base
        self.mtimes: dict[str, int] = {}

    async def changed_files(self, folder: Folder) -> set[str]:
        store = folder.store
        if store is None:
            return set()
        first = not self.mtimes
        dirty: list[str] = []
        if first:
            dirty = [str(self.base)]
        else:
            resume = time.perf_counter()
            for directory in list(self.mtimes):
                if time.perf_counter() - resume > SLICE:
                    await asyncio.sleep(0)
                    resume = time.perf_counter()
                try:
                    mtime = os.stat(directory).st_mtime_ns
                except OSError:
                    self.mtimes.pop(directory, None)
                    dirty.append(directory)
                    continue
                if mtime != self.mtimes[directory]:
                    dirty.append(directory)
        changed: set[str] = set()
        seen_everywhere: set[str] = set()
        resume = time.perf_counter()
        while dirty:
            directory = dirty.pop()
            if time.perf_counter() - resume > SLICE:
                await asyncio.sleep(0)
                resume = time.perf_counter()
            try:
                self.mtimes[directory] = os.stat(directory).st_mtime_ns
                entries = list(os.scandir(directory))
            except OSError:
                entries = []
            seen = set()
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.path not in self.mtimes:
                        dirty.append(entry.path)  # a new directory: list it too
                    continue
                if not entry.name.endswith(".md"):
                    continue
                seen.add(entry.path)
                # The first pass compares too: it may run well after the store was loaded
                # (after the startup checks), and what changed meanwhile must not become
                # part of the baseline unseen.
                if _differs(store, Path(entry.path), entry):
                    changed |= store.reload_file(Path(entry.path))
            if first:
                seen_everywhere |= seen
            else:
                changed |= _vanished(store, Path(directory), seen)
        if first:
            changed |= await _vanished_anywhere(folder, seen_everywhere)
        return changed


def _differs(store: Any, path: Path, entry: os.DirEntry[str]) -> bool:
    address = address_of_file(store.articles_dir, path)
    if address is None:
        return False
    article = store.article(address)
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return True
    return article is None or (article.mtime_ns, article.size) != (st.st_mtime_ns, st.st_size)


def _vanished(store: Any, directory: Path, seen: set[str]) -> set[str]:
    """Articles indexed directly in `directory` whose file is gone."""
    try:
        rel = directory.relative_to(store.articles_dir).as_posix()
    except ValueError:
        return set()
    prefix = "" if rel == "." else rel + "/"
    changed: set[str] = set()
    for address in store.addresses():
        if address.startswith(prefix) and "/" not in address[len(prefix) :] and ":" not in address:
            path = store.path_of(address)
            if str(path) not in seen:
                changed |= store.reload_file(path)
    return changed


async def _vanished_anywhere(folder: Folder, seen: set[str]) -> set[str]:
    """Project articles indexed whose file the first listing did not see (in slices)."""
    store = folder.store
    assert store is not None
    changed: set[str] = set()
    resume = time.perf_counter()
    for address in store.addresses():
        if ":" in address:
            continue
        path = folder.article_path(address)
        if path not in seen:
            changed |= store.reload_file(Path(path))
        if time.perf_counter() - resume > SLICE:
            await asyncio.sleep(0)
            resume = time.perf_counter()
    return changed


async def poll(ls: CanonLanguageServer) -> None:
    """Every `pollInterval` (slower with events): the directory watch; without client events,
    a full refresh now and then, at most every FULL_EVERY and FULL_BUDGET of the loop's time."""
    marks: dict[str, tuple[float, ...]] = {}
    watches: dict[str, DirWatch] = {}
    full_cost = 0.0
    last_full = time.perf_counter()
    try:
        await _after_startup_checks(ls)
        while not ls.shutting_down:
            # The full pass only catches in-place edits that keep their directory's mtime (or
            # events inotify dropped); with client file events there is no need for it at all.
            full = not ls.watched_by_client and time.perf_counter() - last_full > max(
                FULL_EVERY, full_cost / FULL_BUDGET
            )
            started = time.perf_counter()
            for folder in list(ls.folders.values()):
                try:
                    watch_store(ls, folder)  # a store created or a folder added since
                    await poll_folder(ls, folder, marks, watches, full)
                except Exception:
                    log.exception("polling %s failed", folder.project)
                await asyncio.sleep(0)  # let queued requests run between folders
            if full:
                full_cost, last_full = time.perf_counter() - started, time.perf_counter()
            # The first pass ran at once: it records the mtimes later passes compare with,
            # so a write right after startup is not folded into that baseline unseen.
            interval = min((f.settings.poll_interval for f in ls.folders.values()), default=0.5)
            if ls.watched_by_client:
                interval *= CLIENT_SAFETY
            elif ls.inotify is not None:
                interval *= INOTIFY_SAFETY
            await asyncio.sleep(interval)
    finally:
        asset_watch.close(ls)
        if ls.inotify is not None:
            ls.inotify.close()
            ls.inotify = None


STARTUP_WAIT = 60.0  # seconds the safety-net watch waits, at most, for the startup checks


async def _after_startup_checks(ls: CanonLanguageServer) -> None:
    """With client events or inotify, the directory watch is only a safety net: its first
    pass (a listing of every articles directory, ~0.1 s of CPU at 10k articles) waits until
    the startup checks are over instead of competing with requests while they land. Without
    either, it is the watcher itself and starts at once."""
    deadline = time.perf_counter() + STARTUP_WAIT
    while (
        not ls.shutting_down
        and (ls.watched_by_client or ls.inotify is not None)
        and time.perf_counter() < deadline
        and any(not task.done() for task in list(ls.check_tasks.values()))
    ):
        await asyncio.sleep(0.1)


async def poll_folder(
    ls: CanonLanguageServer,
    folder: Folder,
    marks: dict[str, tuple[float, ...]],
    watches: dict[str, DirWatch],
    full: bool,
) -> None:
    store = folder.store
    if store is None or not store.exists():
        return
    watch = watches.get(folder.uri)
    if watch is None or watch.base != store.articles_dir:
        watch = watches[folder.uri] = DirWatch(store.articles_dir)
    await asset_watch.follow(ls, folder)  # the last check's asset directories (own watcher)
    changed = store.refresh() if full else await watch.changed_files(folder)
    if changed:
        sync.store_changed(ls, folder, changed)
    mark = _git_mark(folder)
    previous = marks.get(folder.uri)
    marks[folder.uri] = mark
    if not folder.check_requested:
        checks.schedule(ls, folder)  # the folder gained a store since startup
    elif previous is not None and mark != previous:
        checks.schedule(ls, folder, checks.ASSET_DEBOUNCE)


def _git_mark(folder: Folder) -> tuple[float, ...]:
    """mtimes that move on commits, checkouts and branch switches, or a schema change.

    Not `.git/index`: the check's own `git status` refreshes it, which would re-trigger the
    check forever. Staged or edited assets are caught by saves and the client's events.
    """
    git = folder.project / ".git"
    paths = [git / "HEAD", git / "packed-refs"]
    try:
        head = (git / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
        if head.startswith("ref: "):
            paths.append(git / head[5:])
    except OSError:
        pass
    if folder.store is not None:
        paths.append(folder.store.schema_file)
    out = []
    for path in paths:
        try:
            out.append(os.stat(path).st_mtime)
        except OSError:
            out.append(0.0)
    return tuple(out)
