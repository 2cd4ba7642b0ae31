"""The first hovers and inlay hints, before the store is loaded (issue 15, SPEC §10 hover).

Loading a store reads every article: about a second at 10k articles and several at 50k, all
on the path to the first hover of a session. The first file a person opens needs one
article, so until the store is loaded hover and inlay hints resolve from the article files
themselves (core's `DiskView`: the nearest `articles/<ancestor>.md` that exists) and the
store loads on a thread meanwhile. The answers are the same: only where they are read from
differs.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from canon_ls.core.disk_view import JOURNAL_MAX, DiskView

from .state import Where

if TYPE_CHECKING:
    from canon_ls.core.store import Store

    from .state import CanonLanguageServer

log = logging.getLogger(__name__)

_loaders: dict[int, threading.Thread] = {}


def loaded(store: Store) -> bool:
    """Whether the store has read its articles (it does on first use; `_loaded` says so)."""
    return bool(getattr(store, "_loaded", True))


def where(ls: CanonLanguageServer, uri: str) -> Where | None:
    """`ls.where(uri)`, answering from disk while the store is not loaded yet (and starting
    its load on a thread); a mount or a store leading outside waits for the store."""
    found = ls.where(uri)
    if found is None or found.kind not in ("asset", "article") or found.folder.store is None:
        return found
    store = found.folder.store
    if loaded(store) or store.mounts or store.layout_problem():
        return found
    load_soon(store)
    return DiskWhere(found.folder, found.path, found.kind, found.address, DiskView(store))


def load_soon(store: Store) -> None:
    """Load the store on a thread (once): the event loop keeps answering meanwhile."""
    key = id(store)
    if key in _loaders:
        return
    thread = threading.Thread(target=_load, args=(store,), name="canon-store-load", daemon=True)
    _loaders[key] = thread
    thread.start()


SWITCH_INTERVAL = 0.0005  # seconds the loading thread may hold the GIL while the loop waits


def _load(store: Store) -> None:
    # The load is pure Python: with the default 5 ms switch interval each request waiting
    # for the GIL would wait up to 5 ms, once per hand-off (research: a busy thread took
    # hover p99 to 46-100 ms, 12 ms at 0.5 ms). Only while a store loads.
    with _switch_lock:
        before = _saved[0]
        if before is None:
            before = _saved[0] = sys.getswitchinterval()
        sys.setswitchinterval(min(before, SWITCH_INTERVAL))
    try:
        store.addresses()
    except Exception:  # the next request loads it again and reports what went wrong
        log.exception("loading the store failed")
    finally:
        with _switch_lock:
            _loaders.pop(id(store), None)
            if not _loaders and _saved[0] is not None:
                sys.setswitchinterval(_saved[0])
                _saved[0] = None


_switch_lock = threading.Lock()
_saved: list[float | None] = [None]  # the interval before the first load still running


@dataclass
class DiskWhere(Where):
    """A `Where` whose store is a DiskView (hover and inlay read only what Where offers)."""

    view: Any = None

    @property
    def store(self) -> Any:
        return self.view

    def governing(self) -> str | None:
        if self.kind == "article":
            return self.address
        if self.kind != "asset" or not self.address:
            return None
        governing: str | None = self.view.governing(self.address)
        return governing


def journal_names(where: Where, address: str) -> list[str]:
    """Journal entries naming `address`, from the view when the store is not loaded yet."""
    if isinstance(where, DiskWhere):
        names: list[str] = where.view.journal_names(address)
        return names
    return where.folder.journal_names(address)


def journal_read(where: Where) -> bool:
    """Whether `journal_names` reads the journal for this place (not a long one early)."""
    return not isinstance(where, DiskWhere) or where.view.store.journal_count() <= JOURNAL_MAX


def article_uri(where: Where, address: str) -> str:
    if isinstance(where, DiskWhere):
        from pygls.uris import from_fs_path

        return from_fs_path(f"{where.view.articles_dir}{os.sep}{address}.md") or ""
    return where.folder.article_uri(address)
