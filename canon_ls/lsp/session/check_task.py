"""One folder's whole-store check as a task: scheduled, run again when asked meanwhile, its
answer landed only while current (session/checks.py does the work; `Checked`: state.Folder)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from canon_ls.lsp.session.settings import Settings
from canon_ls.lsp.session.signals import Signals
from canon_ls.lsp.startup.early import Load

if TYPE_CHECKING:
    from canon_ls.core.storage.store import Store

RERUN_DELAY = 0.5  # seconds between a finished check and a queued one


class Checked(Protocol):
    """A folder as its check asks it (session/state.py `Folder`)."""

    project: Path
    server: Any  # the CanonLanguageServer: check_work, run_task, watcher
    settings: Settings
    store: Store | None
    load: Load | None
    signals: Signals

    @property
    def serving(self) -> bool: ...
    def store_options(self) -> dict[str, Any]: ...
    def warm(self) -> None: ...
    def search(self) -> Any: ...
    def recheck(self, address: str, *, checking: bool) -> bool: ...


class Check:
    """One folder's whole-store check (session/checks.py does the work)."""

    def __init__(self, folder: Checked) -> None:
        self.folder = folder
        self.task: asyncio.Task[None] | None = None
        self.asked = False  # a check was asked for the folder's current store (reset on open)
        self.again = False  # another check was asked for while one runs
        self.meanwhile: set[str] | None = None  # re-checked in-process while one runs

    def schedule(self, delay: float = 0.0) -> None:
        self.asked = True
        if self.task is not None and not self.task.done():
            self.again = True
            return
        server = self.folder.server
        work = server.check_work(self.folder, delay)
        self.task = server.run_task(work, f"canon-check {self.folder.project.name}")
        self.task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        if self.again and not task.cancelled():
            self.again = False
            self.schedule(RERUN_DELAY)

    @property
    def running(self) -> bool:
        """Whether a check is under way (its answer yet to land)."""
        return self.meanwhile is not None

    def start(self) -> tuple[Any, ...] | None:
        """A check starts (its `inputs`); None when there is no store to check."""
        if not self.folder.serving or self.folder.load is None:
            return None
        self.meanwhile = set()
        return self.inputs()

    def inputs(self) -> tuple[Any, ...]:
        """What a check's answer depends on: the store's load, root and mounts, staleness."""
        folder = self.folder
        return folder.load, folder.store_options(), folder.settings.staleness_enabled

    def land_partial(self, inputs: tuple[Any, ...], findings: Any, moves: Any) -> bool:
        """A check's first answer, all but staleness, into the signals (False: not current)."""
        if current := self.inputs() == inputs:
            self.folder.signals.land_partial(findings, moves)
        return current

    def land(
        self, inputs: tuple[Any, ...], findings: Any, snapshot: Any, known: set[str]
    ) -> set[str] | None:
        """The whole answer into the signals (edits re-checked on top); None when not current."""
        if self.inputs() != inputs:
            return None
        folder, meanwhile = self.folder, self.meanwhile or set()
        store = folder.store
        known |= {a for a in meanwhile if store is not None and store.has(a)}
        folder.signals.land(findings, snapshot, known, folder.settings.staleness_enabled)
        folder.server.watcher.update()  # the own watcher follows the listed asset directories
        folder.warm()  # backlinks and the journal's subjects, before the search index
        folder.search()  # the BM25 worker starts once the check no longer competes
        for address in meanwhile:
            folder.recheck(address, checking=True)
        return meanwhile

    def changed(self, addresses: set[str]) -> None:
        """Addresses re-checked in-process: a running check re-checks them once it lands."""
        if self.meanwhile is not None:
            self.meanwhile.update(addresses)

    def stop(self) -> None:
        self.again = False
        if self.task is not None:
            self.task.cancel()
