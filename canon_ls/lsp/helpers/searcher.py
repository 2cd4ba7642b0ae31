"""Workspace-symbol search in a child process (SPEC §10 workspace symbols)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    RunTask = Callable[[Coroutine[Any, Any, Any], str], asyncio.Task[Any]]

from canon_ls.core.git import gitrun
from canon_ls.core.retrieval.search_corpus import spec_of
from canon_ls.lsp.helpers.child import spawn

log = logging.getLogger(__name__)


FIRST_WAIT = 120.0  # seconds a first question may wait for the index to be built or loaded
IDLE_EXIT = 120.0  # seconds without a question after which the worker exits
HOLD_GIT = 120.0  # seconds at most that git waits for a worker building its index
GIT_FIRST = 10.0  # seconds at most a worker's start waits for the git already running
YIELD_QUIET = 1.0  # seconds without a question after which a worker makes way for a waiting git
YIELD_AFTER = 20.0  # seconds a git waits at most while questions keep coming


async def _take_all(held: gitrun.Held, seconds: float) -> None:
    """Take the git slots as the git running now ends (for `seconds` at most)."""
    deadline = time.monotonic() + seconds
    while not held.take() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


class Searcher:
    """The server-side handle: start once, ask many times."""

    def __init__(self, project: Path, options: dict[str, Any], run: RunTask) -> None:
        self.run = run  # the server's tracked task starter
        self.project = project
        self.options = options
        self.proc: asyncio.subprocess.Process | None = None
        self.ready = False
        self.failure = ""  # why the worker cannot answer, once it is known
        self.reported = False  # the person was told about `failure`
        self.changed: set[str] = set()
        self.lock = asyncio.Lock()
        self.task: asyncio.Task[None] | None = None  # None: not started (or retired when idle)
        self.idle_task: asyncio.Task[None] | None = None
        self.used = time.monotonic()  # the last question (or the moment it became ready)
        self.starts = 0  # workers started so far
        self.served = False  # it was ready once (a worker retired when idle restarts fast)
        self.indexing: asyncio.Task[None] | None = None  # its progress, while early answers
        self.keeper: asyncio.Task[None] | None = None  # holds git while the worker lives

    def start(self) -> None:
        if self.task is None:
            self.task = self.run(self._start(), "canon-search-worker")

    async def _start(self) -> None:
        # No git of the server's tree runs beside a live worker (memory: at 10k articles the
        # server, the worker, a check waiting and git summed 172 MB): the worker starts once the
        # git running now ends, and makes way when a git waits and nobody asks (_keep).
        held = gitrun.Held()
        self.keeper = self.run(self._keep(held), "canon-search-holds-git")  # it lets them go
        await _take_all(held, GIT_FIRST)
        try:
            await self._spawn()
        except Exception as exc:  # no worker: the caller falls back and says so
            self.failure = f"the search worker did not start ({exc})"
            self.keeper.cancel()
            return
        if not self.ready:
            self.failure = "the search worker stopped while building its index"
            return
        self.used = time.monotonic()
        self.served = True
        if idle_seconds() > 0 and self.idle_task is None:
            self.idle_task = self.run(self._idle(), "canon-search-idle")

    async def _spawn(self) -> None:
        # The worker reads the article files as they are now: what changed before is in them.
        self.changed.clear()
        self.starts += 1
        self.proc = await spawn(
            "canon_ls.lsp.helpers.searcher_worker",
            "--spec",
            json.dumps(self.spec()),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=2**24,
        )
        assert self.proc.stdout is not None
        line = await self.proc.stdout.readline()
        self.ready = bool(line) and json.loads(line).get("ready", False)

    async def _keep(self, held: gitrun.Held) -> None:
        """Hold git while the worker lives (HOLD_GIT at most while it builds); retire it for a
        waiting git after YIELD_QUIET without a question (YIELD_AFTER at most)."""
        started, waited, proc = time.monotonic(), 0.0, self.proc
        try:
            while proc is None or (proc is self.proc and proc.returncode is None):
                proc = proc or self.proc
                held.take()
                now = time.monotonic()
                if not self.ready and now - started > HOLD_GIT:
                    return
                waited = (waited or now) if self.ready and held.wanted() else 0.0
                quiet = now - self.used >= YIELD_QUIET or now - waited >= YIELD_AFTER
                if waited and quiet and not self.lock.locked():
                    async with self.lock:
                        await self._retire("a git waits")
                    return
                await asyncio.sleep(0.1)
        finally:
            held.release()

    def spec(self) -> dict[str, Any]:
        from canon_ls.core.storage.project import open_store  # the server's own: imported already

        return spec_of(open_store(self.project, self.options))

    async def _idle(self) -> None:
        """Retire the worker once nobody asked it anything for `idle_seconds()`."""
        try:
            while True:
                left = self.used + idle_seconds() - time.monotonic()
                if left > 0:
                    await asyncio.sleep(left)
                    continue
                async with self.lock:  # never in the middle of a question
                    if time.monotonic() - self.used < idle_seconds():
                        continue
                    await self._retire(f"{idle_seconds():.0f} s without a question")
                return
        finally:
            self.idle_task = None

    async def _retire(self, why: str) -> None:
        proc, self.proc, self.ready, self.task = self.proc, None, False, None
        if self.idle_task is not None and self.idle_task is not asyncio.current_task():
            self.idle_task.cancel()
        if proc is None or proc.returncode is not None:
            return
        log.info("the search worker exits: %s", why)
        assert proc.stdin is not None
        proc.stdin.close()  # the worker ends at the end of its input
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()

    async def query(self, text: str, limit: int, wait: float = FIRST_WAIT) -> list[str] | None:
        """Addresses best first, once the index is ready (waiting up to `wait` seconds for it)."""
        self.used = time.monotonic()
        for _ in range(2):  # a worker retired while this question waited: start it again
            self.start()
            if not self.ready and self.task is not None and not self.failure:
                try:
                    await asyncio.wait_for(asyncio.shield(self.task), wait)
                except TimeoutError:
                    log.warning("the search index was not ready within %.0f s", wait)
                    return None
            async with self.lock:
                if self.task is None and not self.failure:
                    continue
                self.used = time.monotonic()
                return await self._ask(text, limit)
        return None

    async def _ask(self, text: str, limit: int) -> list[str] | None:
        proc = self.proc
        if not self.ready or proc is None or proc.returncode is not None:
            if not self.failure:
                self.failure = "the search worker stopped"
            return None
        assert proc.stdin is not None and proc.stdout is not None
        changed, self.changed = sorted(self.changed), set()
        request = {"query": text, "limit": limit, "changed": changed}
        proc.stdin.write((json.dumps(request) + "\n").encode())
        await proc.stdin.drain()
        line = await asyncio.wait_for(proc.stdout.readline(), timeout=30)
        if not line:
            self.ready = False
            self.failure = "the search worker stopped"
            return None
        hits: list[str] = json.loads(line).get("hits", [])
        return hits

    def stop(self) -> None:
        for task in (self.task, self.idle_task, self.keeper):
            if task is not None:
                task.cancel()
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()


def idle_seconds() -> float:
    """How long an unasked worker stays (CANON_SEARCH_IDLE_S; 0 or less: for good)."""
    with contextlib.suppress(ValueError):
        return float(os.environ.get("CANON_SEARCH_IDLE_S", IDLE_EXIT))
    return IDLE_EXIT
