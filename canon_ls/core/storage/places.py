"""Where one store's files are and what a path is to it (SPEC §2, §3, §12): its directories,
the check that they stay inside the project, article files, and its schema.json."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

from canon_ls.core.checking import schema as sch
from canon_ls.core.storage import freshness, fsio, layout
from canon_ls.core.storage.address import OutsideStore, StorePaths, normalise, place
from canon_ls.core.storage.freshness import Key
from canon_ls.core.storage.merge import BadInput


def _lstat_key(path: Path) -> tuple[int, int, int] | None:
    """What changes when a directory is replaced, moved or turned into a symlink."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mode)


class StorePlaces:
    """A store's places: the project, `.canon/` (or the configured root), its mounts."""

    def __init__(
        self, project: Path, root: str | Path | None = None, mounts: Sequence[str | Path] = ()
    ) -> None:
        self.project = Path(os.path.abspath(project))
        self.root = layout.store_root(self.project, root)
        self.articles_dir = self.root / layout.ARTICLES_DIR
        self.journal_dir = self.root / layout.JOURNAL_DIR
        self.schema_file = self.root / layout.SCHEMA_FILE
        try:
            self.mounts: dict[str, Path] = layout.mount_dirs(self.project, mounts)
        except layout.OptionError as exc:
            raise BadInput(str(exc)) from None
        self.paths = StorePaths(self.articles_dir, self.mounts)  # address <-> file, mounts
        # each mount its own (a Store for a Store: a mount can be written to)
        self.mounted: Mapping[str, StorePlaces] = {n: type(self)(d) for n, d in self.mounts.items()}
        self._schema: tuple[tuple[int, ...] | None, sch.Schema] | None = None
        self._layout_seen: tuple[tuple, str] | None = None  # (lstat key, problem sentence)

    def exists(self) -> bool:
        """True when the store directory exists (nothing is created by asking)."""
        return self.root.is_dir()

    @property
    def anchor(self) -> Path:
        """The trusted directory the store must stay inside (SPEC §12): the project, or the
        configured root itself when the `root` option places it outside the project."""
        if self.root == self.project or self.project in self.root.parents:
            return self.project
        return self.root

    def layout_problem(self) -> str:
        """One sentence when the store's own directories (.canon, articles/, journal/) lead outside
        the project through a symbolic link, else ''."""
        for places in (self, *self.mounted.values()):
            problem = places._own_layout_problem()
            if problem:
                return problem
        return ""

    def _own_layout_problem(self) -> str:
        dirs = (self.root, self.articles_dir, self.journal_dir)
        key = tuple(_lstat_key(d) for d in dirs)
        if self._layout_seen is not None and self._layout_seen[0] == key:
            return self._layout_seen[1]
        problem = ""
        outside = fsio.leads_outside(dirs if self.anchor != self.root else dirs[1:], self.anchor)
        if outside is not None:
            directory, real = outside
            shown = self.shown(directory)
            where = "the project" if self.anchor == self.project else str(self.anchor)
            problem = (
                f"The store directory {shown} is a symbolic link leading outside {where} "
                f"(to {real}); canon refuses to read or write through it, so replace the "
                "link with a real directory."
            )
        self._layout_seen = (key, problem)
        return problem

    def shown(self, path: Path) -> str:
        """A store path as messages show it: relative to the project when inside it."""
        try:
            return path.relative_to(self.project).as_posix()
        except ValueError:
            return str(path)

    def check_layout(self) -> None:
        """Raise OutsideStore with layout_problem's sentence, if there is one (SPEC §12)."""
        problem = self.layout_problem()
        if problem:
            raise OutsideStore(problem)

    def is_article_file(self, address: str) -> bool:
        """Whether an article file exists at exactly this address, asked of the disk (the
        index may not have seen a file another process wrote a moment ago)."""
        try:
            return os.path.isfile(self.path_of(address))
        except ValueError:
            return False

    def _articles_prefix(self) -> str:
        """'.canon/articles/' when the articles directory lies inside the project, else ''."""
        try:
            rel = self.articles_dir.relative_to(self.project).as_posix()
        except ValueError:
            return ""
        return rel + "/"

    def place(self, path: str | Path) -> tuple[str, str]:
        """What a file is to this store: (kind, address), core's one rule (address.place)."""
        return place(path, self.project, self.root, self.mounts)

    def path_of(self, address: str) -> Path:
        """The article file for an address (it may not exist); OutsideStore if it would escape
        or the store's directories lead outside the project (the sentence says which)."""
        name, rest = self.paths.split(address)
        if name:
            return self.mounted[name].path_of(rest)
        self.check_layout()
        return self.paths.checked(address)

    def article_file(self, address: str) -> str:
        """`path_of` as a string, without its on-disk resolve (~80 µs) for indexed-shaped
        project addresses: reads stat the file on every request."""
        if ":" not in address and address and normalise(address) == address:
            return self.paths.file(address)
        return str(self.path_of(address))

    def schema(self) -> sch.Schema:
        """schema.json (defaults when absent), kept while its stat key holds and is settled
        (core's racy rule: an edit in the same clock tick is read again)."""
        try:
            st = os.stat(self.schema_file)
            key: tuple[int, ...] | None = (*freshness.key(st), st.st_mode)
        except OSError:
            key = None
        if self._schema is None or self._schema[0] != key:
            now = time.time_ns()
            if self._own_layout_problem():  # §12: nothing is read through such a store
                schema = sch.Schema()
            else:
                schema = sch.load(self.schema_file, os.path.realpath(self.root))
            settled = key is None or freshness.settled(cast(Key, key[:4]), now)
            self._schema = (key if settled else (), schema)
        return self._schema[1]

    def schema_for(self, address: str) -> sch.Schema:
        """The schema that judges one article: a mount's own `.canon/schema.json` for its
        articles (SPEC §8: each mount has its own `.canon/`), else the project's."""
        name, _rest = self.paths.split(address)
        return self.mounted[name].schema() if name else self.schema()

    def maps(self, address: str) -> bool:
        """Some file or directory of the project has this address (§9 asset set, cheaply)."""
        up, _, stem = address.rpartition("/")
        directory = self.project / up if up else self.project
        try:
            names = os.listdir(directory)
        except OSError:
            return False
        for name in names:
            if name == stem:
                return True
            dot = name.rfind(".")
            if dot > 0 and name[:dot] == stem:
                return True
        return False
