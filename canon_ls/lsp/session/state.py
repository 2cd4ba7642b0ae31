"""Server state, one piece on purpose: a `Folder` per workspace folder (its store's load, `Check`
from session/check_task.py, `Signals`); read requests get `view(uri)`, a read-only `Where` that
hides whether the store has loaded, and the one `lookup` over it. It stays one module over 500
lines: the lookup asks the server's text and `Where.refresh` in turn, and splitting them apart
(tried in stop 47) doubled a hover's walk between rooms (tests/lsp/test_walks.py). Nothing here
writes a file."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
from collections.abc import Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lsprotocol.types import DiagnosticOptions, Position, Range
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from canon_ls import version
from canon_ls.core.checking import recheck as core_recheck
from canon_ls.core.storage import address as core_address
from canon_ls.core.storage import fsio
from canon_ls.core.storage.disk_view import JOURNAL_MAX
from canon_ls.core.storage.layout import Options, resolve
from canon_ls.core.storage.reader import Reader
from canon_ls.formats.hosts import is_source
from canon_ls.lsp import imports
from canon_ls.lsp.handlers.cursor import CursorToken, named
from canon_ls.lsp.helpers.searcher import Searcher
from canon_ls.lsp.imports import Import
from canon_ls.lsp.session.check_task import Check
from canon_ls.lsp.session.settings import Settings
from canon_ls.lsp.session.signals import Signals, Typing
from canon_ls.lsp.startup.early import KeptView, Load
from canon_ls.lsp.startup.turns import yield_to_requests
from canon_ls.lsp.wire import convert
from canon_ls.lsp.wire.convert import Text
from canon_ls.lsp.wire.protocol import CanonProtocol

if TYPE_CHECKING:
    from canon_ls.core.storage.article import Article
    from canon_ls.core.storage.store import Store
    from canon_ls.lsp.wire.logs import ClientLogHandler

log = logging.getLogger(__name__)

MAX_DISK_BYTES = 8 * 1024 * 1024  # files read from disk for edits/links beyond this are skipped


class Watching(Protocol):
    """The file watcher as the server keeps it (session/watch.py)."""

    async def start(self) -> None: ...
    def update(self) -> None: ...
    def git_moved(self, folder: Folder) -> None: ...
    def close(self) -> None: ...


class Notifying(Protocol):
    """The client notifier as the server keeps it (session/sync.py)."""

    published: set[str]  # uris with pushed, non-empty diagnostics

    def schedule(self, uris: Iterable[str] = ()) -> None: ...


@dataclass
class Where:
    """What a document is to canon: an article, a journal entry, or a (possibly governed) file."""

    folder: Folder
    path: Path
    kind: str  # 'article' | 'journal' | 'store' (other files under .canon) | 'asset'
    address: str  # the article's address, or the asset's address ('' for the project root)
    reader: Reader  # what read requests ask: the store, or the article files while it loads
    rule_source: bool = False  # a file `canon import` reads (its head hovers as a rule)

    @property
    def store(self) -> Store:
        assert self.folder.store is not None
        return self.folder.store

    def governing(self) -> str | None:
        if self.kind == "article":
            return self.address
        served = self.kind == "asset" and self.address and self.folder.store is not None
        return self.reader.governing(self.address) if served else None

    def refresh(self, address: str) -> str | None:
        """`address`'s governing article (§4), re-read first if disk moved on since."""
        return self.folder.revalidate(address)

    def journal_read(self) -> bool:
        """Whether `journal_names` reads the journal here (a long one is not read early)."""
        return True

    def article_uri(self, address: str) -> str:
        return self.folder.article_uri(address)


@dataclass
class DiskWhere(Where):
    """A `Where` answering from the article files while the store loads."""

    reader: KeptView

    def refresh(self, address: str) -> str | None:
        return self.reader.governing(address)  # just read from disk

    def journal_read(self) -> bool:
        return self.reader.store.journal_count() <= JOURNAL_MAX

    def article_uri(self, address: str) -> str:
        return from_fs_path(self.reader.store.paths.file(address)) or ""


@dataclass(frozen=True)
class Found:
    """What hover, inlay hint, code lens and definition show: the article governing `address`."""

    where: Where
    address: str  # what the token (or the document itself) names
    governing: str
    article: Article
    uri: str  # the governing article's file
    token: CursorToken | None = None  # None: the document's own article
    range: Range | None = None  # the token's span, in the client's encoding
    path: Path | None = None  # the file or folder named (None: a [[link]])


