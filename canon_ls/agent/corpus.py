"""The retrieval lane's corpus (SPEC §11.4)."""

from __future__ import annotations

import contextlib
import marshal
import os
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

from canon_ls.core.retrieval.search import SearchIndex
from canon_ls.core.storage import fsio, layout
from canon_ls.core.storage.freshness import RACY_NS  # core's one freshness rule
from canon_ls.core.storage.freshness import Key as _Key
from canon_ls.core.storage.freshness import key as _file_key
from canon_ls.core.storage.seal import sealed, unsealed

VERSION = 5  # 3: the lane's own tokens (core/retrieval/search.py lane_tokens); 4: sealed; 5: stems


class Corpus:
    """Ranked-lane members: their BM25 index, capsules and which of them are rules."""

    __slots__ = ("index", "members", "project", "source")

    def __init__(
        self, index: SearchIndex, members: dict[str, tuple[str, bool]], project: Path, source: str
    ) -> None:
        self.index = index
        self.members = members  # address -> (capsule, declared scope: rule)
        self.project = str(project)
        self.source = source  # "snapshot" (read from the cache) or "built" (this process)

    def __len__(self) -> int:
        return len(self.members)

    def capsule(self, address: str) -> str:
        return self.members[address][0]

    def rule(self, address: str) -> bool:
        return self.members[address][1]

    def scores(self, tokens: list[str]) -> dict[str, float]:
        """Every member matching the query tokens, with its BM25 score."""
        return self.index.scores(tokens)

    def off_spine(self, address: str) -> bool:
        """Still off the spine now (a file may have appeared at its address since the build)."""
        return not _maps(self.project, address, {})


def cache_path(options: layout.Options) -> Path | None:
    """Where the lane's snapshot lives: beside the parse cache."""
    directory = layout.cache_dir(options.root, options.project)
    if directory is None:
        return None
    root = os.path.realpath(options.root)
    # crc32, not sha256: importing hashlib costs a hook 6-8 ms. A collision only means two
    # stores take turns rebuilding: the snapshot records its articles directory and is
    # used only for that one.
    key = zlib.crc32(root.encode("utf-8", "surrogateescape"))
    return Path(directory) / f"lane-{key:08x}-{len(root)}.bin"


def load(options: layout.Options, deep: bool = False) -> Corpus:
    """The corpus of the project's store: the snapshot when it still holds, else a rebuild."""
    file = cache_path(options)
    articles = str(options.articles_dir)
    if file is not None and not deep:
        corpus = _from_snapshot(file, articles, options.project)
        if corpus is not None:
            return corpus
    return _build(options, file)


def _from_snapshot(file: Path, articles: str, project: Path) -> Corpus | None:
    try:
        data = unsealed(fsio.read_regular(file, 1 << 30)[0])  # a FIFO, damaged, cut: rebuilt
        version, root, dirs, files, members, index_bytes = marshal.loads(data or b"")
    except (OSError, ValueError, TypeError, EOFError):
        return None
    if version != VERSION or root != articles:
        return None
    try:
        stat = os.stat
        for path, mtime, inode in dirs:  # thousands at 10k articles: the hot loop of a hook
            st = stat(path)
            if st.st_mtime_ns != mtime or st.st_ino != inode:
                return None
        for address, key in files.items():
            if key != _file_key(stat(os.path.join(articles, address + ".md"))):
                return None
    except (OSError, TypeError, ValueError, AttributeError):
        return None
    loaded = SearchIndex.from_snapshot(index_bytes) if isinstance(index_bytes, bytes) else None
    if loaded is None or not isinstance(members, dict):
        return None
    return Corpus(loaded[0], members, project, "snapshot")


def _build(options: layout.Options, file: Path | None) -> Corpus:
    """Judge every article of the store, index the members, save the snapshot."""
    # Imported here: only a rebuild pays for the store and the parser.
    from canon_ls.core.retrieval.search import TAG, article_text, lane_stems, lane_tokens
    from canon_ls.core.storage.store import Store

    started = time.time_ns()
    articles = str(options.articles_dir)
    dirs = list(_dir_keys(articles, started))
    store = Store(options.project, root=options["root"])
    store.refresh()
    index = SearchIndex()
    members: dict[str, tuple[str, bool]] = {}
    files: dict[str, _Key | None] = {}
    listings: dict[str, frozenset[str]] = {}
    project = str(options.project)
    for address in store.addresses():
        article = store.article(address)
        if article is None or (article.scope != "rule" and _maps(project, address, listings)):
            continue
        tags = [TAG + token for token in lane_tokens(" ".join(article.tags))]  # a field of its own
        words = lane_tokens(article_text(article))
        index.add_tokens(address, words + tags + lane_stems(words))
        members[address] = (article.capsule.strip(), article.scope == "rule")
        try:
            st = os.stat(os.path.join(articles, address + ".md"))
        except OSError:
            files[address] = None
            continue
        key = _file_key(st)
        files[address] = None if started - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS else key
    if file is not None:
        from canon_ls.core.storage.cache import write_file  # the writer all canon-ls caches share

        state = (VERSION, articles, dirs, files, members, index.snapshot())
        write_file(file, sealed(marshal.dumps(state)))
    return Corpus(index, members, options.project, "built")


def _dir_keys(articles: str, now: int) -> Iterator[tuple[str, int, int]]:
    """(path, mtime_ns, inode) of `articles/` and every directory below it."""
    stack = [articles]
    while stack:
        path = stack.pop()
        try:
            st = os.stat(path)
            it = os.scandir(path)
        except OSError:
            continue
        if now - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS:
            yield path, -1, -1
        else:
            yield path, st.st_mtime_ns, st.st_ino
        with it:
            for entry in it:
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)


def _maps(project: str, address: str, listings: dict[str, frozenset[str]]) -> bool:
    """Some file or directory of the project has this address."""
    up, _, stem = address.rpartition("/")
    names = listings.get(up)
    if names is None:
        try:
            found = os.listdir(os.path.join(project, up) if up else project)
        except OSError:
            found = []
        stems = set(found)
        for name in found:
            dot = name.rfind(".")
            if dot > 0:
                stems.add(name[:dot])
        names = listings[up] = frozenset(stems)
    return stem in names
