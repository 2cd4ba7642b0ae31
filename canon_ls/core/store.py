"""The store (SPEC §2, §4, §6): an index (core/index.py) it holds, plus every write to `.canon/`.

Nothing is created on disk until the first write or journal entry. Every write goes through
core/fsio.py: atomic replacement (or a new journal file linked whole into place), containment
checked on what was opened, and the store lock that serialises each write's read-modify-write
across processes (SPEC §12). A write updates the index in place under the index's lock,
through the index's small write-side interface (`written`, `take_mount`, `journal_changed`).
"""

from __future__ import annotations

import contextlib
import operator
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Concatenate, Generic, ParamSpec, TypeVar

from canon_ls.core import article as art
from canon_ls.core import clock, freshness, fsio, layout, merge
from canon_ls.core import journal as jrn
from canon_ls.core import schema as sch
from canon_ls.core.address import OutsideStore, contained
from canon_ls.core.article import Article
from canon_ls.core.index import MAX_BYTES, StoreIndex
from canon_ls.core.journal import JournalEntry, sanitise_slug, slug_from_body
from canon_ls.core.links import rewrite_links
from canon_ls.core.merge import BadInput, WriteOutcome

__all__ = [
    "MAX_BYTES",
    "Article",
    "BadInput",
    "JournalEntry",
    "Store",
    "WriteOutcome",
    "iter_addresses",
    "sanitise_slug",
]

_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
_SURROGATES = re.compile("[\ud800-\udfff]")


def _valid_text(text: str | None) -> str | None:
    """Lone surrogates (possible in JSON input) cannot be stored as UTF-8: replace them."""
    if text is None or text.isascii():
        return text
    return _SURROGATES.sub("\ufffd", text)


P = ParamSpec("P")
R = TypeVar("R")


class _Read(Generic[P, R]):
    """One of the index's reads offered as the Store's own: bound on first use and kept on
    the instance, so a hot read (`has`, `article`) costs no extra call."""

    def __init__(self, method: Callable[Concatenate[StoreIndex, P], R]) -> None:
        self.name, self.__doc__ = method.__name__, method.__doc__

    def __get__(self, store: Store | None, owner: type) -> Callable[P, R]:
        if store is None:
            return getattr(StoreIndex, self.name)
        bound: Callable[P, R] = getattr(store.index, self.name)
        store.__dict__[self.name] = bound
        return bound


