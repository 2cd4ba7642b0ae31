"""External changes (agents, git, hand edits): client file events when offered, else a poll.

With dynamic registration (VS Code) the client reports `.canon/**` changes and asset
creations/deletions. Without it (Neovim's profile) an asyncio loop calls `Store.refresh()`
(directory listing + mtimes, incremental) every `pollInterval` and watches git's index/HEAD for
asset-level changes. Either way one changed article re-reads one article.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from pathlib import Path

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.uris import to_fs_path

from ..state import CanonLanguageServer, Folder
from . import checks, sync

log = logging.getLogger(__name__)

ASSET_DEBOUNCE = 0.3  # seconds: a burst of asset events (git checkout) re-checks once


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
    # Without client events poll at the configured period; with them, a slow safety poll
    # catches what a client may drop (events outside the workspace, overflowed watchers).
    ls.poller = asyncio.ensure_future(poll(ls, 10.0 if ls.watched_by_client else 1.0))


def on_did_change_watched_files(
    ls: CanonLanguageServer, params: types.DidChangeWatchedFilesParams
) -> None:
    assets: set[str] = set()
    for event in params.changes:
        fs = to_fs_path(event.uri)
        if not fs:
            continue
        path = Path(os.path.abspath(fs))
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
            checks.schedule(ls, folder, ASSET_DEBOUNCE)


BUDGET = 0.05  # the poll may use at most this share of the event loop's time


async def poll(ls: CanonLanguageServer, factor: float) -> None:
    """Poll every folder; the period stretches so polling costs at most BUDGET of the loop
    (a 10k-article `refresh()` walk costs ~0.1-0.3 s; requests re-check their own article)."""
    marks: dict[str, tuple[float, ...]] = {}
    cost = 0.0
    while not ls.shutting_down:
        interval = min((f.settings.poll_interval for f in ls.folders.values()), default=0.5)
        await asyncio.sleep(max(interval * factor, cost / BUDGET))
        started = time.perf_counter()
        for folder in list(ls.folders.values()):
            try:
                poll_folder(ls, folder, marks)
            except Exception:
                log.exception("polling %s failed", folder.project)
            await asyncio.sleep(0)  # let queued requests run between folders
        cost = time.perf_counter() - started


def poll_folder(
    ls: CanonLanguageServer, folder: Folder, marks: dict[str, tuple[float, ...]]
) -> None:
    store = folder.store
    if store is None:
        return
    if not store.exists():
        return
    started = time.perf_counter()
    changed = store.refresh()
    if changed:
        log.debug(
            "poll: %d changed in %.1f ms", len(changed), (time.perf_counter() - started) * 1e3
        )
        sync.store_changed(ls, folder, changed)
    mark = _git_mark(folder)
    previous = marks.get(folder.uri)
    marks[folder.uri] = mark
    if not folder.check_requested:
        checks.schedule(ls, folder)  # the folder gained a store since startup
    elif previous is not None and mark != previous:
        checks.schedule(ls, folder, ASSET_DEBOUNCE)


def _git_mark(folder: Folder) -> tuple[float, ...]:
    """mtimes that move when assets change in bulk (git) or the schema changes."""
    out = []
    paths = [folder.project / ".git" / "index", folder.project / ".git" / "HEAD"]
    if folder.store is not None:
        paths.append(folder.store.schema_file)
    for path in paths:
        try:
            out.append(os.stat(path).st_mtime)
        except OSError:
            out.append(0.0)
    return tuple(out)
