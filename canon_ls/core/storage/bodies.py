"""A store's article bodies, read from their files on demand (SPEC §4: files are the truth)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from canon_ls.core.storage import article as art
from canon_ls.core.storage.address import OutsideStore, StorePaths
from canon_ls.core.storage.freshness import Key, key_of

if TYPE_CHECKING:
    from canon_ls.core.storage.article import Article


class BodyReader:
    """Reads bodies of one store's articles (a mount has its own reader) from articles/."""

    def __init__(
        self,
        paths: StorePaths,
        index: Mapping[str, Article],
        stat: Mapping[str, Key],
        racy: set[str],
        read: Callable[[str, int, str], tuple[bytes, bool]],
        refused: Callable[[], str],
    ) -> None:
        self.paths, self.articles_dir = paths, paths.articles_dir
        self._index, self._stat, self._racy = index, stat, racy
        self._refused = refused  # the store's layout problem (SPEC §12): then nothing is read
        self._read = read  # the index's own capped read: the same bytes it parses
        # set by the index: re-read a file found changed (never blocks; see StoreIndex)
        self.changed: Callable[[str], None] = lambda path: None

    def body_of(self, article: Article) -> str:
        """The body of the article's file as it is now ('' when it is gone or unreadable)."""
        address = article.address
        path = self.paths.file(address)
        if self._refused():  # articles/ now leads outside the project: read nothing there
            self.changed(path)
            return ""
        before = key_of(path)
        try:
            size = before[1] if before else -1
            data, _truncated = self._read(path, size, os.path.realpath(self.articles_dir))
        except (OSError, OutsideStore):
            data = None
        same = (
            before is not None
            and key_of(path) == before
            and self._stat.get(address) == before
            and address not in self._racy
            and self._index.get(address) is article
        )
        if not same:
            self.changed(path)
        return art.body_from(data) if data is not None else ""
