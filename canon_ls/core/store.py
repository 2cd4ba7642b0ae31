"""The store (SPEC §2, §4, §6): an in-memory index kept in sync with `.canon/` on disk.

Resolution is a dict lookup per ancestor. `refresh()` re-validates with one os.scandir walk
comparing (mtime_ns, size, inode, ctime_ns) and re-parses only changed files, so hand and agent
edits are never missed; `reload_file()` serves file watchers. The first load of a process takes
unchanged files from a parse cache outside the project (core/cache.py). Nothing is created on
disk until the first write or journal entry. All writes are atomic (temp file, fsync, rename,
fsync dir).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import tempfile
import threading
import time
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from stat import S_ISREG

from canon_ls.core import article as art
from canon_ls.core import cache, clock, layout, lint
from canon_ls.core import schema as sch
from canon_ls.core.address import (
    OutsideStore,
    article_file,
    contained,
    governing_in,
    normalise,
    parent,
)
from canon_ls.core.article import Article
from canon_ls.core.backlinks import LinkIndex, targets_of
from canon_ls.core.search import (
    SearchIndex,
    boosted,
    cached_index,
    default_cache_file,
    tag_tokens,
    tokenize,
)

MAX_BYTES = 4 * 1024 * 1024  # larger article files are read truncated, with a problem
RACY_NS = 3 * 10**9  # files modified this recently are re-read on refresh (coarse mtimes)
_Key = tuple[int, int, int, int]  # (mtime_ns, size, inode, ctime_ns)
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_OPEN_FLAGS |= getattr(os, "O_NONBLOCK", 0)  # a FIFO named x.md must not hang a load


def _key(st: os.stat_result) -> _Key:
    """ctime too: an edit that restores the old mtime (touch -r, some sync tools) still shows."""
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


_MOUNT = re.compile(r"([^/:]+):(.*)", re.DOTALL)
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
_SURROGATES = re.compile("[\ud800-\udfff]")


class BadInput(ValueError):
    """A request the store cannot act on; the message is one sentence saying what to do."""


@dataclass
class WriteOutcome:
    address: str
    status: str  # 'written' | 'created' | 'unchanged' | 'refused'
    lines: list[str] = field(default_factory=list)  # lint/schema lines, already sentences


@dataclass(frozen=True)
class JournalEntry:
    name: str
    path: Path
    date: str
    subject: tuple[str, ...]
    source: str
    session: str
    mtime_ns: int = 0
    size: int = 0


def _read_capped(path: str | Path, size: int = -1) -> tuple[bytes, bool]:
    """At most MAX_BYTES of a file, and whether it was longer. `size` (from the scan's stat)
    sizes the read: asking for MAX_BYTES every time allocated 4 MB per file (3x slower)."""
    limit = MAX_BYTES + 1
    want = min(size, MAX_BYTES) + 1 if size >= 0 else 65536
    chunks: list[bytes] = []
    total = 0
    fd = os.open(path, _OPEN_FLAGS)
    try:
        while total < limit:
            chunk = os.read(fd, min(want, limit - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total == size:
                break  # all the stat promised; a later growth changes the key, so it is re-read
            want = max(want, 65536)
    finally:
        os.close(fd)
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if total > MAX_BYTES:
        return data[:MAX_BYTES], True
    return data, False


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


ABANDONED_S = 15 * 60  # a temp file this old belongs to no live writer (a write takes ms)


def _sweep_abandoned(entry: os.DirEntry[str]) -> None:
    """Remove `atomic_write`'s temp file left by a killed writer (`.x.md.<random>.tmp`).

    It never was an article (the rename that would publish it did not happen), so nothing is
    lost; the walk that lists articles sees it anyway, so the sweep costs nothing extra.
    """
    with contextlib.suppress(OSError):
        st = entry.stat(follow_symlinks=False)
        if S_ISREG(st.st_mode) and time.time() - st.st_mtime > ABANDONED_S:
            os.unlink(entry.path)


def atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Temp file in the same directory, fsync, os.replace, fsync the directory."""
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def _valid_text(text: str | None) -> str | None:
    """Lone surrogates (possible in JSON input) cannot be stored as UTF-8: replace them."""
    if text is None or text.isascii():
        return text
    return _SURROGATES.sub("\ufffd", text)


def sanitise_slug(text: str) -> str:
    """[a-z0-9-] only, at most 60 characters, no leading/trailing hyphen (§6 journal)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(slug) > 60:
        slug = slug[:60].rstrip("-")
    return slug


def slug_from_body(body: str, words: int = 6) -> str:
    """The body's first words as a slug, or 'entry'."""
    ascii_text = unicodedata.normalize("NFKD", body).encode("ascii", "ignore").decode()
    found = re.findall(r"[a-z0-9]+", ascii_text.lower())
    return sanitise_slug("-".join(found[:words])) or "entry"


class Store:
    """One store: the project's `.canon/` plus its mounts, indexed in memory."""

    def __init__(
        self,
        project: Path,
        root: str | Path | None = None,
        mounts: Sequence[str | Path] = (),
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
        self._subs: dict[str, Store] = {name: Store(d) for name, d in self.mounts.items()}
        self._lock = threading.RLock()
        self._index: dict[str, Article] = {}
        self._stat: dict[str, _Key] = {}
        self._digest: dict[str, int] = {}
        self._racy: set[str] = set()
        self._parsed = 0  # files parsed since the parse cache was last written
        self._loaded = False
        self._search: SearchIndex | None = None
        self._links: LinkIndex | None = None  # inverse wikilinks, built on first backlinks()
        self._journal: dict[str, JournalEntry] = {}
        self._by_subject: dict[str, list[str]] | None = None  # address -> names, newest first
        self._journal_text: dict[str, str] = {}
        self._jsearch: SearchIndex | None = None
        self._journal_dir_key: tuple[int, int] | None = None
        self._schema: tuple[tuple[int, int] | None, sch.Schema] | None = None
        self._mapped = False
        self.options: layout.Options | None = None  # §13, set by project.open_store
        self.retrieval = "none"  # §11.4 options, set by project.open_store
        self.standout = 1.4

    # --- disk -> index -----------------------------------------------------------------------

    def exists(self) -> bool:
        """True when the store directory exists (nothing is created by asking)."""
        return self.root.is_dir()

    def _walk(self, directory: str, prefix: str, base: str, out: dict, seen: set[str]) -> None:
        try:
            it = os.scandir(directory)
        except OSError:
            return
        with it:
            for entry in it:
                name = entry.name
                try:
                    if entry.is_symlink():
                        real = os.path.realpath(entry.path)
                        if not (real == base or real.startswith(base + os.sep)):
                            continue  # §12: never follow a link out of the store
                        if os.path.isdir(real):
                            if real not in seen:
                                seen.add(real)
                                self._walk(entry.path, prefix + name + "/", base, out, seen)
                            continue
                        if name.endswith(".md") and len(name) > 3 and os.path.isfile(real):
                            st = os.stat(real)
                            out[prefix + name[:-3]] = (entry.path, _key(st))
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        self._walk(entry.path, prefix + name + "/", base, out, seen)
                    elif name.startswith(".") and name.endswith(".tmp") and ".md." in name:
                        _sweep_abandoned(entry)
                    elif name.endswith(".md") and len(name) > 3:
                        st = entry.stat(follow_symlinks=False)
                        if S_ISREG(st.st_mode):  # a FIFO or device named x.md is no article
                            out[prefix + name[:-3]] = (entry.path, _key(st))
                except OSError:
                    continue

    def _scan(self) -> dict[str, tuple[str, _Key]]:
        found: dict[str, tuple[str, _Key]] = {}
        base = os.path.realpath(self.articles_dir)
        self._walk(str(self.articles_dir), "", base, found, {base})
        return found

    def _consider(self, address: str, path: str | Path, key: _Key) -> bool:
        """Re-read a file whose stat key changed (or was modified too recently to trust its
        mtime, as git does for "racy" entries); True when its content changed."""
        if self._stat.get(address) == key and address not in self._racy:
            return False
        now = time.time_ns()  # before the read: "settled" must hold for the bytes we get
        try:
            data, truncated = _read_capped(path, key[1])
        except OSError:
            return False
        if now - max(key[0], key[3]) < RACY_NS:
            self._racy.add(address)
        else:
            self._racy.discard(address)
        self._stat[address] = key
        digest = hash(data)
        if address in self._index and self._digest.get(address) == digest:
            return False
        self._parsed += 1
        article = art.parse(data, address, key[0], key[1])
        if truncated:
            problems = (
                *article.problems,
                f"file too large ({key[1]:,} bytes); only the first {MAX_BYTES:,} were read",
            )
            article = replace(article, problems=problems)
        self._digest[address] = digest
        self._set(address, article)
        return True

    def _set(self, address: str, article: Article | None) -> None:
        """Update the merged index (and the search index when built)."""
        if article is None:
            self._index.pop(address, None)
            self._stat.pop(address, None)
            self._digest.pop(address, None)
            self._racy.discard(address)
            if self._search is not None:
                self._search.remove(address)
            if self._links is not None:
                self._links.set(address, frozenset())
            return
        self._index[address] = article
        if self._search is not None:
            self._search.add_tokens(address, _search_tokens(article))
        if self._links is not None:
            self._links.set(address, targets_of(article))

    def refresh(self) -> set[str]:
        """Re-validate against disk (one scandir walk, stat compare); return changed addresses."""
        with self._lock:
            changed: set[str] = set()
            own = {a for a in self._index if not self._mount_of(a)[0]}
            found = self._scan()
            snapshot = self._cached() if found and not self._loaded else {}
            for address, (path, key) in found.items():
                hit = snapshot.get(address) if snapshot else None
                if hit is not None and hit[0] == key and address not in self._stat:
                    self._stat[address] = key  # unchanged since it was parsed (cache.py)
                    self._set(address, cache.restore(address, hit[1]))
                    changed.add(address)
                elif self._consider(address, path, key):
                    changed.add(address)
            for address in own - found.keys():
                self._set(address, None)
                changed.add(address)
            self._journal_dir_key = None  # the next journal look-up re-checks every entry
            for name, sub in self._subs.items():
                for address in sub.refresh():
                    changed.add(f"{name}:{address}")
                    self._set(f"{name}:{address}", sub._index.get(address))
            self._loaded = True
            if self._parsed >= cache.MIN_PARSED:
                self._save_cache()
            return changed

    def _save_cache(self) -> None:
        file = self._cache_file()
        if file is not None:
            self._parsed = 0  # also when the write fails: never retry on every refresh
            cache.save(file, self.root, cache.entries_of(self._index, self._stat, self._racy))

    def _cache_file(self) -> Path | None:
        return cache.cache_file(self.root, self.project)

    def _cached(self) -> dict[str, tuple[_Key, tuple]]:
        """The parse cache's entries for this store ({} when off, missing or damaged)."""
        return cache.load(self._cache_file(), self.root, RACY_NS)

    def _ensure(self) -> None:
        if not self._loaded:
            self.refresh()

    def reload_file(self, path: Path) -> set[str]:
        """One article file changed, appeared or vanished (a watcher event); returns addresses."""
        with self._lock:
            self._ensure()
            path = Path(os.path.abspath(path))
            for name, sub in self._subs.items():
                if sub.articles_dir in path.parents:
                    changed = {f"{name}:{a}" for a in sub.reload_file(path)}
                    for address in changed:
                        self._set(address, sub._index.get(address.split(":", 1)[1]))
                    return changed
            if self.journal_dir in path.parents:
                self._journal_dir_key = None
                return set()
            if self.articles_dir not in path.parents or not path.name.endswith(".md"):
                return set()
            address = path.relative_to(self.articles_dir).as_posix()[:-3]
            try:
                contained(path, self.articles_dir)
                st = os.stat(path)
                if not S_ISREG(st.st_mode):
                    raise FileNotFoundError(path)  # as the scan: a FIFO or device is no article
            except (OSError, OutsideStore):
                if address in self._index:
                    self._set(address, None)
                    return {address}
                return set()
            return {address} if self._consider(address, path, _key(st)) else set()

    # --- lookups -------------------------------------------------------------------------------

    def _mount_of(self, address: str) -> tuple[str, str]:
        """('lake', 'prices') for 'lake:prices' when lake is a mount, else ('', address)."""
        if ":" in address:
            m = _MOUNT.fullmatch(address)
            if m and m.group(1) in self._subs:
                return m.group(1), m.group(2)
        return "", address

    def addresses(self) -> list[str]:
        """Every article address, sorted; mount articles as 'name:address'."""
        self._ensure()
        return sorted(self._index)

    def articles(self) -> list[Article]:
        """Every article, sorted by address."""
        self._ensure()
        return [self._index[a] for a in sorted(self._index)]

    def article(self, address: str) -> Article | None:
        self._ensure()
        return self._index.get(address)

    def has(self, address: str) -> bool:
        """Whether an article exists at exactly this address (in memory, no disk access)."""
        self._ensure()
        return address in self._index

    def governing(self, address: str) -> str | None:
        """§4: the exact article, else the nearest ancestor with one, else None."""
        self._ensure()
        return governing_in(address, self._index)

    def address_of(self, path_or_address: str) -> str:
        """Normalise a path, URI or address against the project and mounts (§3, §8).

        The path of an article file itself (`.canon/articles/src/a.md`) names its address
        (`src/a`), so an agent or editor holding the article's path reaches the article."""
        address = normalise(path_or_address, self.project, self.mounts)
        name, rest = self._mount_of(address)
        owner = self._subs[name] if name else self
        inner = owner._articles_prefix()
        if inner and rest.startswith(inner):
            rest = rest[len(inner) :]
            return f"{name}:{rest}" if name and rest else rest
        return address

    def _articles_prefix(self) -> str:
        """'.canon/articles/' when the articles directory lies inside the project, else ''."""
        try:
            rel = self.articles_dir.relative_to(self.project).as_posix()
        except ValueError:
            return ""
        return rel + "/"

    def path_of(self, address: str) -> Path:
        """The article file for an address (it may not exist); OutsideStore if it would escape."""
        name, rest = self._mount_of(address)
        if name:
            return self._subs[name].path_of(rest)
        return article_file(self.articles_dir, address)

    def backlinks(self, address: str) -> list[str]:
        """Articles whose wikilinks target `address`, sorted (the article itself excluded).

        Answered from an inverse index built on first use and kept current by `_set`."""
        with self._lock:
            links = self._link_index()
            links.step(len(links.pending), self._index.get)
            return links.sources(address)

    def build_backlinks(self, step: int = 25) -> Iterator[int]:
        """Build the backlinks index `step` articles at a time, yielding how many are left
        between chunks, so an event loop can answer requests meanwhile (never a thread).

        Abandoning the generator is harmless: the next `backlinks()` finishes the build, and
        articles that change meanwhile are indexed at once."""
        while True:
            with self._lock:
                links = self._link_index()
                if not links.step(max(1, step), self._index.get):
                    return
                left = len(links.pending)
            yield left

    def _link_index(self) -> LinkIndex:
        self._ensure()
        if self._links is None:
            self._links = LinkIndex(self._index)
        return self._links

    def schema(self) -> sch.Schema:
        """schema.json (defaults when absent), cached by (mtime_ns, size)."""
        try:
            st = os.stat(self.schema_file)
            key: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            key = None
        if self._schema is None or self._schema[0] != key:
            self._schema = (key, sch.load(self.schema_file))
        return self._schema[1]

    def schema_for(self, address: str) -> sch.Schema:
        """The schema that judges one article: a mount's own `.canon/schema.json` for its
        articles (SPEC §8: each mount has its own `.canon/`), else the project's."""
        name, sep, _rest = address.partition(":")
        if sep and name in self._subs:
            return self._subs[name].schema()
        return self.schema()

    # --- writes --------------------------------------------------------------------------------

    def _ensure_store(self) -> None:
        """Create the store lazily with schema.json defaults (never overwriting it)."""
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(self.schema_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(sch.default_text())
            fh.flush()
            os.fsync(fh.fileno())
        _fsync_dir(self.root)

    def _maps(self, address: str) -> bool:
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

    def _is_orphan(self, address: str, scope: str) -> bool:
        """§6.1 item 5 as the write path can see it."""
        if scope == "rule" or "/" not in address:
            return False
        if not (self.project / parent(address)).is_dir() or self._maps(address):
            return False
        if not self._mapped:
            self._mapped = any(self._maps(a) for a in self._index if a != address and ":" not in a)
        return self._mapped

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
        name, rest = self._mount_of(address)
        with self._lock:
            self._ensure()
            if name:
                outcome = self._subs[name].write(rest, capsule, body, scope)
                outcome.address = address
                self._set(address, self._subs[name].article(rest))
                return outcome
            return self._write_own(address, capsule, body, scope or None)

    def _write_own(
        self, address: str, capsule: str | None, body: str | None, scope: str | None
    ) -> WriteOutcome:
        file = article_file(self.articles_dir, address)
        prev_text: str | None = None
        prev: Article | None = None
        mode = 0o644
        try:
            real = contained(file, self.articles_dir)
            data, truncated = _read_capped(real)
            mode = os.stat(real).st_mode & 0o777
        except FileNotFoundError:
            pass
        else:
            prev = art.parse(data, address)
            if truncated or any(p.startswith(("binary", "not UTF-8")) for p in prev.problems):
                if not (body and body.strip()):
                    raise BadInput(
                        f"The article file for {address} is not readable text (binary, not "
                        "UTF-8 or too large); fix it by hand or write a full body to replace it."
                    )
                prev_text = None
            else:
                prev_text = data.decode("utf-8")
        capsule = _valid_text(capsule)
        body = _valid_text(body)
        capsule_given = bool(capsule and capsule.strip())
        body_given = bool(body and body.strip())
        if prev is None and not capsule_given and not body_given and scope != "rule":
            raise BadInput(f"Nothing to write for {address}: give a capsule, a body, or both.")
        old_capsule = prev.capsule if prev else ""
        old_body = prev.body if prev else ""
        old_scope = prev.scope if prev else "asset"
        new_capsule = art.one_line(capsule) if capsule_given and capsule else old_capsule
        new_body = old_body
        if body_given and body:
            candidate = body if body.endswith("\n") else body + "\n"
            if prev is None or candidate.rstrip("\n") != old_body.rstrip("\n"):
                new_body = candidate
        new_scope = scope or old_scope
        capsule_changed = new_capsule != old_capsule
        body_changed = new_body != old_body
        scope_changed = new_scope != old_scope
        schema = self.schema()
        tail = [schema.malformed_line] if schema.error else []
        nothing = not (capsule_changed or body_changed or scope_changed)
        if prev is not None and prev_text is not None and nothing:
            return WriteOutcome(address, "unchanged", tail)
        created = prev is None
        new_title = art.title_of(new_body)
        changed = set()
        if capsule_changed:
            changed.add("capsule")
        if body_changed:
            changed.add("body")
            if new_title != (prev.title if prev else ""):
                changed.add("title")
        refs_changed = body_changed and sch.references(new_body) != sch.references(old_body)
        judgement = sch.judge(
            schema,
            created=created,
            changed=changed,
            values={"capsule": new_capsule, "title": new_title, "body": new_body},
            refs_changed=refs_changed,
        )
        if judgement.refusals:
            return WriteOutcome(address, "refused", judgement.refusals)
        text = art.render(
            prev_text,
            capsule=new_capsule,
            updated=clock.today(),
            scope=new_scope,
            body=new_body,
        )
        self._ensure_store()
        file.parent.mkdir(parents=True, exist_ok=True)
        contained(file, self.articles_dir)  # re-check on the final path (§3 step 2, §12)
        data = text.encode("utf-8")
        atomic_write(file, data, mode)
        key = _key(os.stat(file))
        written = art.parse(data, address, key[0], key[1])
        self._stat[address], self._digest[address] = key, hash(data)
        self._racy.add(address)
        self._set(address, written)
        lines = list(judgement.warnings)
        lines += lint.write_lints(
            address,
            capsule=new_capsule,
            body=new_body,
            previous=prev,
            capsule_given=capsule_changed,
            body_given=body_changed,
            exists=self.has,
            orphan=self._is_orphan(address, new_scope),
            schema=schema,
        )
        for problem in written.problems:
            lines.append(f"The front matter is still wrong ({problem}); fix it by hand.")
        return WriteOutcome(address, "created" if created else "written", lines + tail)

    def set_reviewed(self, address: str, date: str | None = None) -> None:
        """Write `reviewed: <date>` (§9) without touching `updated` or anything else."""
        date = date or clock.today()
        if not _ISO.fullmatch(date):
            raise BadInput(f"reviewed must be a date YYYY-MM-DD, not {date!r}.")
        with self._lock:
            file = self.path_of(address)
            name, rest = self._mount_of(address)
            base = self._subs[name].articles_dir if name else self.articles_dir
            try:
                real = contained(file, base)
                data = real.read_bytes()
            except FileNotFoundError:
                raise BadInput(f"There is no article {address} to mark reviewed.") from None
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                raise BadInput(
                    f"The article file for {address} is not UTF-8 text; fix it by hand first."
                ) from None
            marked = art.set_meta(text, "reviewed", date)
            if marked == text:
                return  # already reviewed on that date: the file keeps its bytes and mtime
            atomic_write(file, marked.encode("utf-8"))
            if name:
                self._subs[name].reload_file(file)
                self._set(address, self._subs[name].article(rest))
            else:
                self.reload_file(file)

    # --- journal -------------------------------------------------------------------------------

    def journal(
        self,
        body: str,
        subject: list[str] | None = None,
        slug: str | None = None,
        source: str = "cli",
        session: str | None = None,
    ) -> Path:
        """§6 journal: one new file, exclusive create, -2, -3… on collision; never rewritten."""
        if not isinstance(body, str) or not body.strip():
            raise BadInput(
                "The journal entry is empty; say what happened (decisions, findings, changes)."
            )
        body = _valid_text(body) or body
        date = clock.today()
        stem = sanitise_slug(slug) if isinstance(slug, str) and slug else ""
        stem = stem or slug_from_body(body)
        text = self._journal_header(date, subject, source, session)
        text += body if body.endswith("\n") else body + "\n"
        data = text.encode("utf-8", errors="replace")
        with self._lock:
            self._ensure_store()
            self.journal_dir.mkdir(parents=True, exist_ok=True)
            contained(self.journal_dir, self.root)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            for n in range(1, 100000):
                name = f"{date}-{stem}.md" if n == 1 else f"{date}-{stem}-{n}.md"
                path = self.journal_dir / name
                try:
                    fd = os.open(path, flags, 0o644)
                except FileExistsError:
                    continue
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                _fsync_dir(self.journal_dir)
                return path
        raise BadInput("Too many journal entries with this name today; give a different slug.")

    def journal_draft(
        self, subject: list[str] | None = None, slug: str | None = None, source: str = "lsp"
    ) -> tuple[Path, str]:
        """The file an editor would create for a new entry it lets a person write: the next free
        name under journal/ and the entry's front matter (the same header `journal` writes).
        Nothing is written here; the editor creates the file through an undoable edit."""
        date = clock.today()
        stem = (sanitise_slug(slug) if isinstance(slug, str) and slug else "") or "entry"
        for n in range(1, 100000):
            name = f"{date}-{stem}.md" if n == 1 else f"{date}-{stem}-{n}.md"
            path = contained(self.journal_dir / name, self.root)
            if not os.path.lexists(path):
                return path, self._journal_header(date, subject, source, None) + "\n"
        raise BadInput("Too many journal entries with this name today; give a different slug.")

    def _journal_header(
        self, date: str, subject: list[str] | None, source: str, session: str | None
    ) -> str:
        """Front matter of a journal entry (§6): date, subject (addresses, normalised, only when
        a list is given), source, session."""
        subjects: list[str] = []
        if isinstance(subject, list):
            for item in subject:
                if isinstance(item, str):
                    address = self.address_of(item)
                    if address and address not in subjects:
                        subjects.append(address)
        lines = ["---\n", f"date: {date}\n"]
        if subjects:
            lines.append("subject:\n")
            lines += [f"  - {art.format_scalar(s)}\n" for s in subjects]
        lines.append(f"source: {art.format_scalar(source or 'cli')}\n")
        if session:
            lines.append(f"session: {art.format_scalar(str(session))}\n")
        lines.append("---\n")
        return "".join(lines)

    def _refresh_journal(self) -> None:
        """Re-list the journal unless its directory is unchanged since the last listing (new
        entries change it; Store.refresh and reload_file force a full re-check)."""
        try:
            st = os.stat(self.journal_dir)
            dir_key: tuple[int, int] | None = (st.st_mtime_ns, st.st_ino)
        except OSError:
            dir_key = None
        if dir_key is not None and dir_key == self._journal_dir_key:
            return
        recent = dir_key is not None and time.time_ns() - dir_key[0] < RACY_NS
        self._journal_dir_key = None if recent else dir_key
        found: dict[str, tuple[int, int]] = {}
        now = time.time_ns()
        try:
            with os.scandir(self.journal_dir) as it:
                for entry in it:
                    if entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                        try:
                            st = entry.stat(follow_symlinks=False)
                        except OSError:
                            continue
                        found[entry.name] = (st.st_mtime_ns, st.st_size)
        except OSError:
            pass
        for name in list(self._journal):
            if name not in found:
                del self._journal[name]
                self._by_subject = None
                self._journal_text.pop(name, None)
                if self._jsearch is not None:
                    self._jsearch.remove(name)
        for name, (mtime_ns, size) in found.items():
            old = self._journal.get(name)
            settled = now - mtime_ns >= RACY_NS
            if old is not None and (old.mtime_ns, old.size) == (mtime_ns, size) and settled:
                continue
            path = self.journal_dir / name
            try:
                data, _ = _read_capped(path, size)
            except OSError:
                continue
            parsed = art.parse(data, name)
            meta = parsed.meta
            date = meta.get("date") if isinstance(meta.get("date"), str) else ""
            if not date or not _ISO.fullmatch(date.strip()):
                date = name[:10] if _ISO.fullmatch(name[:10]) else ""
            raw_subject = meta.get("subject")
            subject = (
                tuple(s for s in raw_subject if isinstance(s, str))
                if isinstance(raw_subject, list)
                else ()
            )
            source = meta.get("source") if isinstance(meta.get("source"), str) else ""
            session = meta.get("session") if isinstance(meta.get("session"), str) else ""
            self._journal[name] = JournalEntry(
                name, path, date.strip(), subject, source or "", session or "", mtime_ns, size
            )
            self._by_subject = None
            self._journal_text[name] = parsed.body
            if self._jsearch is not None:
                self._jsearch.add(name, f"{' '.join(subject)} {parsed.body}")

    def journal_entries(self) -> list[JournalEntry]:
        """Every journal entry, newest first (by date, then file time, then name)."""
        with self._lock:
            self._refresh_journal()
            return _newest_first(self._journal.values())

    def journal_count(self) -> int:
        """How many entries the journal holds (a directory listing; nothing is read)."""
        try:
            with os.scandir(self.journal_dir) as it:
                return sum(1 for e in it if e.name.endswith(".md"))
        except OSError:
            return 0

    def journal_index(self, address: str, n: int = 3) -> list[str]:
        """File names of the newest `n` entries whose subject contains exactly `address`."""
        return self.journal_names(address)[:n]

    def journal_names(self, address: str) -> list[str]:
        """Every entry file name whose subject names `address`, newest first. The grouping is
        kept until the journal changes: hovers and code lenses ask on every request, and
        sorting 5k entries each time cost ~100 ms."""
        with self._lock:
            self._refresh_journal()
            if self._by_subject is None:
                grouped: dict[str, list[str]] = {}
                for entry in _newest_first(self._journal.values()):
                    for subject in entry.subject:
                        grouped.setdefault(subject, []).append(entry.name)
                self._by_subject = grouped
            return self._by_subject.get(address, [])

    def journal_body(self, entry: JournalEntry) -> str:
        """An entry's body (only search shows journal contents)."""
        with self._lock:
            text = self._journal_text.get(entry.name)
            if text is None:
                self._refresh_journal()
                text = self._journal_text.get(entry.name, "")
            return text

    # --- search --------------------------------------------------------------------------------

    def search_articles(self, query: str, limit: int) -> tuple[list[tuple[str, float]], int]:
        """BM25 over address, title, capsule, tags and body, tags boosted; (hits best first,
        total matches)."""
        with self._lock:
            self._ensure()
            if self._search is None:
                # Reuse the on-disk snapshot for articles whose stat key is unchanged (a racy
                # file gets no stamp and is always re-tokenized): first search at 10k articles
                # drops from ~2 s to ~0.05 s (docs/BENCHMARKS.md).
                docs = {
                    address: (
                        None if address in self._racy else self._stat.get(address),
                        functools.partial(_search_tokens, article),
                    )
                    for address, article in self._index.items()
                }
                self._search = cached_index(default_cache_file(self.root, self.project), docs)
            return self._search.query_tokens(boosted(tokenize(query)), limit)

    def search_journal(
        self, query: str, limit: int
    ) -> tuple[list[tuple[JournalEntry, float]], int]:
        """BM25 over journal entries (subject and body)."""
        with self._lock:
            self._refresh_journal()
            if self._jsearch is None:
                index = SearchIndex()
                for name, entry in self._journal.items():
                    index.add(name, f"{' '.join(entry.subject)} {self._journal_text.get(name, '')}")
                self._jsearch = index
            hits, total = self._jsearch.query(query, limit)
            return [(self._journal[name], score) for name, score in hits], total


def _newest_first(entries: Iterable[JournalEntry]) -> list[JournalEntry]:
    """Journal order: by date, then file time, then name, newest first."""
    return sorted(entries, key=lambda e: (e.date, e.mtime_ns, e.name), reverse=True)


def _search_text(article: Article) -> str:
    tags = " ".join(article.tags)
    return f"{article.address} {article.title} {article.capsule} {tags} {article.body}"


def _search_tokens(article: Article) -> list[str]:
    """The article's text tokens plus its tags as a boosted field (search.tag_tokens)."""
    return tokenize(_search_text(article)) + tag_tokens(article.tags)


def iter_addresses(store: Store, prefix: str) -> Iterable[str]:
    """Addresses equal to `prefix` or under it (segment-aware), sorted."""
    for address in store.addresses():
        if not prefix or address == prefix or address.startswith(prefix + "/"):
            yield address
