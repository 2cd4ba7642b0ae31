"""Per-request freshness: a few `stat` calls so a hover never shows an article older than disk.

The watcher (client notifications or our poll) catches every change within its period; this
check closes the gap for the one article a request is about, for microseconds.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from canon_ls.core.address import ancestors

from ..state import CanonLanguageServer, Folder
from . import sync

log = logging.getLogger(__name__)


def check_article(ls: CanonLanguageServer, folder: Folder, address: str) -> None:
    """Re-read `address`'s article (and any nearer one that appeared) if disk moved on."""
    store = folder.store
    if store is None:
        return
    changed: set[str] = set()
    try:
        for candidate in ancestors(address):
            path = folder.article_path(candidate)
            article = store.article(candidate)
            try:
                st = os.stat(path)
            except OSError:
                if article is not None:
                    changed |= store.reload_file(Path(path))
                continue
            if article is None or (article.mtime_ns, article.size) != (st.st_mtime_ns, st.st_size):
                changed |= store.reload_file(Path(path))
            if store.article(candidate) is not None:
                break
    except Exception:  # a freshness probe must never fail the request it serves
        log.exception("freshness check failed for %s", address)
        return
    if changed:
        sync.store_changed(ls, folder, changed)
