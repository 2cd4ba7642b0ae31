"""Open/change/save/close: keep one document's diagnostics and the store in step (SPEC §10)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path

from ..state import CanonLanguageServer
from . import diagnostics, sync

log = logging.getLogger(__name__)

SAVE_DEBOUNCE = 5.0  # seconds: a saved asset may change staleness; re-check once per burst


def on_did_open(ls: CanonLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    if not ls.pull_diagnostics:
        uri = params.text_document.uri
        diagnostics.publish(ls, uri, diagnostics.for_uri(ls, uri))


def on_did_save(ls: CanonLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    where = ls.where(uri)
    if where is None or where.folder.store is None:
        return
    if where.kind in ("article", "journal", "store"):
        fs = to_fs_path(uri)
        if fs:
            changed = where.folder.store.reload_file(Path(os.path.abspath(fs)))
            sync.store_changed(ls, where.folder, changed)
            ls.notifier.schedule()
    elif where.kind == "asset" and where.folder.serving and where.governing():
        # Client file events cover creations and deletions; content changes arrive as saves.
        where.folder.check.schedule(SAVE_DEBOUNCE)


def on_did_close(ls: CanonLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    if ls.pull_diagnostics:
        return
    where = ls.where(uri)
    if where is not None and where.kind == "asset":
        diagnostics.publish(ls, uri, [])
