"""Server state: the server keeps one `Folder` per workspace folder (folder.py: each owns its
store's load, its whole-store check and what that check found), the notifier and the
watcher. Read requests get `view(uri)`, a read-only `Where` that hides whether the store has
loaded. Nothing here writes a file.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lsprotocol.types import DiagnosticOptions
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from canon_ls.core import address as core_address
from canon_ls.core import fsio

from .convert import Text
from .folder import Folder, Where
from .protocol import CanonProtocol
from .settings import Settings

if TYPE_CHECKING:
    from canon_ls.core.store import Store

    from .logs import ClientLogHandler

log = logging.getLogger(__name__)

MAX_DISK_BYTES = 8 * 1024 * 1024  # files read from disk for edits/links beyond this are skipped


class Watching(Protocol):
    """The file watcher as the server keeps it (features/watch.py)."""

    async def start(self) -> None: ...
    def update(self) -> None: ...
    def git_moved(self, folder: Folder) -> None: ...
    def close(self) -> None: ...


class Notifying(Protocol):
    """The client notifier as the server keeps it (features/sync.py)."""

    published: set[str]  # uris with pushed, non-empty diagnostics

    def schedule(self, uris: Iterable[str] = ()) -> None: ...


class CanonLanguageServer(LanguageServer):
    """pygls server holding one Folder per workspace folder, plus session-wide flags."""

    def __init__(self) -> None:
        super().__init__(name="canon-ls", version=version(), protocol_cls=CanonProtocol)
        self.folders: dict[str, Folder] = {}
        self.global_settings = Settings()
        self.pull_diagnostics = False  # decided at initialize from the client's capabilities
        self.log_handler: ClientLogHandler | None = None
        self.shutting_down = False
        self.started = False  # initialized has run (first checks scheduled)
        self.initial_errors: list[str] = []  # bad initializationOptions, shown once initialized
        self._where: dict[str, tuple[Store | None, Where]] = {}  # uri -> (its store, Where)
        self._tasks: set[asyncio.Task[Any]] = set()
        # (method, options, guarded handler) registered at initialize when the client pulls
        self.pull_features: list[tuple[str, DiagnosticOptions | None, Callable[..., Any]]] = []
        # The features owning state of their own and the work a folder asks for, wired
        # together by `lifecycle.create`.
        self.watcher: Watching
        self.notifier: Notifying
        self.check_work: Callable[[Folder, float], Coroutine[Any, Any, None]]  # checks.run
        self.store_changed: Callable[[Folder, set[str]], None]  # sync.store_changed

    # -- background work ------------------------------------------------------------------
    def run_task(self, work: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Start background work on the loop: the one way the server does. The task is kept
        (asyncio holds only a weak reference), cancelled at shutdown, and a failure is logged
        instead of vanishing with the task."""
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("canon: %s failed", task.get_name(), exc_info=task.exception())

    def cancel_tasks(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    # -- folders --------------------------------------------------------------------------
    def add_folder(self, uri: str, settings: Settings | None = None) -> Folder | None:
        path = to_fs_path(uri)
        if not path:
            return None
        project = Path(path).resolve()
        folder = Folder(uri=uri, project=project, server=self, settings=settings or Settings())
        folder.open()
        self.folders[uri] = folder
        self._where.clear()  # a nested folder may own some paths now
        return folder

    def folder_of(self, path: Path) -> Folder | None:
        """The folder owning `path`: the deepest project containing it, else a mount owner."""
        best: Folder | None = None
        for folder in self.folders.values():
            if core_address.within(path, folder.project) and (
                best is None or len(folder.project.parts) > len(best.project.parts)
            ):
                best = folder
        if best is not None:
            return best
        for folder in self.folders.values():
            if folder.contains(path):
                return folder
        return None

    def where(self, uri: str) -> Where | None:
        """Locate a document URI; None outside every served project (or for non-file URIs).

        Cached per URI while its folder and store stay the same (the answer depends only on
        the folders' layout): the path arithmetic and `Store.address_of` (a realpath) were a
        third of a hover's time.
        """
        cached = self._where.get(uri)
        if cached is not None:
            store, where = cached
            owner = where.folder
            if self.folders.get(owner.uri) is owner and owner.store is store:
                return where
        fs = to_fs_path(uri) if uri.startswith("file:") else None
        if not fs:
            return None
        path = Path(os.path.abspath(fs))
        folder = self.folder_of(path)
        if folder is None:
            return None
        found = folder.where(path)
        if found is not None:
            if len(self._where) >= 10_000:
                self._where.clear()
            self._where[uri] = (folder.store, found)
        return found

    def view(self, uri: str) -> Where | None:
        """`where(uri)` as a read request sees it: from the article files while its store
        loads (`Folder.view`)."""
        found = self.where(uri)
        return found.folder.view(found) if found is not None else None

    # -- documents ------------------------------------------------------------------------
    def open_articles(self, folder: Folder) -> set[str]:
        """Addresses of `folder`'s articles open in the editor: their unsaved text may link
        where the file on disk does not (references and renames read it). They are few."""
        places = [self.where(uri) for uri in list(self.workspace.text_documents)]
        return {w.address for w in places if w and w.folder is folder and w.kind == "article"}

    def open_text(self, uri: str) -> Text | None:
        """The editor's text of an open document (its URI as sent or percent-decoded)."""
        docs = self.workspace.text_documents
        doc = docs.get(uri)
        if doc is None:
            from urllib.parse import unquote

            doc = docs.get(unquote(uri))
        return Text(doc.source, doc.version) if doc is not None else None

    def text_of(self, uri: str) -> Text | None:
        """The editor's text when the document is open, else the file on disk (bounded).

        Non-UTF-8 and oversized files on disk give None: nothing is computed from a guess.
        """
        text = self.open_text(uri)
        if text is not None:
            return text
        fs = to_fs_path(uri)
        if not fs:
            return None
        return read_text(Path(fs))


def version() -> str:
    """canon-ls's installed version ('0' when it runs from a bare checkout)."""
    try:
        from importlib.metadata import version

        return version("canon-ls")
    except Exception:
        return "0"


def read_text(path: Path) -> Text | None:
    """A file on disk as text, through core's regular-file reader: a FIFO or device (say a
    FIFO at schema.json) is never opened for reading, so nothing blocks (SPEC §12)."""
    try:
        data, longer = fsio.read_regular(path, MAX_DISK_BYTES)
        return None if longer else Text(data.decode("utf-8"))
    except (OSError, ValueError):  # NotRegular and OutsideStore among them; bad UTF-8
        return None