def lookup(
    ls: CanonLanguageServer,
    uri: str,
    where: Where | None,
    pos: Position | None = None,
    *,
    own_on_first_line: bool = True,
) -> Found | None:
    """The one lookup of the read requests: what the text at `pos` names."""
    if where is None or where.folder.store is None or where.kind == "store":
        return None
    if pos is not None:
        text = ls.text_of(uri)
        if text is None:
            return None
        codec = ls.workspace.position_codec
        line_no, col, line = convert.from_client(codec, text, pos)
        hit = named(
            where.reader, where.folder.project, where.path, where.kind, text, line_no, line, col
        )
        if hit is not None:
            token, address, exact, path = hit
            governing = where.refresh(address)
            if governing and (not exact or governing == address):
                rng = convert.span(codec, text, line_no, token.start, token.end)
                return _found(where, address, governing, token, rng, path)
        if not (own_on_first_line and line_no == 0):
            return None
    if where.kind != "asset" or not where.address:
        return None
    return _found(where, where.address, where.refresh(where.address), path=where.path)


def imported(where: Where, text: Text, lines: range) -> Iterator[tuple[int, Import, Found]]:
    """Each import on `lines` naming a governed project module (document links, inlay hints)."""
    seen: dict[Any, Any] = {}
    for n in imports.import_lines(where.path, text.source, lambda at: text.line_col(at)[0]):
        if n not in lines:
            continue
        line = text.line(n)
        for hit in imports.on_line(where.folder.project, where.path, text.line, n, seen=seen):
            address = where.reader.address_of(str(hit.path), as_path=True)
            token = CursorToken(line[hit.start : hit.end], hit.start, hit.end, False)
            governing = where.refresh(address) if address else None
            if (found := _found(where, address, governing, token, path=hit.path)) is not None:
                yield n, hit, found


def _found(
    where: Where,
    address: str,
    governing: str | None,
    token: CursorToken | None = None,
    rng: Range | None = None,
    path: Path | None = None,
) -> Found | None:
    article = where.reader.article(governing) if governing else None
    if governing is None or article is None:
        return None
    return Found(where, address, governing, article, where.article_uri(governing), token, rng, path)


