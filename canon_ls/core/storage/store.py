"""The store (SPEC §2, §4, §6): an index (core/storage/index.py) it holds, plus every write to
`.canon/`."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from canon_ls.core.checking import schema as sch
from canon_ls.core.retrieval.links import rewrite_links
from canon_ls.core.storage import article as art
from canon_ls.core.storage import clock, freshness, fsio, layout, merge
from canon_ls.core.storage import journal as jrn
from canon_ls.core.storage.address import SURROGATE, OutsideStore, contained
from canon_ls.core.storage.article import Article
from canon_ls.core.storage.front_write import set_meta
from canon_ls.core.storage.index import MAX_BYTES, StoreIndex
from canon_ls.core.storage.journal import JournalEntry, sanitise_slug, slug_from_body
from canon_ls.core.storage.merge import BadInput, WriteOutcome

__all__ = ["Article", "BadInput", "JournalEntry", "Store", "iter_addresses", "sanitise_slug"]

MOVING = "moving.json"  # under the store root while a `canon mv` is under way: [from, to]


def _valid_text(text: str | None) -> str | None:
    """Lone surrogates (possible in JSON input) cannot be stored as UTF-8: replace them."""
    return text if text is None or text.isascii() else SURROGATE.sub("\ufffd", text)


class Store(StoreIndex):
    """One store: the index of the project's `.canon/` and its mounts (its reads, declared in
    core/storage/reader.py), plus every write. Each mount is a Store of its own (it can be written
    to)."""

    mounted: Mapping[str, Store]

    def __init__(
        self, project: Path, root: str | Path | None = None, mounts: Sequence[str | Path] = ()
    ) -> None:
        super().__init__(project, root, mounts)
        self.options: layout.Options | None = None  # §13, set by project.open_store
        self.newest_below: Callable[[str], int | None] | None = None  # canon mcp's TreeTimes
        self._held: int | None = None  # the store root's descriptor while `locked` holds it

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store lock across several reads and writes (an import's check of the
        journal, read, write and entry): no other process writes in between (SPEC §12)."""
        with self.lock, self._locked_root(create=True):
            yield

    @contextlib.contextmanager
    def _locked_root(self, create: bool) -> Iterator[int]:
        """The store root opened (created when asked) through fsio.open_dir and held under the store
        lock (SPEC §12); yields its fd. Callers hold index.lock, so `_held` is this thread's."""
        if self._held is not None:
            yield self._held
            return
        fd = self._open_root(create)
        try:
            with fsio.locked(fd):
                self._held = fd
                try:
                    yield fd
                finally:
                    self._held = None
        finally:
            os.close(fd)

    def _open_root(self, create: bool) -> int:
        self.check_layout()
        if create and self.anchor == self.root:
            self.root.mkdir(parents=True, exist_ok=True)  # a configured root outside the project
        return fsio.open_dir(self.root, self.anchor, create=create, what=self.shown(self.root))

    def _open_within(self, directory: Path, base: Path, create: bool) -> int:
        """A descriptor of `directory`, which must lie in `base` (articles/ or journal/),
        opened so that what was checked is what is used (fsio.open_dir)."""
        inside = os.path.realpath(base)
        if not fsio.within(inside, os.path.realpath(self.anchor)):
            raise OutsideStore(self.layout_problem() or f"{base} leads outside the project")
        return fsio.open_dir(
            directory, self.anchor, create=create, inside=inside, what=self.shown(directory)
        )

    def _create_store(self, root_fd: int, articles: bool) -> None:
        """SPEC §7: the store is created when articles/ first appears (a write or an entry);
        schema.json is written then only, never overwriting; a deleted one stays deleted."""
        if not articles:
            return
        try:
            os.mkdir(layout.ARTICLES_DIR, 0o777, dir_fd=root_fd)
        except FileExistsError:
            return
        with contextlib.suppress(FileExistsError):  # never replaces one (fsio's one writer)
            fsio.link_new_in(root_fd, iter((layout.SCHEMA_FILE,)), sch.default_text().encode())

    def create(self) -> list[Path]:
        """`canon init` (SPEC §11.1, §7): articles/, journal/ and (with articles/) schema.json via
        contained opens (§12); returns what it created, in that order."""
        before = {p: os.path.lexists(p) for p in (self.articles_dir, self.schema_file)}
        journal_before = os.path.lexists(self.journal_dir)
        with self.lock:
            with self._locked_root(create=True) as root_fd:
                self._create_store(root_fd, articles=not before[self.articles_dir])
            os.close(self._open_within(self.journal_dir, self.journal_dir, create=True))
        made = [p for p, existed in before.items() if not existed and os.path.lexists(p)]
        if not journal_before:
            made.append(self.journal_dir)
        return sorted(made, key=(self.articles_dir, self.journal_dir, self.schema_file).index)

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
        with self.lock:  # the store is not loaded for it: the file is the truth
            if name:
                self.load()
                outcome = self.mounted[name].write(rest, capsule, body, scope)
                outcome.address = address
                self.take_mount(name, {rest})
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
                    exists=self.has if self.loaded else self.is_article_file,  # no load for it
                    orphan=self.would_orphan,
                    governs=self.maps if self.options and self.options.lane else None,
                    maps=self.maps,
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
        written = self.written(address, data, freshness.key(st))
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
        if not clock.DATE.fullmatch(date):
            raise BadInput(f"reviewed must be a date YYYY-MM-DD, not {date!r}.")
        self.edit(address, lambda text: set_meta(text, "reviewed", date), "mark reviewed")

    def edit(self, address: str, change: Callable[[str], str], what: str = "edit") -> bool:
        """Rewrite an article's text by `change` under the store lock, `updated` untouched
        (`reviewed`, `canon check --fix`); False when the text stays as it was."""
        with self.lock:
            name, rest = self.paths.split(address)
            if name:
                changed = self.mounted[name].edit(rest, change, what)
                self.take_mount(name, {rest})
                return changed
            file = self.path_of(address)
            if not self.exists():
                raise BadInput(f"There is no article {address} to {what}.")
            with self._locked_root(create=False):
                parent_fd = self._parent_fd(file, create=False)
                try:
                    text, mode = self._text(address, parent_fd, what)
                    edited = change(text)
                    if edited == text:
                        return False  # the file keeps its bytes and mtime
                    assert parent_fd is not None  # _text found the file through it
                    fsio.replace_in(parent_fd, file.name, edited.encode("utf-8"), mode)
                finally:
                    if parent_fd is not None:
                        os.close(parent_fd)
            self.reload_file(file)
            return True

    def move(self, old: str, new: str) -> list[str]:
        """`canon mv`: move `old` to `new`, rewriting inbound links (links.rewrite_links); returns
        the changed articles, BadInput says why not; MOVING lets `finish_move` end a cut move."""
        a, b = self.address_of(old), self.address_of(new)
        if not a or not b:
            raise BadInput("The project root has no article; give two file paths or addresses.")
        if self.paths.split(a)[0] or self.paths.split(b)[0]:
            raise BadInput("canon mv moves this project's articles; move a mount's in its own.")
        with self.lock:
            self.load()
            if not self.has(a) or a == b:
                raise BadInput(f"There is no article {a} to move." if a != b else "Same address.")
            if self.has(b) or os.path.lexists(self.path_of(b)):
                raise BadInput(f"{b} has an article already; merge the two by hand.")
            with self._locked_root(create=False) as root_fd:
                sources = self._carry_out(root_fd, a, b, start=True)
            self.refresh()
        return sources

    def pending_move(self) -> tuple[str, str] | None:
        """(from, to) of a move that was cut short (its record is still there), else None."""
        try:
            inside = os.path.realpath(self.root)
            data, _ = fsio.read_regular(self.root / MOVING, 4096, inside=inside)
            a, b = (str(x) for x in json.loads(data))
            self.paths.checked(a), self.paths.checked(b)  # a cloned record cannot lead out
            return a, b
        except FileNotFoundError:
            return None
        except (OSError, OutsideStore, ValueError, TypeError):
            raise BadInput(f"{self.root / MOVING} cannot be read; remove it by hand.") from None

    def finish_move(self) -> tuple[str, str, list[str]] | None:
        """Finish the move a killed `canon mv` left half done, from its record: (from, to,
        the articles whose links changed now); None when no move is pending."""
        if self.pending_move() is None:
            return None
        with self.lock, self._locked_root(create=False) as root_fd:
            pending = self.pending_move()
            if pending is None:
                return None
            self.refresh()
            sources = self._carry_out(root_fd, *pending, start=False)
            self.refresh()
        return *pending, sources

    def _carry_out(self, root_fd: int, a: str, b: str, start: bool) -> list[str]:
        """Move `a` to `b` under the store lock, or finish doing so (each step can be redone):
        every file read and rewritten in memory first, then the record (when starting), `b`
        linked (never replacing), `a` unlinked, the backlinks rewritten, the record dropped."""
        moves = {a: b}
        named = lambda target: a if target == a else self.link_target(target)  # noqa: E731
        carried = self._rewritten(a, moves, named) if self.has(a) else None
        if carried is not None:
            carried = (_retitled(carried[0], a, b), carried[1])
        sources = [s for s in self.backlinks(a) if ":" not in s and s not in (a, b)]
        rewrites = [(s, *self._rewritten(s, moves, named)) for s in sources]
        if start:
            fsio.link_new_in(root_fd, iter((MOVING,)), json.dumps([a, b]).encode())
        if carried is not None:
            if not self.has(b):
                with self._in_dir(b, create=True) as fd:
                    fsio.link_new_in(fd, iter((self.path_of(b).name,)), *carried)
            with self._in_dir(a) as fd:
                os.unlink(self.path_of(a).name, dir_fd=fd)
        for source, data, mode in rewrites:
            with self._in_dir(source) as fd:
                fsio.replace_in(fd, self.path_of(source).name, data, mode)
        os.unlink(MOVING, dir_fd=root_fd)
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

    def _rewritten(
        self, address: str, moves: dict[str, str], named: Callable[[str], str]
    ) -> tuple[bytes, int]:
        """An article's bytes with its links to `moves` pointed at their new addresses."""
        with self._in_dir(address) as fd:
            text, mode = self._text(address, fd, "move")
        return rewrite_links(text, moves, named=named).encode("utf-8"), mode

    def _text(self, address: str, fd: int | None, what: str) -> tuple[str, int]:
        """An article's whole text and mode, read through its opened directory; BadInput says
        why there is none to `what` (missing, too large, not UTF-8) before anything changed."""
        found = self._read_article(self.path_of(address), fd, address, False)
        if found is None:
            raise BadInput(f"There is no article {address} to {what}.")
        if found[1]:
            raise BadInput(f"The article file for {address} is too large to {what}.")
        try:
            return found[0].decode("utf-8"), found[2]
        except UnicodeDecodeError:
            raise BadInput(
                f"The article file for {address} is not UTF-8 text; fix it by hand (nothing "
                "was changed)."
            ) from None

    def journal(
        self,
        body: str,
        subject: list[str] | str | None = None,
        slug: str | None = None,
        source: str = "cli",
        session: str | None = None,
    ) -> Path:
        """§6 journal: one new file, whole or not at all (temp file linked into place, never
        replacing one), -2, -3… on collision; never rewritten."""
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
        text = jrn.header(date, subject, source, session, self.address_of)
        text += body.strip() + "\n"  # as pi-canon stores it: no blank lines around the text
        data = text.encode("utf-8", errors="replace")
        names = jrn.names(date, stem)
        with self.lock:
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
            self.journal_changed()
            return self.journal_dir / name

    def mend_entry(self, name: str, change: Callable[[str], str | None]) -> bool:
        """Rewrite one journal entry by `change` (None: leave it) under the store lock, whole
        or not at all: the one repair `canon check --fix` makes to an entry."""
        path, inside = self.journal_dir / name, os.path.realpath(self.journal_dir)
        with self.lock, self._locked_root(create=False):
            data, truncated = fsio.read_regular(path, MAX_BYTES, inside=inside)
            edited = None if truncated else change(data.decode("utf-8"))
            if edited is not None:
                mode = os.stat(path).st_mode & 0o777
                fsio.atomic_write(path, edited.encode(), mode, anchor=inside, follow=False)
        self.journal_changed()
        return edited is not None

    def journal_draft(
        self, subject: list[str] | str | None = None, slug: str | None = None, source: str = "lsp"
    ) -> tuple[Path, str]:
        """The file an editor would create for a new entry it lets a person write: the next free
        name under journal/ and the entry's front matter (the same header `journal` writes)."""
        self.check_layout()
        date = clock.today()
        stem = (sanitise_slug(slug) if isinstance(slug, str) and slug else "") or "entry"
        for name in jrn.names(date, stem):
            path = contained(self.journal_dir / name, self.root)
            if not os.path.lexists(path):
                return path, jrn.header(date, subject, source, None, self.address_of) + "\n"
        raise BadInput("Too many journal entries with this name today; give a different slug.")


def iter_addresses(store: Store, prefix: str) -> Iterable[str]:
    """Addresses equal to `prefix` or under it (segment-aware), sorted."""
    for address in store.addresses():
        if not prefix or address == prefix or address.startswith(prefix + "/"):
            yield address


def _retitled(data: bytes, old: str, new: str) -> bytes:
    """A moved article's bytes with its `# <old address>` heading naming the new address."""
    text = data.decode("utf-8")
    body = art.split_front(text)[1]
    if art.title_of(body) != old:
        return data  # a heading in other words stays
    heading = body.lstrip().split("\n", 1)[0]
    return (text[: len(text) - len(body)] + body.replace(heading, f"# {new}", 1)).encode("utf-8")
