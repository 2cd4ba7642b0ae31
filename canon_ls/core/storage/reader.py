"""The store's read side, declared once: what the index (core/storage/index.py), and so every Store,
answers, and what a view reading the article files before the load answers alike
(core/storage/disk_view.py). A new read a request needs from either is added here first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from canon_ls.core.storage.article import Article
    from canon_ls.core.storage.journal import JournalEntry


class Reader(Protocol):
    def address_of(self, path_or_address: str, *, as_path: bool = False) -> str:
        """What an argument names (§3, §8): an existing article's address, else the path's."""
        ...

    def article(self, address: str) -> Article | None: ...

    def has(self, address: str) -> bool: ...

    def governing(self, address: str) -> str | None:
        """§4: the exact article, else the nearest ancestor with one, else None."""
        ...

    def journal_entries(self) -> list[JournalEntry]: ...

    def journal_names(self, address: str) -> list[str]:
        """The journal entries naming `address`, newest first."""
        ...
