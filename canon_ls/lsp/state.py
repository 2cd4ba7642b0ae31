"""Server state: one `Folder` (project + Store + whole-store signals) per workspace folder.

The server owns its folders; features only read them and ask core for answers. Nothing here
writes a file.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol.types import DiagnosticOptions, Range
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from canon_ls.core import address as core_address
from canon_ls.core import fsio
from canon_ls.core.layout import Options, resolve
from canon_ls.core.project import open_store

from .convert import Text
from .protocol import CanonProtocol
from .settings import Settings

if TYPE_CHECKING:
    from canon_ls.core.assets import Finding
    from canon_ls.core.evidence import Evidence
    from canon_ls.core.store import Store

    from .features.checks import Checker
    from .features.sync import Notifier
    from .features.watch import Watcher
    from .logs import ClientLogHandler
    from .searcher import Searcher

log = logging.getLogger(__name__)

MAX_DISK_BYTES = 8 * 1024 * 1024  # files read from disk for edits/links beyond this are skipped


@dataclass
class Where:
    """What a document is to canon: an article, a journal entry, or a (possibly governed) file."""

    folder: Folder
    path: Path
    kind: str  # 'article' | 'journal' | 'store' (other files under .canon) | 'asset'
    address: str  # the article's address, or the asset's address ('' for the project root)

    @property
    def store(self) -> Store:
        assert self.folder.store is not None
        return self.folder.store

    def governing(self) -> str | None:
        if self.kind == "article":
            return self.address
        if self.kind != "asset" or not self.address or self.folder.store is None:
            return None
        return self.folder.store.governing(self.address)


@dataclass
class Signals:
    """What the whole-store check found for one folder, kept current between checks by the
    incremental re-checks (`checks` lands a check, `sync.recheck` one article)."""

    findings: dict[str, list[Finding]] = field(default_factory=dict)  # article address -> list
    stale: dict[str, str] = field(default_factory=dict)  # article address -> reason
    evidence: dict[str, Evidence] = field(default_factory=dict)  # stale article -> its facts
    evidence_pending: bool = False  # an edit made a verdict the last pass has no facts for
    newest: dict[str, tuple[float, str]] = field(default_factory=dict)  # article -> change
    moves: dict[str, list[str]] = field(default_factory=dict)  # orphan -> likely renames
    known: set[str] = field(default_factory=set)  # articles the last whole-store check saw
    asset_dirs: list[str] = field(default_factory=list)  # last check's asset dirs, to watch
    checked: bool = False  # the whole-store check has landed
    generation: int = 0  # bumps on every change; pull diagnostics' result ids

    def forget(self) -> None:
        """The store was reopened: what was found no longer applies (a new check is queued;
        the rename guesses, change times and asset directories stay until it lands)."""
        self.findings.clear()
        self.stale.clear()
        self.evidence.clear()
        self.checked = False
        self.generation += 1


@dataclass
class Folder:
    """One project: its Store, settings, what the last check found (`signals`) and the request
    caches. The check's own bookkeeping is the Checker's (features/checks.py)."""

    uri: str
    project: Path
    settings: Settings = field(default_factory=Settings)
    store: Store | None = None
    signals: Signals = field(default_factory=lambda: Signals())
    searcher: Searcher | None = None  # the BM25 worker once started
    # source uri -> ((encoding, 'open' | 'disk', text or stat identity), [(target, range)],
    # file path): references' link ranges (navigation.link_ranges)
    link_ranges: dict[
        str, tuple[tuple[object, str, object], list[tuple[str, Range]], str | None]
    ] = field(default_factory=dict)
    _uris: dict[str, str] = field(default_factory=dict)
    error: str | None = None  # why the store could not be opened
    problems_shown: set[str] = field(default_factory=set)  # option-file sentences already shown

    def open(self) -> None:
        """(Re)open the store with the current settings; a bad option becomes `error`."""
        try:
            self.store = open_store(
                self.project, self.settings.store_options(), explicit_source="editor",
                trust=self.settings.trusted_client or None,
            )  # fmt: skip
            self.error = None
        except Exception as exc:  # OptionError or anything unexpected: stay quiet but say why
            self.store = None
            self.error = f"canon could not open the store in {self.project}: {exc}"
            log.warning(self.error)
        if self.searcher is not None:
            self.searcher.stop()
            self.searcher = None
        self.link_ranges = {}
        self._uris = {}
        self.signals.forget()

    def options(self) -> Options:
        """SPEC §13 as this folder sees it now: the client's settings (explicit layer) over
        the user's settings.json, the project's canon.toml and the defaults."""
        return resolve(
            self.project, self.settings.options(), explicit_source="editor",
            trust=self.settings.trusted_client or None,
        )  # fmt: skip

    def store_options(self) -> dict[str, Any]:
        """root and mounts for a child process (check, search, `canon` commands): the
        client's, or where the client vouches for the workspace, those resolved here (a child
        has no client to vouch)."""
        if self.settings.trusted_client and self.store is not None and self.store.options:
            return self.store.options.store_options()
        return self.settings.store_options()

    @property
    def serving(self) -> bool:
        return self.store is not None and self.store.exists()

    def where(self, path: Path) -> Where | None:
        """What a file is to this folder's store: core's one rule (`Store.place`, honouring
        `root` and mounts); None outside the project and its mounts."""
        store = self.store
        if store is None:
            return None
        kind, address = store.place(path)
        return Where(self, path, kind, address) if kind else None

    def article_uri(self, address: str) -> str:
        """The article file's URI (cached: `path_of` resolves the path on disk, ~80 µs)."""
        uri = self._uris.get(address)
        if uri is None:
            store = self.store
            assert store is not None
            if ":" not in address and store.has(address):  # an indexed, normalised address
                path = f"{store.articles_dir}{os.sep}{address}.md"
            else:  # anything else goes through the store's containment check
                path = str(store.path_of(address))
            uri = from_fs_path(path) or ""
            if len(self._uris) < 100_000:
                self._uris[address] = uri
        return uri

    def article_path(self, address: str) -> str:
        """The article file's path as a string, without `Store.path_of`'s on-disk resolve
        (~80 µs) for indexed-shaped project addresses; hovers stat it on every request."""
        store = self.store
        assert store is not None
        if ":" not in address and address and core_address.normalise(address) == address:
            return f"{store.articles_dir}{os.sep}{address}.md"
        return str(store.path_of(address))

    def journal_names(self, address: str) -> list[str]:
        """Entry file names whose subject names `address`, newest first (core keeps them)."""
        return self.store.journal_names(address) if self.store is not None else []

    def backlinks(self, address: str) -> list[str]:
        """Articles linking to `address`: core's inverse link index (`Store.backlinks`)."""
        return self.store.backlinks(address) if self.store is not None else []

    async def warm_links(self, step: int = 25) -> None:
        """Build core's backlinks index in small steps between requests (after startup), so
        the first references or re-check never pays for the whole build."""
        store = self.store
        if store is None:
            return
        for _ in store.build_backlinks(step):
            await asyncio.sleep(0)
            if self.store is not store:
                return  # reopened: the old store's half-built index goes with it

    def finding_uri(self, address: str) -> str:
        """Where a finding is shown: its article, or schema.json for store-wide ones ('')."""
        assert self.store is not None
        if not address:
            return from_fs_path(str(self.store.schema_file)) or ""
        return self.article_uri(address)

    def contains(self, path: Path) -> bool:
        if _under(path, self.project):
            return True
        return self.store is not None and any(_under(path, m) for m in self.store.mounts.values())


def _under(path: Path, base: Path) -> bool:
    try:
        path.relative_to(base)
        return True
    except ValueError:
        return False


class CanonLanguageServer(LanguageServer):
    """pygls server holding one Folder per workspace folder, plus session-wide flags."""

    def __init__(self) -> None:
        super().__init__(name="canon-ls", version=_version(), protocol_cls=CanonProtocol)
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
        # The features owning state of their own, created together by `lifecycle.create`.
        self.watcher: Watcher
        self.checker: Checker
        self.notifier: Notifier

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
        folder = Folder(uri=uri, project=Path(path).resolve(), settings=settings or Settings())
        folder.open()
        self.folders[uri] = folder
        self._where.clear()  # a nested folder may own some paths now
        return folder

    def folder_of(self, path: Path) -> Folder | None:
        """The folder owning `path`: the deepest project containing it, else a mount owner."""
        best: Folder | None = None
        for folder in self.folders.values():
            if _under(path, folder.project) and (
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


def _version() -> str:
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
