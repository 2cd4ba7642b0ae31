"""Diagnostics as you type (SPEC §10): an open article's findings from its unsaved text."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from canon_ls.core.checking import recheck as core_recheck
from canon_ls.core.checking.lint import Finding
from canon_ls.lsp.session.state import CanonLanguageServer, Folder

log = logging.getLogger(__name__)

DEBOUNCE = 0.1  # seconds after the last change (SPEC §10: at most 150 ms)
TYPED_MAX = 512 * 1024  # characters: a longer unsaved text is not checked on the loop
Settled = Callable[[CanonLanguageServer, str], None]


def changed(ls: CanonLanguageServer, uri: str, then: Settled) -> None:
    """An open document's text changed (or opened unlike its file)."""
    where = ls.where(uri)
    text = ls.open_text(uri)
    if where is None or where.kind != "article" or where.folder.store is None or text is None:
        return
    folder = where.folder
    typing = folder.typing
    typing.found[uri] = ((text.version or 0, -1), None)
    timer = typing.timers.pop(uri, None)
    if timer is not None:
        timer.cancel()
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return

    async def settle() -> None:
        typing.timers.pop(uri, None)
        if folder.load is not None:
            await folder.load.ready()
        if ls.folders.get(folder.uri) is folder and uri in typing.found:
            then(ls, uri)

    typing.timers[uri] = loop.call_later(DEBOUNCE, lambda: ls.run_task(settle(), "canon-typed"))


def findings(
    folder: Folder, address: str, uri: str, text: str, version: int
) -> list[Finding] | None:
    """The findings of the editor's text, or None when they follow the file."""
    typing = folder.typing
    known = typing.found.get(uri)
    if known is None:
        return None
    key = (version, folder.signals.generation)  # the text, and what the store held
    if known[0] == key and known[1] is not None:
        return known[1]
    store = folder.store
    if store is None or (folder.load is not None and not folder.load.loaded):
        typing.owed.add(uri)  # the load runs in steps (checking now would load it in one go)
        return None
    previous = folder.signals.findings.get(address, [])
    if len(text) > TYPED_MAX:  # the saved file's findings stand, and say why
        skip = f"This unsaved text is over {TYPED_MAX:,} characters: it is checked once saved."
        found = [*previous, Finding(address, "typed-skipped", "info", skip)]
    else:
        try:
            done = core_recheck.recheck(store, address, previous=previous, text=text)
        except Exception:
            log.exception("checking the unsaved text of %s failed", address)
            return None
        found = done.findings if done is not None else []
        found += [f for f in previous if f.code == "stale"]
    typing.found[uri] = (key, found)
    return found
