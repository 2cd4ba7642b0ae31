"""The first hovers and inlay hints, before the store is loaded (issue 15, SPEC §10 hover)."""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
import os
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canon_ls.core.storage import cache, freshness
from canon_ls.core.storage.disk_view import DiskView
from canon_ls.lsp.startup.turns import yield_to_requests

if TYPE_CHECKING:
    from canon_ls.core.storage.article import Article
    from canon_ls.core.storage.journal import JournalEntry
    from canon_ls.core.storage.store import Store

log = logging.getLogger(__name__)

STEP = 20  # articles per step of core's load (a parse is ~40 µs, a cached one ~10 µs)
# seconds of loading between two turns of the loop: a hover waits one (at 50k, hover p99 during
# the start-up check was 3.7 ms with 1 ms, 2.9 ms with 0.5 ms)
SLICE = 0.0005
FREEZE_EVERY = 40  # turns between two freezes of what the load has built (~20 ms of it)
KEPT_MAX = 256

RunTask = Callable[[Coroutine[Any, Any, Any], str], "asyncio.Task[Any]"]


class Load:
    """One store's load, owned by its folder (a reopened store gets a new one)."""

    def __init__(self, store: Store, run_task: RunTask, then: Callable[[], None]) -> None:
        self.store = store
        self.run_task = run_task
        self.then = then  # runs once the load is done (the folder warms what comes next)
        self.task: asyncio.Task[None] | None = None  # the load under way
        self.coming: asyncio.Future[None] | None = None  # done once the child's cache is there
        self.deferred: list[Path] | None = None  # files changed while it loads (`defer`)
        # article file -> (its stat key, its article) as a KeptView read it
        self.kept: dict[str, tuple[freshness.Key, Article]] = {}
        # the journal's headings as a KeptView read them, with its folder's stat key then
        self.kept_journal: tuple[freshness.Key, list[JournalEntry]] | None = None

    @property
    def loaded(self) -> bool:
        """Whether the store has read its articles."""
        return self.store.loaded and self.task is None

    def early(self) -> bool:
        """Whether requests answer from the article files for now (and the load starts)."""
        store = self.store
        if self.loaded or store.mounts or store.layout_problem():
            return False
        self.soon(journal=True)
        return True

    def soon(self, journal: bool = False) -> asyncio.Task[None] | None:
        """Start loading the store in steps on the event loop (once)."""
        if self.task is not None or self.store.loaded:
            return self.task
        try:
            task = self.run_task(self._steps(journal=journal), "canon-store-load")
        except RuntimeError:
            return None
        self.task = task
        task.add_done_callback(lambda _: setattr(self, "task", None))
        return task

    def expect_cache(self) -> Callable[[], None] | None:
        """A check child is starting: with no parse cache, the load waits for the child's."""
        store = self.store
        if store.loaded or self.task is not None or store.mounts or store.layout_problem():
            return None
        if store.cache_usable() or cache.cache_file(store.root, store.project) is None:
            return None
        try:
            coming = self.coming = asyncio.get_running_loop().create_future()
        except RuntimeError:
            return None

        def release() -> None:
            if not coming.done():
                coming.set_result(None)
            if self.coming is coming:
                self.coming = None

        return release

    def hurry(self) -> None:
        """A person waits for the store (the first symbol query)."""
        if self.coming is not None and not self.coming.done():
            self.coming.set_result(None)

    def defer(self, path: Path, then: Callable[[list[Path]], None]) -> bool:
        """A file event while the store is not loaded yet."""
        if self.loaded:
            return False
        task = self.soon()
        if task is None:
            return False
        if self.deferred is None:
            log.info(
                "canon reads the files changed meanwhile once the store of %s has loaded",
                self.store.project,
            )
            pending = self.deferred = []

            def done(_: object) -> None:
                self.deferred = None
                then(pending)

            task.add_done_callback(done)
        self.deferred.append(path)
        return True

    async def ready(self) -> None:
        """Wait until the store is loaded, loading it in steps meanwhile."""
        if self.loaded:
            return
        task = self.soon()
        if task is not None:
            await asyncio.shield(task)

    async def _steps(self, step: int = STEP, slice_s: float = SLICE, journal: bool = False) -> None:
        """core's step-wise load, yielding to the loop after each `slice_s` of work."""
        store, coming = self.store, self.coming
        if coming is not None and not coming.done():
            log.info("canon waits for the parse cache of the check of %s", store.project)
            waited = time.perf_counter()
            await coming
            log.info("canon waited %.2fs for the check's parse cache", time.perf_counter() - waited)
        started = resume = time.perf_counter()
        turns = 0
        gc.freeze()
        try:
            # no parse cache written here: one long step, and the check child writes it; then
            # the journal, which the first hover on the loaded store would read in one go
            steps = itertools.chain(
                store.load_steps(step, save=False),
                store.journal_steps(max(1, step // 4)) if journal else (),  # ~70 µs an entry
            )
            for _ in steps:
                if time.perf_counter() - resume >= slice_s:
                    turns += 1
                    if turns % FREEZE_EVERY == 0:
                        gc.collect(1)
                        gc.freeze()
                    await yield_to_requests()
                    resume = time.perf_counter()
        except Exception:  # the next request loads it again and reports what went wrong
            log.exception("loading the store failed")
            return
        self.kept.clear()  # the store answers from now on
        self.kept_journal = None
        gc.collect(1)
        gc.freeze()
        self.then()
        log.info(
            "canon loaded the store of %s in %.2fs (%d turns of the loop)",
            store.project,
            time.perf_counter() - started,
            turns,
        )


class KeptView(DiskView):
    """A DiskView keeping articles between requests while their stat key holds."""

    def __init__(self, load: Load) -> None:
        super().__init__(load.store)
        self.load = load
        self.kept = load.kept

    def journal_entries(self) -> list[JournalEntry]:
        """Read once while the folder's stat key holds."""
        key = _key_now(self.journal_dir)
        kept = self.load.kept_journal
        if kept is not None and kept[0] == key:
            return kept[1]
        now = time.time_ns()
        entries = super().journal_entries()
        if key is not None and freshness.settled(key, now):
            self.load.kept_journal = (key, entries)
        return entries

    def _parse(self, address: str) -> Article | None:
        if not address or ":" in address or ".." in address.split("/"):
            return super()._parse(address)
        path = self.store.paths.file(address)
        before = _key_now(path)
        kept = self.kept.get(path)
        if kept is not None and kept[0] == before:
            return kept[1]
        now = time.time_ns()
        article = super()._parse(address)
        if (
            article is not None
            and before is not None
            and (article.mtime_ns, article.size) == before[:2]
            and freshness.settled(before, now)
        ):
            if len(self.kept) >= KEPT_MAX:
                self.kept.clear()
            self.kept[path] = (before, article)
        return article


def _key_now(path: str | Path) -> freshness.Key | None:
    """The stat key of a file or folder as it is now (None when it cannot be read)."""
    try:
        return freshness.key(os.stat(path))
    except OSError:
        return None