class Store:
    """One store: the project's `.canon/` plus its mounts, an index of them (`index`), and
    its writes. The index's reads are the store's own (below); the index never writes."""

    def __init__(
        self,
        project: Path,
        root: str | Path | None = None,
        mounts: Sequence[str | Path] = (),
        *,
        index: StoreIndex | None = None,
    ) -> None:
        self.index = StoreIndex(project, root, mounts) if index is None else index
        ix = self.index
        self.project, self.root, self.mounts, self.paths = ix.project, ix.root, ix.mounts, ix.paths
        self.articles_dir, self.journal_dir = ix.articles_dir, ix.journal_dir
        self.schema_file, self.bodies, self.anchor = ix.schema_file, ix.bodies, ix.anchor
        self.options: layout.Options | None = None  # §13, set by project.open_store
        # each mount's own store over the index's own index of it (a mount can be written to)
        self._mounts = {name: Store(sub.project, index=sub) for name, sub in ix.mounted.items()}

    exists = _Read(StoreIndex.exists)
    layout_problem = _Read(StoreIndex.layout_problem)
    refresh = _Read(StoreIndex.refresh)
    revalidate = _Read(StoreIndex.revalidate)
    revalidate_governing = _Read(StoreIndex.revalidate_governing)
    reload_file = _Read(StoreIndex.reload_file)
    load_steps = _Read(StoreIndex.load_steps)
    held = _Read(StoreIndex.held)
    cache_usable = _Read(StoreIndex.cache_usable)
    addresses = _Read(StoreIndex.addresses)
    articles = _Read(StoreIndex.articles)
    article = _Read(StoreIndex.article)
    has = _Read(StoreIndex.has)
    governing = _Read(StoreIndex.governing)
    address_of = _Read(StoreIndex.address_of)
    rules_for = _Read(StoreIndex.rules_for)
    link_target = _Read(StoreIndex.link_target)
    place = _Read(StoreIndex.place)
    path_of = _Read(StoreIndex.path_of)
    article_file = _Read(StoreIndex.article_file)
    backlinks = _Read(StoreIndex.backlinks)
    build_backlinks = _Read(StoreIndex.build_backlinks)
    schema = _Read(StoreIndex.schema)
    schema_for = _Read(StoreIndex.schema_for)
    is_orphan = _Read(StoreIndex.is_orphan)
    journal_entries = _Read(StoreIndex.journal_entries)
    journal_steps = _Read(StoreIndex.journal_steps)
    journal_count = _Read(StoreIndex.journal_count)
    journal_names = _Read(StoreIndex.journal_names)
    journal_body = _Read(StoreIndex.journal_body)
    search_articles = _Read(StoreIndex.search_articles)
    search_journal = _Read(StoreIndex.search_journal)
    # whether the articles have been read (the store loads on first use, or in steps)
    loaded = property(operator.attrgetter("index.loaded"))  # no call of its own (hot: reads)

    @contextlib.contextmanager
    def _locked_root(self, create: bool) -> Iterator[int]:
        """The store root opened (created when asked) through fsio.open_dir and held under
        the store lock for one read-modify-write (SPEC §12); yields its descriptor."""
        fd = self._open_root(create)
        try:
            with fsio.locked(fd):
                yield fd
        finally:
            os.close(fd)

    def _open_root(self, create: bool) -> int:
        self.index.check_layout()
        if create and self.anchor == self.root:
            self.root.mkdir(parents=True, exist_ok=True)  # a configured root outside the project
        shown = self.index.shown(self.root)
        return fsio.open_dir(self.root, self.anchor, create=create, what=shown)

    def _open_within(self, directory: Path, base: Path, create: bool) -> int:
        """A descriptor of `directory`, which must lie in `base` (articles/ or journal/),
        opened so that what was checked is what is used (fsio.open_dir)."""
        inside = os.path.realpath(base)
        if not fsio.within(inside, os.path.realpath(self.anchor)):
            raise OutsideStore(self.layout_problem() or f"{base} leads outside the project")
        return fsio.open_dir(
            directory, self.anchor, create=create, inside=inside, what=self.index.shown(directory)
        )

    def _create_store(self, root_fd: int, articles: bool) -> None:
        """SPEC §7: the store is created when its articles/ directory first appears (first
        write, or a first journal entry on a missing store); schema.json is written then and
        only then, never overwriting one. A deleted schema.json stays deleted."""
        if not articles:
            return
        try:
            os.mkdir(layout.ARTICLES_DIR, 0o777, dir_fd=root_fd)
        except FileExistsError:
            return
        with contextlib.suppress(FileExistsError):  # never replaces one (fsio's one writer)
            fsio.link_new_in(root_fd, iter((layout.SCHEMA_FILE,)), sch.default_text().encode())

    def create(self) -> list[Path]:
        """`canon init` (SPEC §11.1, §7): articles/ and journal/, and schema.json with the
        defaults when articles/ first appears (a store that deleted its schema.json keeps it
        deleted), through the same contained opens as a write (§12). Returns what it created
        (articles/, journal/, schema.json order); nothing when the store is complete."""
        before = {p: os.path.lexists(p) for p in (self.articles_dir, self.schema_file)}
        journal_before = os.path.lexists(self.journal_dir)
        with self.index.lock:
            with self._locked_root(create=True) as root_fd:
                self._create_store(root_fd, articles=not before[self.articles_dir])
            os.close(self._open_within(self.journal_dir, self.journal_dir, create=True))
        made = [p for p, existed in before.items() if not existed and os.path.lexists(p)]
        if not journal_before:
            made.append(self.journal_dir)
        order = (self.articles_dir, self.journal_dir, self.schema_file)
        return sorted(made, key=order.index)

    def write(
        self,
        path: str,
        capsule: str | None = None,
        body: str | None = None,
        scope: str | None = None,
    ) -> WriteOutcome:
        """§6 write: create or update atomically; refused only by a `required` schema rule."""
        address = self.address_of(path)
        if not address:
            raise BadInput(f"{path!r} names the project root, which has no article; give a path.")
        if scope not in (None, "", "rule", "asset"):
            raise BadInput(f'scope must be "rule" or "asset", not {scope!r}.')
        name, rest = self.paths.split(address)
        with self.index.lock:
            self.index.load()
            if name:
                outcome = self._mounts[name].write(rest, capsule, body, scope)
                outcome.address = address
                self.index.take_mount(name, {rest})
                return outcome
            return self._write_own(address, capsule, body, scope or None)

    def _write_own(
        self, address: str, capsule: str | None, body: str | None, scope: str | None
    ) -> WriteOutcome:
        file = self.paths.checked(address)
        capsule = _valid_text(capsule)
        body = _valid_text(body)
        capsule_given = bool(capsule and capsule.strip())
        body_given = bool(body and body.strip())
        if not capsule_given and not body_given and scope != "rule" and not self.exists():
            raise BadInput(f"Nothing to write for {address}: give a capsule, a body, or both.")
        with self._locked_root(create=True) as root_fd:
            # The read-modify-write runs under the store lock and starts from the file on
            # disk, never from the index: another process may have written it a moment ago.
            parent_fd = self._parent_fd(file, create=False)
            try:
                prev_data = self._read_article(file, parent_fd, address, body_given)
                outcome, data, mode = merge.merge(
                    address,
                    prev_data,
                    merge.Request(capsule, body, scope, capsule_given, body_given),
                    self.schema(),
                    exists=self.has,
                    orphan=self.index.would_orphan,
                    governs=self.index.maps if self.options and self.options.lane else None,
                )
                if data is None:
                    return outcome
                if parent_fd is None:
                    self._create_store(root_fd, articles=True)
                    parent_fd = self._parent_fd(file, create=True)
                    assert parent_fd is not None
                fsio.replace_in(parent_fd, file.name, data, mode)
                st = os.stat(file.name, dir_fd=parent_fd, follow_symlinks=False)
            finally:
                if parent_fd is not None:
                    os.close(parent_fd)
        written = self.index.written(address, data, freshness.key(st))
        for problem in written.problems:
            outcome.lines.append(f"The front matter is still wrong ({problem}); fix it by hand.")
        return outcome

    def _parent_fd(self, file: Path, create: bool) -> int | None:
        """The article's directory, opened inside articles/; None when it does not exist."""
        try:
            return self._open_within(file.parent, self.articles_dir, create)
        except FileNotFoundError:
            return None

    def _read_article(
        self, file: Path, parent_fd: int | None, address: str, body_given: bool
    ) -> tuple[bytes, bool, int] | None:
        """(bytes, truncated, mode) of the article file, read through its opened directory
        and checked to lie in articles/; None when there is none."""
        if parent_fd is None:
            return None
        try:
            data, truncated = fsio.read_regular(
                file.name, MAX_BYTES, dir_fd=parent_fd, inside=os.path.realpath(self.articles_dir)
            )
            mode = os.stat(file.name, dir_fd=parent_fd).st_mode & 0o777
        except FileNotFoundError:
            return None
        except fsio.NotRegular:
            raise BadInput(
                f"The article file for {address} is not a regular file (a FIFO, device or "
                "directory); remove or rename it by hand."
            ) from None
        return data, truncated, mode

    def set_reviewed(self, address: str, date: str | None = None) -> None:
        """Write `reviewed: <date>` (§9) without touching `updated` or anything else."""
        date = date or clock.today()
        if not _ISO.fullmatch(date):
            raise BadInput(f"reviewed must be a date YYYY-MM-DD, not {date!r}.")
        self.edit(address, lambda text: art.set_meta(text, "reviewed", date), "mark reviewed")

    def edit(self, address: str, change: Callable[[str], str], what: str = "edit") -> bool:
        """Rewrite an article's text by `change` under the store lock, `updated` untouched
        (`reviewed`, `canon check --fix`); False when the text stays as it was."""
        with self.index.lock:
            name, rest = self.paths.split(address)
            if name:
                changed = self._mounts[name].edit(rest, change, what)
                self.index.take_mount(name, {rest})
                return changed
            file = self.path_of(address)
            if not self.exists():
                raise BadInput(f"There is no article {address} to {what}.")
            with self._locked_root(create=False):
                parent_fd = self._parent_fd(file, create=False)
                try:
                    found = self._read_article(file, parent_fd, address, False)
                    if found is None or parent_fd is None:
                        raise BadInput(f"There is no article {address} to {what}.")
                    data, truncated, mode = found
                    try:
                        text = data.decode("utf-8")
                    except UnicodeDecodeError:
                        raise BadInput(
                            f"The article file for {address} is not UTF-8 text; fix it by hand."
                        ) from None
                    if truncated:
                        raise BadInput(f"The article file for {address} is too large to edit.")
                    edited = change(text)
                    if edited == text:
                        return False  # the file keeps its bytes and mtime
                    fsio.replace_in(parent_fd, file.name, edited.encode("utf-8"), mode)
                finally:
                    if parent_fd is not None:
                        os.close(parent_fd)
            self.reload_file(file)
            return True

    def move(self, old: str, new: str) -> list[str]:
        """`canon mv`: move the article at `old` to `new` (paths or addresses) and point the
        inbound [[old]] links at it, through the rule the editor's rename uses
        (links.rewrite_links). Returns the articles whose links changed; BadInput says why
        nothing moved. Articles under `old/` stay where they are."""
        a, b = self.address_of(old), self.address_of(new)
        if not a or not b:
            raise BadInput("The project root has no article; give two file paths or addresses.")
        if self.paths.split(a)[0] or self.paths.split(b)[0]:
            raise BadInput("canon mv moves this project's articles; move a mount's in its own.")
        with self.index.lock:
            self.index.load()
            if not self.has(a) or a == b:
                raise BadInput(f"There is no article {a} to move." if a != b else "Same address.")
            if self.has(b) or os.path.lexists(self.path_of(b)):
                raise BadInput(f"{b} has an article already; merge the two by hand.")
            moves = {a: b}
            sources = [s for s in self.backlinks(a) if ":" not in s and s != a]
            with self._locked_root(create=False):
                data, mode = self._rewritten(a, moves)
                with self._in_dir(b, create=True) as fd:  # never replaces a file
                    fsio.link_new_in(fd, iter((self.path_of(b).name,)), data, mode)
                with self._in_dir(a) as fd:
                    os.unlink(self.path_of(a).name, dir_fd=fd)
                for source in sources:
                    data, mode = self._rewritten(source, moves)
                    with self._in_dir(source) as fd:
                        fsio.replace_in(fd, self.path_of(source).name, data, mode)
            self.refresh()
        return sources

    @contextlib.contextmanager
    def _in_dir(self, address: str, create: bool = False) -> Iterator[int]:
        """The opened directory of an article's file (inside articles/), closed after."""
        fd = self._parent_fd(self.path_of(address), create)
        if fd is None:
            raise BadInput(f"The folder of {address} is gone; nothing was moved.")
        try:
            yield fd
        finally:
            os.close(fd)

    def _rewritten(self, address: str, moves: dict[str, str]) -> tuple[bytes, int]:
        """An article's bytes with its links to `moves` pointed at their new addresses."""
        file = self.path_of(address)
        with self._in_dir(address) as fd:
            found = self._read_article(file, fd, address, False)
        if found is None or found[1]:
            raise BadInput(f"The article file for {address} cannot be read whole; nothing moved.")
        try:
            text = found[0].decode("utf-8")
        except UnicodeDecodeError:
            raise BadInput(f"The article file for {address} is not UTF-8 text.") from None
        return rewrite_links(text, moves, named=self.link_target).encode("utf-8"), found[2]

    def journal(
        self,
        body: str,
        subject: list[str] | str | None = None,
        slug: str | None = None,
        source: str = "cli",
        session: str | None = None,
    ) -> Path:
        """§6 journal: one new file, whole or not at all (temp file linked into place, never
        replacing one), -2, -3… on collision; never rewritten. A bare string subject is a
        one-element array."""
        if not isinstance(body, str) or not body.strip():
            raise BadInput(
                "The journal entry is empty; say what happened (decisions, findings, changes)."
            )
        body = _valid_text(body) or body
        pasted = art.without_pasted(body)  # the tool's reply says so; other callers strip too
        body = pasted[0] if pasted is not None and pasted[0].strip() else body
        date = clock.today()
        stem = sanitise_slug(slug) if isinstance(slug, str) and slug else ""
        stem = stem or slug_from_body(body)
        text = self._journal_header(date, subject, source, session)
        text += body.strip() + "\n"  # as pi-canon stores it: no blank lines around the text
        data = text.encode("utf-8", errors="replace")
        names = jrn.names(date, stem)
        with self.index.lock:
            created = not self.exists()
            root_fd = self._open_root(create=True)
            try:
                self._create_store(root_fd, articles=created)
            finally:
                os.close(root_fd)
            journal_fd = self._open_within(self.journal_dir, self.journal_dir, create=True)
            try:
                name = fsio.link_new_in(journal_fd, names, data)
            except FileExistsError:
                raise BadInput(
                    "Too many journal entries with this name today; give a different slug."
                ) from None
            finally:
                os.close(journal_fd)
            self.index.journal_changed()
            return self.journal_dir / name

    def journal_draft(
        self, subject: list[str] | str | None = None, slug: str | None = None, source: str = "lsp"
    ) -> tuple[Path, str]:
        """The file an editor would create for a new entry it lets a person write: the next free
        name under journal/ and the entry's front matter (the same header `journal` writes).
        Nothing is written here; the editor creates the file through an undoable edit."""
        self.index.check_layout()
        date = clock.today()
        stem = (sanitise_slug(slug) if isinstance(slug, str) and slug else "") or "entry"
        for name in jrn.names(date, stem):
            path = contained(self.journal_dir / name, self.root)
            if not os.path.lexists(path):
                return path, self._journal_header(date, subject, source, None) + "\n"
        raise BadInput("Too many journal entries with this name today; give a different slug.")

    def _journal_header(self, date: str, subject: object, source: str, session: str | None) -> str:
        """Front matter of a journal entry (§6), subjects normalised against this store."""
        return jrn.header(date, subject, source, session, self.address_of)


def iter_addresses(store: Store, prefix: str) -> Iterable[str]:
    """Addresses equal to `prefix` or under it (segment-aware), sorted."""
    for address in store.addresses():
        if not prefix or address == prefix or address.startswith(prefix + "/"):
            yield address
