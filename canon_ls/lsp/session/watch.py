"""External changes (agents, git, hand edits): the client's file events and our own watcher."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.uris import to_fs_path

from canon_ls.core.storage import fsio, layout
from canon_ls.lsp.helpers.child import spawn
from canon_ls.lsp.session.state import CanonLanguageServer, Folder

if TYPE_CHECKING:
    from canon_ls.core.storage.store import Store
from canon_ls.lsp.session import checks, sync
from canon_ls.lsp.session.options import is_option_file, reread_all, reread_options

log = logging.getLogger(__name__)

MAX_RESTARTS = 3
MAX_DIRS = 50_000  # asset directories beyond which the kernel memory (~1 KB a watch) wins
ADDED, MODIFIED, DELETED = 1, 2, 3  # watchfiles' Change values

# Files editors and tools create and delete around a save: never an asset change.
_NOISE_SUFFIXES = ("~", ".swp", ".swx", ".swo", ".tmp")


class Watcher:
    """The server's file watcher: client registration, the watchfiles child, its paths."""

    def __init__(self, ls: CanonLanguageServer) -> None:
        self.ls = ls
        self.by_client = False  # the client reports file events (dynamic registration)
        self.proc: asyncio.subprocess.Process | None = None
        self.sent: tuple[Any, ...] | None = None  # the key of the set the child watches
        self.fresh_roots: set[str] = set()  # store roots to re-read once watched (new stores)
        self.started = False  # the first set was sent (stores known then need no re-read)
        self.asset_off = False  # too many asset directories: said once, not watched
        self.asset_count = 0  # asset directories in the set last sent
        self.git_marks: dict[str, tuple[float, ...]] = {}
        self.restarts = 0  # the child ended unasked (killed, crashed): restarted a few times

    async def start(self) -> None:
        """Ask the client to report file events, then start the child."""
        for folder in list(self.ls.folders.values()):
            self.git_marks[folder.uri] = _git_mark(folder)
        await self._register()
        if importlib.util.find_spec("watchfiles") is None:  # the VS Code bundle: no binaries
            log.info(
                "watchfiles is not installed: canon sees changes made outside the editor as "
                "the client reports them"
            )
            return
        await self._spawn()
        self.started = True

    async def _spawn(self) -> None:
        try:
            self.proc = await spawn(
                "canon_ls.lsp.helpers.fswatch",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                limit=16 * 1024 * 1024,
            )
        except OSError as exc:
            log.warning(
                "canon could not start its file watcher (%s): changes made outside "
                "the editor show when a file is opened or saved",
                exc,
            )
            return
        self.sent = None
        self.ls.run_task(self._read(self.proc), "canon-watch")
        self.update()

    async def _register(self) -> None:
        ls = self.ls
        dynamic = get_capability(
            ls.client_capabilities, "workspace.did_change_watched_files.dynamic_registration", False
        )
        if not dynamic:
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[
                types.FileSystemWatcher(glob_pattern="**/.canon/**"),
                # canon.toml edits (its creation and deletion come with **/*)
                types.FileSystemWatcher(glob_pattern=f"**/{layout.PROJECT_FILE}"),
                types.FileSystemWatcher(
                    glob_pattern="**/*", kind=types.WatchKind.Create | types.WatchKind.Delete
                ),
                # commits, checkouts, branch switches (also without our own watcher)
                types.FileSystemWatcher(glob_pattern="**/.git/{HEAD,packed-refs,refs/heads/**}"),
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
            self.by_client = True
            log.info("canon watches files through the client")
        except Exception as exc:
            log.info("client refused file watching (%s); canon watches on its own", exc)

    def wanted(self) -> tuple[Any, ...]:
        """What the child should watch now, as a cheap key."""
        trees: set[str] = set()
        dirs: set[str] = set()
        listings: list[tuple[str, int]] = []
        poll = 0.5
        settings_dir = layout.settings_file().parent  # the user's settings.json (SPEC §13)
        if settings_dir.is_dir():
            dirs.add(str(settings_dir))
        for folder in list(self.ls.folders.values()):
            poll = min(poll, folder.settings.poll_interval)
            dirs.add(str(folder.project))
            git = folder.project / ".git"
            if git.is_dir():
                dirs.add(str(git))
                trees.add(str(git / "refs" / "heads"))
            store = folder.store
            if store is None or not store.exists():
                continue
            trees.add(str(store.root))
            trees.update(str(layout.store_root(m, None)) for m in store.mounts.values())
            if not self.by_client and folder.signals.asset_dirs:
                listings.append((folder.uri, id(folder.signals.asset_dirs)))
        return tuple(sorted(trees)), tuple(sorted(dirs)), tuple(listings), poll

    def _message(self, key: tuple[Any, ...]) -> dict[str, Any]:
        trees, dirs, listings, poll = key
        assets: set[str] = set()
        for uri, _ in listings:
            folder = self.ls.folders.get(uri)
            if folder is not None:
                base = str(folder.project)
                assets.update(
                    os.path.join(base, d) if d else base for d in folder.signals.asset_dirs
                )
        if len(assets) > MAX_DIRS:
            if not self.asset_off:
                log.info(
                    "%d asset directories (over %d): new or deleted assets show after a save, "
                    "a commit or a branch switch",
                    len(assets),
                    MAX_DIRS,
                )
            self.asset_off = True
            assets = set()
        self.asset_count = len(assets)
        return {"trees": list(trees), "dirs": [*dirs, *assets], "poll_ms": int(poll * 1000)}

    def update(self) -> None:
        """Send the child the set to watch when it changed."""
        proc = self.proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            return
        key = self.wanted()
        if key == self.sent:
            return
        old_trees = set(self.sent[0]) if self.sent else set()
        if self.started:
            self.fresh_roots |= set(key[0]) - old_trees
        self.sent = key
        try:
            proc.stdin.write((json.dumps(self._message(key)) + "\n").encode())
        except (BrokenPipeError, ConnectionResetError, RuntimeError):
            log.warning("canon's file watcher stopped")

    async def _read(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        while line := await proc.stdout.readline():
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if "changes" in message:
                self.on_changes([(int(k), Path(p)) for k, p in message["changes"]])
            elif "ready" in message:
                self._ready(message)
            elif "warning" in message:
                log.warning("canon's file watcher: %s", message["warning"])
        code = await proc.wait()
        if self.ls.shutting_down or self.proc is not proc:
            return
        self.restarts += 1
        if self.restarts > MAX_RESTARTS:
            log.warning("canon's file watcher ended (exit code %s); not restarted again", code)
            return
        log.warning("canon's file watcher ended (exit code %s); restarting it", code)
        await asyncio.sleep(1.0)
        if self.started:  # what changed meanwhile: every store is read again once watched
            self.fresh_roots |= set(self.sent[0] if self.sent else [])
        await self._spawn()

    def _ready(self, message: dict[str, Any]) -> None:
        by = message.get("by", "watchfiles")
        how = "by polling" if message.get("polling") else f"through {by}"
        if message["ready"] == "dirs":
            if self.asset_count:
                log.info("canon watches %d asset directories %s", self.asset_count, how)
            else:
                log.info("canon watches the project folders %s", how)
            return
        stores = [f for f in self.ls.folders.values() if f.serving]
        if stores:
            log.info("canon watches the store %s (%d stores)", how, len(stores))
        roots, self.fresh_roots = self.fresh_roots, set()
        for folder in list(self.ls.folders.values()):
            store = folder.store
            if store is not None and str(store.root) in roots and store.exists():
                changed = store.refresh()  # a store that appeared: what was written before
                if changed:
                    sync.store_changed(self.ls, folder, changed)

    def on_changes(self, changes: list[tuple[int, Path]]) -> None:
        """One batch from the child: store files re-read, asset sets and git re-checked."""
        ls = self.ls
        paths: list[Path] = []
        user_settings = layout.settings_file()
        for kind, path in changes:
            if path == user_settings:
                reread_all(ls)  # the user's settings.json, outside every folder (SPEC §13)
                continue
            folder = ls.folder_of(path)
            if folder is None:
                continue
            where = folder.where(path) if kind == MODIFIED else None
            if where is not None and where.kind == "asset" and not is_option_file(folder, path):
                continue  # an asset's contents change no asset set (and saves come anyway)
            if kind == MODIFIED and path.is_dir():
                continue  # a directory's attributes (a touch, a chmod) change no article
            paths.append(path)
        handle_paths(ls, paths)
        self.update()  # a store or directory that appeared or went changes what is watched

    def git_moved(self, folder: Folder) -> None:
        """HEAD, a branch or packed-refs moved (a commit, a checkout): staleness may change."""
        mark = _git_mark(folder)
        known = self.git_marks.get(folder.uri, mark)  # a folder added since: from now on
        if known != mark and folder.check.asked:
            folder.check.schedule(checks.ASSET_DEBOUNCE)
        self.git_marks[folder.uri] = mark

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()


def on_did_change_watched_files(
    ls: CanonLanguageServer, params: types.DidChangeWatchedFilesParams
) -> None:
    named = (to_fs_path(event.uri) for event in params.changes)
    handle_paths(ls, [Path(os.path.abspath(fs)) for fs in named if fs])


def handle_paths(ls: CanonLanguageServer, paths: Iterable[Path], defer: bool = True) -> None:
    """Changed files on disk (client or own events): re-read articles, re-check assets."""
    assets: set[str] = set()
    git_moved: set[str] = set()
    reread: list[str] = []  # directories of articles re-read whole in this batch (+ os.sep)
    for path in sorted(paths, key=str):  # a directory before what it holds
        if reread and str(path).startswith(reread[-1]):
            continue  # re-read with its directory (a chain 2,100 deep: once, not per level)
        folder = ls.folder_of(path)
        if folder is None:
            continue
        if is_option_file(folder, path):
            reread_options(ls, folder)  # canon.toml (SPEC §13)
            continue
        if folder.project / ".git" in path.parents:
            if folder.uri not in git_moved:
                git_moved.add(folder.uri)
                ls.watcher.git_moved(folder)
            continue
        where = folder.where(path)
        if where is None:
            continue
        if where.kind == "asset":
            name = path.name
            if not (name.endswith(_NOISE_SUFFIXES) or name == "4913" or name.startswith(".#")):
                assets.add(folder.uri)
            continue
        if folder.store is None:
            continue
        if path == folder.store.schema_file:
            assets.add(folder.uri)  # the schema judges every article: re-check the store
            continue
        if path.name.endswith(".tmp"):
            continue  # canon's atomic writes rename these into place
        load = folder.load
        if defer and load and load.defer(path, lambda p: handle_paths(ls, p, False)):
            continue
        try:
            changed = _reload(folder.store, path)
            if folder.store.articles_dir in path.parents and not path.name.endswith(".md"):
                reread.append(f"{path}{os.sep}")
        except Exception:
            log.exception("re-reading %s failed", path)
            continue
        sync.store_changed(ls, folder, changed)
        if where.kind != "article":
            ls.notifier.schedule()  # journal entries change lens counts and hovers
        if folder.serving and not folder.check.asked:
            folder.check.schedule()  # the folder just gained a store
    for uri in assets:
        folder = ls.folders.get(uri)
        if folder is not None and folder.serving:
            folder.check.schedule(checks.ASSET_DEBOUNCE)


def _reload(store: Store, path: Path) -> set[str]:
    """Re-read one article file; for a directory that appeared or went in the articles tree."""
    if path in (store.root, store.articles_dir):
        return store.refresh()  # the whole store (or its articles) moved in or out at once
    if path.name.endswith(".md") or store.articles_dir not in path.parents:
        return store.reload_file(path)
    return store.refresh(dirs=[path])


def _git_mark(folder: Folder) -> tuple[float, ...]:
    """mtimes that move on commits, checkouts and branch switches."""
    git = folder.project / ".git"
    paths = [git / "HEAD", git / "packed-refs"]
    with contextlib.suppress(OSError):
        head = fsio.read_regular(git / "HEAD", 4096)[0].decode("utf-8", "replace").strip()
        if head.startswith("ref: "):
            paths.append(git / head[5:])
    out = []
    for path in paths:
        try:
            out.append(os.stat(path).st_mtime)
        except OSError:
            out.append(0.0)
    return tuple(out)
