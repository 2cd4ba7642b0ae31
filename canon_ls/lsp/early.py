"""The first hovers and inlay hints, before the store is loaded (issue 15, SPEC §10 hover).

Loading a store reads every article: about a second at 10k articles and several at 50k, all
on the path to the first hover of a session. The first file a person opens needs one
article, so until the store is loaded hover and inlay hints resolve from the article files
themselves (the nearest `articles/<ancestor>.md` that exists, as SPEC §4 resolves) and the
store loads on a thread meanwhile. The answers are the same: only where they are read from
differs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canon_ls.core import article as art
from canon_ls.core import fsio
from canon_ls.core import journal as jrn
from canon_ls.core.address import OutsideStore, ancestors

from .state import Where

if TYPE_CHECKING:
    from canon_ls.core.article import Article
    from canon_ls.core.store import Store

    from .state import CanonLanguageServer

log = logging.getLogger(__name__)

JOURNAL_MAX = 2000  # a longer journal is not read for the first hovers (its names come later)
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


class DiskView:
    """The few questions resolution and rendering ask a Store, answered from the article
    files (each read once per view: a view lives for one request)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.articles_dir = store.articles_dir
        self.journal_dir = store.journal_dir
        self._inside = os.path.realpath(store.articles_dir)
        self._read: dict[str, Article | None] = {}

    def address_of(self, path_or_address: str) -> str:
        return self.store.address_of(path_or_address)

    def article(self, address: str) -> Article | None:
        if address not in self._read:
            self._read[address] = self._parse(address)
        return self._read[address]

    def _parse(self, address: str) -> Article | None:
        if not address or ":" in address or ".." in address.split("/"):
            return None
        path = f"{self.articles_dir}{os.sep}{address}.md"
        try:
            st = os.stat(path)
            data, _ = fsio.read_regular(path, _max_bytes(), st.st_size, inside=self._inside)
        except (OSError, OutsideStore):
            return None  # absent, not a regular file, or outside the store: no article
        return art.parse(data, address, st.st_mtime_ns, st.st_size)

    def has(self, address: str) -> bool:
        return self.article(address) is not None

    def governing(self, address: str) -> str | None:
        for candidate in ancestors(address):
            if self.article(candidate) is not None:
                return candidate
        return None

    def journal_names(self, address: str) -> list[str]:
        """Entries naming `address`, newest first, as `Store.journal_names` orders them; read
        here (the store's lock is the loading thread's), and not at all for a long journal:
        its names show from the hovers after the load."""
        if self.store.journal_count() > JOURNAL_MAX:
            return []
        entries = []
        with contextlib.suppress(OSError), os.scandir(self.journal_dir) as it:
            inside = os.path.realpath(self.journal_dir)
            for entry in it:
                if not entry.name.endswith(".md") or not entry.is_file(follow_symlinks=False):
                    continue
                with contextlib.suppress(OSError, OutsideStore):
                    st = entry.stat(follow_symlinks=False)
                    data, _ = fsio.read_regular(entry.path, _max_bytes(), st.st_size, inside=inside)
                    read, _body = jrn.entry_of(
                        entry.name, Path(entry.path), data, st.st_mtime_ns, st.st_size
                    )
                    if address in read.subject:
                        entries.append(read)
        return [e.name for e in jrn.newest_first(entries)]

    def article_uri(self, address: str) -> str:
        from pygls.uris import from_fs_path

        return from_fs_path(f"{self.articles_dir}{os.sep}{address}.md") or ""


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


def _max_bytes() -> int:
    from canon_ls.core.store import MAX_BYTES

    return MAX_BYTES


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
        uri: str = where.view.article_uri(address)
        return uri
    return where.folder.article_uri(address)