@dataclass(eq=False)
class Folder:
    """One project: its Store, load, settings, whole-store check, `signals` and caches."""

    uri: str
    project: Path
    server: CanonLanguageServer
    settings: Settings = field(default_factory=Settings)
    store: Store | None = None
    load: Load | None = None  # the store's load, while it has one
    signals: Signals = field(default_factory=lambda: Signals())
    check: Check = field(init=False)
    searcher: Searcher | None = None  # the BM25 worker once started
    warming: asyncio.Task[None] | None = None  # `warm`, while it runs
    typing: Typing = field(default_factory=lambda: Typing())  # articles with unsaved text
    queued: set[str] = field(default_factory=set)  # changes found by reads, for the owner
    # source uri -> ((encoding, 'open' | 'disk', text or stat identity), [(target, range)],
    # file path): references' link ranges (navigation.link_ranges)
    link_ranges: dict[
        str, tuple[tuple[object, str, object], list[tuple[str, Range]], str | None]
    ] = field(default_factory=dict)
    _uris: dict[str, str] = field(default_factory=dict)
    error: str | None = None  # why the store could not be opened
    problems_shown: set[str] = field(default_factory=set)  # option-file sentences already shown

    def __post_init__(self) -> None:
        self.check = Check(self)

    def open(self) -> None:
        """(Re)open the store with the current settings; a bad option becomes `error`."""
        try:
            self.store = self.settings.open_store(self.project)
            self.error = None
        except Exception as exc:  # OptionError or anything unexpected: stay quiet but say why
            self.store = None
            self.error = f"canon could not open the store in {self.project}: {exc}"
            log.warning(self.error)
        self.load = (
            None if self.store is None else Load(self.store, self.server.run_task, self.warm)
        )
        self.check.asked = False  # none was asked for the new store yet
        if self.searcher is not None:
            self.searcher.stop()
            self.searcher = None
        self.link_ranges = {}
        self._uris = {}
        self.signals.forget()

    def options(self) -> Options:
        """SPEC §13 as this folder sees it now: the client's settings."""
        return resolve(
            self.project, self.settings.options(), explicit_source="editor",
            trust=self.settings.trusted_client or None,
        )  # fmt: skip

    def store_options(self) -> dict[str, Any]:
        """root and mounts for a child process (check, search, `canon` commands)."""
        if self.settings.trusted_client and self.store is not None and self.store.options:
            return self.store.options.store_options()
        return self.settings.store_options()

    @property
    def serving(self) -> bool:
        return self.store is not None and self.store.exists()

    def close(self) -> None:
        """The folder leaves (removed, or the server shuts down): its check and search stop."""
        self.check.stop()
        if self.searcher is not None:
            self.searcher.stop()

    def search(self) -> Searcher:
        """The folder's searcher, started now if nothing started it yet."""
        if self.searcher is None:
            self.searcher = Searcher(self.project, self.store_options(), self.server.run_task)
            self.searcher.start()
        return self.searcher

    def view(self, where: Where) -> Where:
        """The read view of `where`: from the article files while the store is not loaded."""
        load = self.load
        if where.kind not in ("asset", "article") or load is None or not load.early():
            return where
        view = KeptView(load)
        return DiskWhere(self, where.path, where.kind, where.address, view, where.rule_source)

    def revalidate(self, address: str) -> str | None:
        """`address`'s governing article, re-read."""
        store = self.store
        if store is None:
            return None
        try:
            changed, governing = store.revalidate_governing(address)
        except Exception:  # a freshness probe must never fail the request it serves
            log.exception("freshness check failed for %s", address)
            return store.governing(address)
        self.queue(changed)
        return governing

    def queue(self, addresses: set[str]) -> None:
        """Changes a read found: the server's change pipeline takes them on the next turn."""
        if not addresses:
            return
        first = not self.queued
        self.queued |= addresses
        if first:
            with contextlib.suppress(RuntimeError):  # no loop: the watcher brings them later
                asyncio.get_running_loop().call_soon(self._take_queued)

    def _take_queued(self) -> None:
        addresses, self.queued = self.queued, set()
        if self.server.folders.get(self.uri) is self:
            self.server.store_changed(self, addresses)

    def recheck(self, address: str, *, checking: bool) -> bool:
        """Recompute one article's findings in-process."""
        store, signals = self.store, self.signals
        if store is None:
            return False
        staleness = signals.checked and self.settings.staleness_enabled and ":" not in address
        try:
            done = core_recheck.recheck(
                store,
                address,
                previous=signals.findings.get(address),
                newest=signals.newest.get(address),
                evidence=signals.evidence.get(address),
                staleness=staleness,
            )
        except Exception:
            log.exception("checking %s failed", address)
            return False
        signals.record(address, done, staleness)
        # New since the last whole-store check (one running now will see it anyway).
        return done is not None and address not in signals.known and not checking

    def where(self, path: Path) -> Where | None:
        """What a file is to this folder's store: core's one rule."""
        store = self.store
        if store is None:
            return None
        kind, address = store.place(path)
        if not kind:
            return None
        rule = False  # a file `canon import` reads
        if kind == "asset":
            with contextlib.suppress(ValueError):
                rule = is_source(path.relative_to(self.project).as_posix())
        return Where(self, path, kind, address, store, rule)

    def article_uri(self, address: str) -> str:
        """The article file's URI (cached: `path_of` resolves the path on disk, ~80 µs)."""
        uri = self._uris.get(address)
        if uri is None:
            store = self.store
            assert store is not None
            if ":" not in address and store.has(address):  # an indexed, normalised address
                path = store.paths.file(address)
            else:  # anything else goes through the store's containment check
                path = str(store.path_of(address))
            uri = from_fs_path(path) or ""
            if len(self._uris) < 100_000:
                self._uris[address] = uri
        return uri

    def warm(self) -> None:
        """Build core's backlinks index and journal by subject, in steps between requests."""
        store = self.store
        if store is None or (self.warming is not None and not self.warming.done()):
            return

        async def steps(step: int = 25) -> None:
            for _ in itertools.chain(store.build_backlinks(step), store.journal_steps(step)):
                await yield_to_requests()
                if self.store is not store:
                    return  # reopened: the old store's half-built indexes go with it

        self.warming = self.server.run_task(steps(), "canon-warm")

    def finding_uri(self, address: str) -> str:
        """Where a finding is shown: its article, or schema.json for store-wide ones ('')."""
        assert self.store is not None
        if not address:
            return from_fs_path(str(self.store.schema_file)) or ""
        return self.article_uri(address)

    def contains(self, path: Path) -> bool:
        bases = [self.project, *(self.store.mounts.values() if self.store is not None else ())]
        return any(core_address.within(path, base) for base in bases)


class CanonLanguageServer(LanguageServer):
    """pygls server holding one Folder per workspace folder, plus session-wide flags."""

    def __init__(self) -> None:
        super().__init__(name="canon-ls", version=version() or "0", protocol_cls=CanonProtocol)
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
        """Start background work on the loop: the one way the server does."""
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

    def stop_work(self) -> None:
        """End everything the session started."""
        self.watcher.close()
        self.cancel_tasks()
        for folder in self.folders.values():
            folder.close()

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
        return best or next((f for f in self.folders.values() if f.contains(path)), None)

    def where(self, uri: str) -> Where | None:
        """Locate a document URI; None outside every served project (or for non-file URIs)."""
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
        """`where(uri)` as a read request sees it (`Folder.view`)."""
        found = self.where(uri)
        return found.folder.view(found) if found is not None else None

    # -- documents ------------------------------------------------------------------------
    def open_articles(self, folder: Folder) -> set[str]:
        """Addresses of `folder`'s articles open in the editor."""
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
        """The editor's text when the document is open, else the file on disk (bounded)."""
        text = self.open_text(uri)
        if text is not None:
            return text
        fs = to_fs_path(uri)
        return read_text(Path(fs)) if fs else None


def read_text(path: Path) -> Text | None:
    """A file on disk as text, through core's regular-file reader (a FIFO never blocks)."""
    try:
        data, longer = fsio.read_regular(path, MAX_DISK_BYTES)
        return None if longer else Text(data.decode("utf-8"))
    except (OSError, ValueError):  # NotRegular and OutsideStore among them; bad UTF-8
        return None
