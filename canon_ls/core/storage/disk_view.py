"""A store's answers read straight from its files, before the Store has loaded (SPEC §4, §10)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from canon_ls.core.storage import article as art
from canon_ls.core.storage import fsio
from canon_ls.core.storage import journal as jrn
from canon_ls.core.storage.address import OutsideStore, ancestors
from canon_ls.core.storage.reader import Reader

if TYPE_CHECKING:
    from canon_ls.core.storage.article import Article
    from canon_ls.core.storage.store import Store

JOURNAL_MAX = 2000  # a longer journal is not read for the first hovers (its names come later)


class DiskView(Reader):
    """The few questions resolution and rendering ask a Store, answered from the article
    files (each read once per view: a view lives for one request)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.articles_dir = store.articles_dir
        self.journal_dir = store.journal_dir
        self._inside = os.path.realpath(store.articles_dir)
        self._read: dict[str, Article | None] = {}

    def address_of(self, path_or_address: str, *, as_path: bool = False) -> str:
        return self.store.address_of(path_or_address, as_path=as_path)

    def article(self, address: str) -> Article | None:
        if address not in self._read:
            self._read[address] = self._parse(address)
        return self._read[address]

    def _parse(self, address: str) -> Article | None:
        if not address or ":" in address or ".." in address.split("/"):
            return None
        path = self.store.paths.file(address)
        try:
            st = os.stat(path)
            data, _ = fsio.read_regular(path, _max_bytes(), st.st_size, inside=self._inside)
        except (OSError, OutsideStore):
            return None  # absent, not a regular file, or outside the store: no article
        # lean, as the Store's own: a body is read from the file when asked
        return art.parse(data, address, st.st_mtime_ns, st.st_size, self.store.bodies)

    def has(self, address: str) -> bool:
        return self.article(address) is not None

    def governing(self, address: str) -> str | None:
        for candidate in ancestors(address):
            if self.article(candidate) is not None:
                return candidate
        return None

    def journal_names(self, address: str) -> list[str]:
        """Entries naming `address`, newest first, as `Store.journal_names`; read here (the lock is
        the loader's), and not at all for a long journal: its names show after the load."""
        entries = [e for e in self.journal_entries() if address in e.subject]
        return [e.name for e in jrn.newest_first(entries)]

    def journal_entries(self) -> list[jrn.JournalEntry]:
        """Every journal entry's heading (no bodies); none for a journal over JOURNAL_MAX."""
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
                    entries.append(read)
        return entries


def _max_bytes() -> int:
    from canon_ls.core.storage.store import MAX_BYTES

    return MAX_BYTES
