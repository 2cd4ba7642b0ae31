"""Per-request freshness: a few `stat` calls so a hover never shows an article older than disk.

The watcher (client notifications or our poll) catches every change within its period; this
check closes the gap for the one article a request is about, for microseconds.
"""

from __future__ import annotations

import logging

from canon_ls.core.address import ancestors

from ..state import CanonLanguageServer, Folder
from . import sync

log = logging.getLogger(__name__)


def check_article(ls: CanonLanguageServer, folder: Folder, address: str) -> None:
    """Re-read `address`'s article (and any nearer one that appeared) if disk moved on:
    core's one freshness rule (`Store.revalidate`), a stat per ancestor when nothing did."""
    store = folder.store
    if store is None:
        return
    changed: set[str] = set()
    try:
        for candidate in ancestors(address):
            changed |= store.revalidate([folder.article_path(candidate)])
            if store.article(candidate) is not None:
                break
    except Exception:  # a freshness probe must never fail the request it serves
        log.exception("freshness check failed for %s", address)
        return
    if changed:
        sync.store_changed(ls, folder, changed)
