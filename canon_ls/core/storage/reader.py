"""The store's read side, declared once: what the index (core/storage/index.py), and so every Store,
answers, and what `DiskReader` answers alike from the article files without loading anything (the
hooks' resolver; DiskView before a server's store has loaded). A new read is added here first."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from canon_ls.core import reach
from canon_ls.core.storage import fsio
from canon_ls.core.storage.address import StorePaths, ancestors, argument, normalise, split_mount
from canon_ls.core.storage.layout import ARTICLES_DIR, JOURNAL_DIR, mount_articles

if TYPE_CHECKING:
    from canon_ls.core.storage.article import Article, BodySource
    from canon_ls.core.storage.journal import JournalEntry

MAX_BYTES = 4 * 1024 * 1024  # larger article files are read truncated, with a problem


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

    def rules_for(self, relpath: str) -> list[str]:
        """The articles that apply to a project file beyond their address (core/reach.py)."""
        ...

    def journal_names(self, address: str) -> list[str]:
        """The journal entries naming `address`, newest first."""
        ...


class DiskReader(Reader):
    """The reads answered from a store's files (mounts too), each article read once: a reader
    lives for one request or hook call. `has` and `governing` stat, the parser loads on a read."""

    bodies: BodySource | None = None  # where a lean article reads its body; None: parsed whole
    rules_cache: Path | None = None  # where `rules_for` keeps the store's rules between processes

    def __init__(self, project: Path, root: Path, mounts: Mapping[str, Path]) -> None:
        self.project, self.mounts = project, mounts
        self.articles_dir, self.journal_dir = root / ARTICLES_DIR, root / JOURNAL_DIR
        dirs = {"": self.articles_dir, **{n: mount_articles(d) for n, d in mounts.items()}}
        self._paths = {name: StorePaths(d) for name, d in dirs.items()}
        self._inside = {name: os.path.realpath(d) for name, d in dirs.items()}
        self._read: dict[str, Article | None] = {}
        self._rules: dict[str, reach.Reach] | None = None  # read on the first question

    def file(self, address: str) -> Path:
        """An address's article file, lexically (OutsideStore for one not normalised)."""
        name, rest = split_mount(address, self.mounts)
        return self._paths[name].checked(rest, resolve=False)

    def address_of(self, path_or_address: str, *, as_path: bool = False) -> str:
        if as_path:
            return normalise(path_or_address, self.project, self.mounts)
        return argument(path_or_address, self.has, self.project, self.mounts)

    def has(self, address: str) -> bool:
        try:
            return os.path.isfile(self.file(address))
        except ValueError:
            return False

    def governing(self, address: str) -> str | None:
        name, rest = split_mount(address, self.mounts)
        prefix = f"{name}:" if name else ""
        return next((prefix + a for a in ancestors(rest) if self.has(prefix + a)), None)

    def rules_for(self, relpath: str) -> list[str]:
        if self._rules is None:
            self._rules = reach.on_disk(self.articles_dir, self.rules_cache)
        return reach.matching(self._rules, relpath)

    def article(self, address: str) -> Article | None:
        if address not in self._read:
            self._read[address] = self._parse(address)
        return self._read[address]

    def _parse(self, address: str) -> Article | None:
        from canon_ls.core.storage import article as art  # a hook surfacing nothing never needs it

        try:
            path = self.file(address)
            st = os.stat(path)
            inside = self._inside[split_mount(address, self.mounts)[0]]
            data, _ = fsio.read_regular(path, MAX_BYTES, st.st_size, inside=inside)
        except (OSError, ValueError):
            return None  # absent, not a regular file, or outside the store: no article
        return art.parse(data, address, st.st_mtime_ns, st.st_size, self.bodies)

    def journal_names(self, address: str) -> list[str]:
        from canon_ls.core.storage.journal import newest_first

        entries = self.journal_entries()
        return [e.name for e in newest_first(e for e in entries if address in e.subject)]

    def journal_entries(self) -> list[JournalEntry]:
        """Every journal entry's heading (no bodies)."""
        from canon_ls.core.storage.journal import entry_of

        entries = []
        with contextlib.suppress(OSError), os.scandir(self.journal_dir) as it:
            inside = os.path.realpath(self.journal_dir)
            for entry in it:
                if not entry.name.endswith(".md") or not entry.is_file(follow_symlinks=False):
                    continue
                with contextlib.suppress(OSError, ValueError):
                    st = entry.stat(follow_symlinks=False)
                    data, _ = fsio.read_regular(entry.path, MAX_BYTES, st.st_size, inside=inside)
                    at = Path(entry.path)
                    entries.append(entry_of(entry.name, at, data, st.st_mtime_ns, st.st_size)[0])
        return entries
