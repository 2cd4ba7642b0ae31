"""The search worker's index over the article files, with no Store beside it.

A loaded Store keeps every article (front matter and body) in memory: the server already
holds one, and a second in the search worker doubled it (about 60 MB at 10k articles, the
largest part of the worker). Here each file is read, tokenized and dropped; only the BM25
index stays. The index and its on-disk snapshot are the ones `Store.search_articles` uses
(same tokens, same `(mtime_ns, size, inode, ctime_ns)` stamps, same cache file), so the CLI's
`canon search` and the worker reuse each other's work. It lives in core because
it reads the store's files; the server's search worker is its one caller.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path

from canon_ls.core import article as art
from canon_ls.core import fsio
from canon_ls.core.address import OutsideStore
from canon_ls.core.freshness import Key, key, scan, settled
from canon_ls.core.search import SearchIndex, boosted, cached_index, default_cache_file, tokenize
from canon_ls.core.store import MAX_BYTES, Store
from canon_ls.core.store import _search_tokens as search_tokens


class Corpus:
    """Article files -> one SearchIndex. `build()` once, then `update(addresses)` as the
    server reports changes; `query` answers like `Store.search_articles`."""

    def __init__(self, store: Store) -> None:
        self.store = store  # never loaded: only its directories, mounts and layout are used
        # (address prefix, articles directory, its real path) for the project and each mount
        self.roots: dict[str, tuple[Path, str]] = {}
        own = Store(store.project, root=store.root)  # the same directories, without mounts
        for prefix, each in [("", own), *((f"{n}:", Store(m)) for n, m in store.mounts.items())]:
            if not each.layout_problem():  # SPEC §12: a store leading outside is not read
                self.roots[prefix] = (each.articles_dir, os.path.realpath(each.articles_dir))
        self.index = SearchIndex()

    def build(self) -> None:
        now = time.time_ns()
        docs = {}
        for prefix, (base, real) in self.roots.items():
            for address, (path, k) in scan(base, real).items():
                # a mount's article is parsed under its own address, as its Store does
                stamp = k if settled(k, now) else None  # core's freshness rule
                docs[prefix + address] = (stamp, _Tokens(address, path, k, real))
        cache = default_cache_file(self.store.root, self.store.project)
        self.index = cached_index(cache, docs)

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
        """(address in its own store, file path, real articles directory), as the Store
        reads it: a `name:` prefix naming a mount is that mount's article, anything else the
        project's."""
        name, colon, rest = address.partition(":")
        prefix = name + colon
        if not colon or "/" in name or prefix not in self.roots:
            prefix, rest = "", address
        root = self.roots.get(prefix)
        if root is None or not rest or rest.startswith("/") or ".." in rest.split("/"):
            return None
        base, real = root
        return rest, f"{base}{os.sep}{rest}.md", real

    def query(self, text: str, limit: int) -> tuple[list[tuple[str, float]], int]:
        return self.index.query_tokens(boosted(tokenize(text)), limit)


class _Tokens:
    """The search tokens of one file, computed when the index asks (nothing kept after)."""

    __slots__ = ("address", "path", "key", "inside")

    def __init__(self, address: str, path: str, key: Key, inside: str) -> None:
        self.address, self.path, self.key, self.inside = address, path, key, inside

    def __call__(self) -> list[str]:
        try:
            data, _ = fsio.read_regular(self.path, MAX_BYTES, self.key[1], inside=self.inside)
        except (OSError, OutsideStore):
            data = b""
        article = art.parse(data, self.address, self.key[0], self.key[1])
        return search_tokens(article)
