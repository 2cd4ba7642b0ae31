"""The change pipeline: store changed -> re-check what depends on it -> tell the client."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from lsprotocol import types
from pygls.capabilities import get_capability

from canon_ls.core.storage.address import parent
from canon_ls.lsp.handlers import diagnostics
from canon_ls.lsp.session.state import CanonLanguageServer, Folder

log = logging.getLogger(__name__)

NEW_ARTICLE_DEBOUNCE = 1.0  # seconds before a new article triggers a whole-store re-check


def store_changed(ls: CanonLanguageServer, folder: Folder, addresses: set[str]) -> None:
    store = folder.store
    if store is None or not addresses:
        return
    if folder.searcher is not None:
        folder.searcher.changed.update(addresses)
    affected = set(addresses)
    for address in addresses:
        affected.update(store.backlinks(address))
        up = parent(address)
        governing = store.governing(up) if up else None
        if governing:
            affected.add(governing)
    new = False
    checking = folder.check.running
    for address in affected:
        new = folder.recheck(address, checking=checking) or new
    folder.check.changed(affected)
    pending = folder.signals.changed()
    ls.notifier.schedule(folder.finding_uri(a) for a in affected)
    if (new or pending) and folder.signals.checked:
        # a new article (orphan? governs?) or a verdict without its evidence yet
        folder.check.schedule(NEW_ARTICLE_DEBOUNCE)


class Notifier:
    """Telling the client what changed."""

    def __init__(self, ls: CanonLanguageServer) -> None:
        self.ls = ls
        self.dirty: set[str] = set()  # uris whose diagnostics must be re-sent
        self.pending = False  # a send is scheduled for this loop tick
        self.published: set[str] = set()  # uris with pushed, non-empty diagnostics

    def schedule(self, uris: Iterable[str] = ()) -> None:
        self.dirty.update(uris)
        if self.pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self.pending = True
        loop.call_soon(lambda: self.ls.run_task(self.notify(), "canon-notify"))

    async def notify(self) -> None:
        ls = self.ls
        self.pending = False
        uris = list(self.dirty)
        self.dirty.clear()
        try:
            if ls.pull_diagnostics:
                await refresh(ls, types.WORKSPACE_DIAGNOSTIC_REFRESH, "workspace.diagnostics")
            else:
                for uri in uris:
                    diagnostics.publish(ls, uri, diagnostics.for_uri(ls, uri))
                diagnostics.push_open_assets(ls)
            await refresh_views(ls)
        except Exception:
            log.exception("notifying the client of store changes failed")


async def refresh_views(ls: CanonLanguageServer) -> None:
    """Inlay hints and code lenses show what the store says: the client asks again."""
    await refresh(ls, types.WORKSPACE_INLAY_HINT_REFRESH, "workspace.inlay_hint")
    await refresh(ls, types.WORKSPACE_CODE_LENS_REFRESH, "workspace.code_lens")


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
