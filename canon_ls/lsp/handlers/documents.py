"""Open/change/save/close: keep one document's diagnostics and the store in step (SPEC §10)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path

from canon_ls.lsp.handlers import diagnostics
from canon_ls.lsp.session import sync, typed
from canon_ls.lsp.session.state import CanonLanguageServer, read_text

log = logging.getLogger(__name__)

SAVE_DEBOUNCE = 5.0  # seconds: a saved asset may change staleness; re-check once per burst


def on_did_open(ls: CanonLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    where = ls.where(uri)
    if where is not None and where.kind == "article":
        on_disk = read_text(where.path)
        if on_disk is None or on_disk.source != params.text_document.text:
            typed.changed(ls, uri, settled)  # opened unsaved (a restored editor session)
    if not ls.pull_diagnostics:
        diagnostics.publish(ls, uri, diagnostics.for_uri(ls, uri))


def on_did_change(ls: CanonLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    typed.changed(ls, params.text_document.uri, settled)


def settled(ls: CanonLanguageServer, uri: str) -> None:
    """An article's text stopped changing: push its findings."""
    if not ls.pull_diagnostics:
        diagnostics.publish(ls, uri, diagnostics.for_uri(ls, uri))
        return
    where = ls.where(uri)
    if where is not None and uri in where.folder.typing.owed:
        where.folder.typing.owed.discard(uri)
        ls.notifier.schedule()


def on_did_save(ls: CanonLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    where = ls.where(uri)
    if where is None or where.folder.store is None:
        return
    where.folder.typing.forget(uri)  # the file holds the text now: its findings apply
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
    where = ls.where(uri)
    if where is not None and uri in where.folder.typing.found:
        where.folder.typing.forget(uri)  # closed unsaved: the file's findings again
        if ls.pull_diagnostics:
            ls.notifier.schedule()
        else:
            diagnostics.publish(ls, uri, diagnostics.for_uri(ls, uri))
    if ls.pull_diagnostics:
        return
    if where is not None and where.kind == "asset":
        diagnostics.publish(ls, uri, [])
