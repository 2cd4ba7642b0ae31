"""The whole-store check: at startup and after asset-level changes, in a child process."""

from __future__ import annotations

import asyncio
import gc
import logging
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, TypeVar

from lsprotocol import types
from pygls.capabilities import get_capability

from canon_ls.core.checking.recheck import carried_stale
from canon_ls.lsp.handlers import diagnostics
from canon_ls.lsp.helpers import background
from canon_ls.lsp.session import sync
from canon_ls.lsp.session.state import CanonLanguageServer, Folder
from canon_ls.lsp.startup import early
from canon_ls.lsp.startup.turns import yield_to_requests

if TYPE_CHECKING:
    from canon_ls.core.checking.lint import Finding

log = logging.getLogger(__name__)

ASSET_DEBOUNCE = 0.3  # seconds: a burst of asset events (git checkout, a build) re-checks once


async def run(ls: CanonLanguageServer, folder: Folder, delay: float) -> None:
    """One whole-store check of `folder` (`folder.check` schedules it)."""
    if delay:
        await asyncio.sleep(delay)  # debounce bursts of file events
    inputs = folder.check.start()
    if inputs is None:
        return
    (load, options, staleness), meanwhile = inputs, folder.check.meanwhile
    first: dict[str, list[Finding]] | None = None  # what the partial snapshot published

    async def on_partial(partial: background.Snapshot) -> None:
        nonlocal first
        grouped = await _carry_stale(folder, await _grouped(load, partial.findings))
        if folder.check.land_partial(inputs, grouped, partial.moves):
            first = {}  # what was published, kept apart from later re-checks
            async for part in _in_turns(list(grouped.items())):
                first.update((a, list(f)) for a, f in part)
            await _publish(ls, folder)

    # The child starts before the progress round trip: its git pass is the long pole. With
    # no parse cache yet, the store's own load waits for the one the child writes.
    cached = load.expect_cache()
    child = ls.run_task(
        background.run(folder.project, options, staleness, on_partial, cached), "canon-check-child"
    )
    if cached is not None:
        child.add_done_callback(lambda _: cached())  # the child failed: the load goes ahead
    token = None
    try:
        token = await _begin(ls, f"canon: checking {folder.project.name}")
        snapshot = await child
        if snapshot.error:
            log.warning("whole-store check of %s failed: %s", folder.project, snapshot.error)
            return
        grouped = await _grouped(load, snapshot.findings)
        known: set[str] = set()
        async for part in _in_turns(load.store.addresses(), 2048):
            known.update(part)
        landed = folder.check.land(inputs, grouped, snapshot, known)  # None: not current
        if landed is None:
            return
        pushed = time.perf_counter()
        if first is None:
            await _publish(ls, folder)
        else:  # only what staleness (or an edit meanwhile) changed since the partial push
            only = await _differing(first, folder.signals.findings)
            await _publish(ls, folder, only | landed)
        log.info(
            "canon checked %s: %d findings in %.2fs (child; git pass %.2fs alongside), sent in "
            "%.2fs",
            folder.project,
            len(snapshot.findings),
            snapshot.seconds,
            snapshot.git_seconds,
            time.perf_counter() - pushed,
        )
        await sync.refresh_views(ls)
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("whole-store check of %s failed", folder.project)
    finally:
        child.cancel()  # a no-op once it finished; else the child is killed
        if folder.check.meanwhile is meanwhile:
            folder.check.meanwhile = None
        _end(ls, token)
        gc.freeze()  # the store's long-lived objects leave the collector's scans (p99)


T = TypeVar("T")


async def _in_turns(items: Sequence[T], size: int = 256) -> AsyncIterator[Sequence[T]]:
    """`items` in slices of `size`, yielding to the loop every early.SLICE items."""
    resume = time.perf_counter()
    for start in range(0, len(items), size):
        yield items[start : start + size]
        if time.perf_counter() - resume >= early.SLICE:
            await yield_to_requests()
            resume = time.perf_counter()


async def _grouped(load: early.Load, findings: list[Finding]) -> dict[str, list[Finding]]:
    """Findings by article, in their order (in turns of the loop), once the store has loaded."""
    await load.ready()
    grouped: dict[str, list[Finding]] = {}
    async for part in _in_turns(findings):
        for finding in part:
            grouped.setdefault(finding.address, []).append(finding)
    return grouped


async def _differing(before: dict[str, list[Finding]], after: dict[str, list[Finding]]) -> set[str]:
    """The articles whose findings differ between the two (in turns of the loop)."""
    only: set[str] = set()
    async for part in _in_turns([*before, *(a for a in after if a not in before)]):
        only.update(a for a in part if before.get(a) != after.get(a))
    return only


async def _carry_stale(
    folder: Folder, grouped: dict[str, list[Finding]]
) -> dict[str, list[Finding]]:
    """`grouped` with the previous check's stale findings kept meanwhile (no flicker)."""
    async for part in _in_turns(list(folder.signals.stale.items()), 64):
        for address, reason in part:
            if address in grouped or (folder.store is not None and folder.store.has(address)):
                found = grouped.setdefault(address, [])
                found.append(carried_stale(address, reason, folder.signals.evidence.get(address)))
                found.sort(key=lambda f: (f.line, f.start))  # check()'s order (stable)
    return grouped


async def _publish(ls: CanonLanguageServer, folder: Folder, only: set[str] | None = None) -> None:
    """Tell the client: a refresh request (pull) or the findings pushed in steps."""
    if ls.pull_diagnostics:
        await sync.refresh(ls, types.WORKSPACE_DIAGNOSTIC_REFRESH, "workspace.diagnostics")
    else:
        await diagnostics.push_folder(ls, folder, only)


async def _begin(ls: CanonLanguageServer, title: str) -> str | None:
    if not get_capability(ls.client_capabilities, "window.work_done_progress", False):
        return None
    token = f"canon-check-{uuid.uuid4()}"
    try:
        await asyncio.wait_for(ls.work_done_progress.create_async(token), timeout=10)
    except Exception:
        return None
    ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=False))
    return token


def _end(ls: CanonLanguageServer, token: str | None) -> None:
    if token is None or ls.shutting_down:
        return
    try:
        ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
    except Exception:
        log.debug("progress end failed", exc_info=True)
