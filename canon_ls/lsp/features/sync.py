"""The change pipeline: store changed -> re-check what depends on it -> tell the client.

Incremental by construction (SPEC §10 external changes): a changed article re-checks itself,
the articles linking to it (broken links may have healed) and its nearest ancestor article
(`children.listed`). Client notifications are coalesced into one send per loop tick.
"""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types
from pygls.capabilities import get_capability

from canon_ls.core import assets as core_assets
from canon_ls.core.address import parent

from ..state import CanonLanguageServer, Folder
from . import diagnostics

log = logging.getLogger(__name__)

# Findings that need the whole-store signals (assets, git times); kept when those are missing.
GRAPH_CODES = frozenset({"orphan", "stale"})


def store_changed(ls: CanonLanguageServer, folder: Folder, addresses: set[str]) -> None:
    store = folder.store
    if store is None or not addresses:
        return
    affected = set(addresses)
    for address in addresses:
        try:
            affected.update(store.backlinks(address))
        except Exception:
            log.exception("backlinks failed for %s", address)
        up = parent(address)
        if up:
            governing = store.governing(up)
            if governing:
                affected.add(governing)
    for address in affected:
        recheck(folder, address)
    if folder.changed_during_check is not None:
        folder.changed_during_check.update(affected)
    folder.generation += 1
    ls.dirty_uris.update(folder.finding_uri(a) for a in affected)
    schedule_notify(ls)


def recheck(folder: Folder, address: str) -> None:
    """Recompute one article's findings in-process (cheap: one article, in-memory graph)."""
    store = folder.store
    if store is None:
        return
    if store.article(address) is None:
        folder.findings.pop(address, None)
        folder.stale.pop(address, None)
        return
    try:
        found = core_assets.article_findings(store, address, folder.assets, folder.times)
    except Exception:
        log.exception("checking %s failed", address)
        return
    if folder.assets is None or folder.times is None:
        kept = [f for f in folder.findings.get(address, []) if f.code in GRAPH_CODES]
        found = [f for f in found if f.code not in GRAPH_CODES] + kept
    if folder.checked and folder.times is not None and folder.settings.staleness_enabled:
        stale = next((f for f in found if f.code == "stale"), None)
        if stale is None:
            folder.stale.pop(address, None)
        else:
            folder.stale[address] = stale.message
    if not folder.settings.staleness_enabled:
        found = [f for f in found if f.code != "stale"]
    if found:
        folder.findings[address] = found
    else:
        folder.findings.pop(address, None)


def schedule_notify(ls: CanonLanguageServer) -> None:
    if ls.notify_pending:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    ls.notify_pending = True
    loop.call_soon(lambda: asyncio.ensure_future(notify(ls)))


async def notify(ls: CanonLanguageServer) -> None:
    ls.notify_pending = False
    uris = list(ls.dirty_uris)
    ls.dirty_uris.clear()
    try:
        if ls.pull_diagnostics:
            await refresh(ls, types.WORKSPACE_DIAGNOSTIC_REFRESH, "workspace.diagnostics")
        else:
            for uri in uris:
                diagnostics.publish(ls, uri, diagnostics.for_uri(ls, uri))
            diagnostics.push_open_assets(ls)
        await refresh(ls, types.WORKSPACE_INLAY_HINT_REFRESH, "workspace.inlay_hint")
        await refresh(ls, types.WORKSPACE_CODE_LENS_REFRESH, "workspace.code_lens")
    except Exception:
        log.exception("notifying the client of store changes failed")


async def refresh(ls: CanonLanguageServer, method: str, capability: str) -> None:
    """Send a `*/refresh` request when the client declared it can take one."""
    if ls.shutting_down:
        return
    if not get_capability(ls.client_capabilities, f"{capability}.refresh_support", False):
        return
    try:
        await asyncio.wait_for(ls.protocol.send_request_async(method, None), timeout=10)
    except Exception as exc:  # a client that fails a refresh keeps its old view; say so
        log.info("%s was not answered: %s", method, exc)
