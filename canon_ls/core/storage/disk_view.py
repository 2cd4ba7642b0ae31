"""A store's answers read straight from its files, before the Store has loaded (SPEC §4, §10)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from canon_ls.core.storage.reader import DiskReader

if TYPE_CHECKING:
    from canon_ls.core.storage.article import Article
    from canon_ls.core.storage.journal import JournalEntry
    from canon_ls.core.storage.store import Store

JOURNAL_MAX = 2000  # a longer journal is not read for the first hovers (its names come later)


class DiskView(DiskReader):
    """The questions resolution and rendering ask a Store, answered from its own article files
    (lean articles, as the Store's; its mounts answer after the load)."""

    def __init__(self, store: Store) -> None:
        super().__init__(store.project, store.root, store.mounts)
        self.store = store
        self.bodies = store.bodies

    def address_of(self, path_or_address: str, *, as_path: bool = False) -> str:
        return self.store.address_of(path_or_address, as_path=as_path)

    def has(self, address: str) -> bool:
        return self.article(address) is not None

    def rules_for(self, relpath: str) -> list[str]:
        return []  # the rules that apply show once the store has loaded

    def _parse(self, address: str) -> Article | None:
        return None if ":" in address else super()._parse(address)

    def journal_entries(self) -> list[JournalEntry]:
        """None for a journal over JOURNAL_MAX (read here, the lock is the loader's; a long
        journal's names show after the load)."""
        return [] if self.store.journal_count() > JOURNAL_MAX else super().journal_entries()
