"""The search worker's index over the article files, with no Store beside it."""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canon_ls.core.retrieval.search import article_tokens, boosted, default_cache_file, tokenize
from canon_ls.core.retrieval.search_file import FileIndex, cached_index
from canon_ls.core.storage import article as art
from canon_ls.core.storage import fsio
from canon_ls.core.storage.address import OutsideStore, split_mount
from canon_ls.core.storage.freshness import Key, key, scan, settled

if TYPE_CHECKING:
    from canon_ls.core.storage.store import Store

MAX_BYTES = 4 * 1024 * 1024  # the Store's read limit (index.MAX_BYTES; a test holds them equal)
Spec = dict[str, Any]  # {"roots": {prefix: [articles dir, its real path]}, "cache": path|None}


def spec_of(store: Store) -> Spec:
    """What the worker needs of a store, as plain data: the articles directory (and its real path)
    of the project and of each mount, by address prefix, and the index file."""
    from canon_ls.core.storage.store import Store

    roots: dict[str, list[str]] = {}
    own = Store(store.project, root=store.root)  # the same directories, without mounts
    for prefix, each in [("", own), *((f"{n}:", Store(m)) for n, m in store.mounts.items())]:
        if not each.layout_problem():  # SPEC §12: a store leading outside is not read
            roots[prefix] = [str(each.articles_dir), os.path.realpath(each.articles_dir)]
    cache = default_cache_file(store.root, store.project)
    return {"roots": roots, "cache": str(cache) if cache is not None else None}


class SearchCorpus:
    """Article files -> one index file (core/retrieval/search_file.py): `build()` once, then
    `update(addresses)` on changes; `query` answers like `Store.search_articles`."""

    def __init__(self, store: Store | None = None, spec: Spec | None = None) -> None:
        spec = spec if spec is not None else spec_of(store) if store is not None else {}
        # address prefix -> (articles directory, its real path), the project's and each mount's
        self.roots: dict[str, tuple[str, str]] = {
            str(prefix): (str(pair[0]), str(pair[1]))
            for prefix, pair in dict(spec.get("roots") or {}).items()
        }
        self.mounts = {prefix[:-1] for prefix in self.roots if prefix}
        cache = spec.get("cache")
        self.cache = Path(cache) if isinstance(cache, str) else None
        self.index = FileIndex(None)

    def build(self) -> int:
        """Load or build the index; how many articles had to be read (0: the file as it was;
        the file was rewritten otherwise, when there is a cache)."""
        docs = _Docs({prefix: scan(base, real) for prefix, (base, real) in self.roots.items()})
        docs.roots = self.roots
        self.index = cached_index(self.cache, docs)
        return docs.read if self.cache is not None else 0

    def update(self, addresses: list[str]) -> None:
        """Re-read each changed article (gone, unreadable or outside: removed)."""
        for address in addresses:
            found = self._locate(address)
            tokens = None
            if found is not None:
                own, path, real = found
                with contextlib.suppress(OSError, OutsideStore):
                    st = os.stat(path)
                    if stat.S_ISREG(st.st_mode):
                        tokens = _Tokens(own, path, key(st), real)()
            if tokens is None:
                self.index.remove(address)
            else:
                self.index.add_tokens(address, tokens)

    def _locate(self, address: str) -> tuple[str, str, str] | None:
        """(address in its own store, file path, real articles directory), as the Store reads it: a
        `name:` prefix naming a mount is that mount's article, anything else the project's."""
        prefix, rest = _split(address, self.mounts)
        root = self.roots.get(prefix)
        if root is None or not rest or rest.startswith("/") or ".." in rest.split("/"):
            return None
        base, real = root
        return rest, f"{base}{os.sep}{rest}.md", real

    def query(self, text: str, limit: int) -> tuple[list[tuple[str, float]], int]:
        return self.index.query_tokens(boosted(tokenize(text)), limit)


class _Docs(Mapping[str, tuple[object, "_Tokens"]]):
    """The scanned article files as `cached_index` wants them (address -> (stamp, tokens thunk)),
    made when asked for: at 50k articles a second dict beside the scan's cost about 10 MB."""

    def __init__(self, scans: dict[str, dict[str, Key]]) -> None:
        self.scans = scans
        self.mounts = {prefix[:-1] for prefix in scans if prefix}
        self.roots: dict[str, tuple[str, str]] = {}  # prefix -> (its articles directory, real)
        self.now = time.time_ns()
        self.read = 0  # thunks called

    def __getitem__(self, address: str) -> tuple[object, _Tokens]:
        prefix, own = _split(address, self.mounts)
        found = self.scans.get(prefix, {}).get(own)
        if found is None:
            raise KeyError(address)
        base, real = self.roots.get(prefix, ("", ""))
        stamp = found if settled(found, self.now) else None  # core's freshness rule
        return stamp, _Tokens(own, os.path.join(base, own + ".md"), found, real, self)

    def __iter__(self) -> Iterator[str]:
        for prefix, found in self.scans.items():
            for address in found:
                if prefix or _split(address, self.mounts)[0] == "":  # a mount wins, as before
                    yield prefix + address

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Tokens:
    """The search tokens of one file, computed when the index asks (nothing kept after)."""

    __slots__ = ("address", "path", "key", "inside", "docs")

    def __init__(
        self, address: str, path: str, key: Key, inside: str, docs: _Docs | None = None
    ) -> None:
        self.address, self.path, self.key, self.inside = address, path, key, inside
        self.docs = docs

    def __call__(self) -> list[str]:
        if self.docs is not None:
            self.docs.read += 1
        try:
            data, _ = fsio.read_regular(self.path, MAX_BYTES, self.key[1], inside=self.inside)
        except (OSError, OutsideStore):
            data = b""
        return article_tokens(art.parse(data, self.address, self.key[0], self.key[1]))


def _split(address: str, mounts: set[str]) -> tuple[str, str]:
    """('lake:', 'x') for 'lake:x' when lake is a mount, else ('', address)."""
    name, rest = split_mount(address, mounts)
    return (f"{name}:" if name else ""), rest
