"""A persistent parse cache for a store's articles, so a new process is ready in a blink."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import marshal
import os
import sys
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from canon_ls.core.storage import article as art
from canon_ls.core.storage import fsio, layout, seal
from canon_ls.core.storage.article import Article

VERSION = 2  # 2: no bodies (read from the files on demand), link targets and body length
MIN_PARSED = 500  # write a snapshot only after parsing this many files in one process
PRUNE_DAYS = 60  # snapshots not rewritten for this long are deleted when another is written
_MAGIC = b"canon-ls store cache 2\n"
CHUNK = 50  # articles per record: saving or loading never holds the whole snapshot's bytes,
# and the server's load between requests reads one record per step (250 took 2-5 ms a step,
# a hover arriving then waited for it)
_Key = tuple[int, int, int, int]  # (mtime_ns, size, inode, ctime_ns), as Store scans them
_Entry = tuple[_Key, tuple[Any, ...]]  # key, Article fields after the address


def cache_file(store_root: Path, project: Path, kind: str = "store") -> Path | None:
    """The snapshot file for a store (`kind`: "store" or "journal"), or None where there is no
    cache directory (layout.cache_dir)."""
    directory = layout.cache_dir(store_root, project)
    if directory is None:
        return None
    root = os.path.realpath(store_root)
    key = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:20]
    return Path(directory) / f"{kind}-{key}.bin"


def project_cache_dir(project: Path) -> Path | None:
    """The directory of a project's own caches (git's history, its renames), under
    `cache_file`'s rules: None when opted out or it would lie inside the project."""
    file = cache_file(Path(project) / ".canon", Path(project))
    return None if file is None else file.parent


def project_cache_file(project: Path, kind: str, directory: Path | None = None) -> Path | None:
    """`<kind>-<key>.bin` of this project in `directory` (the project's cache directory by
    default); None when there is none."""
    folder = project_cache_dir(project) if directory is None else directory
    if folder is None:
        return None
    real = os.path.realpath(project).encode("utf-8", "surrogateescape")
    return folder / f"{kind}-{hashlib.sha256(real).hexdigest()[:20]}.bin"


# The modules whose code decides what a cached article holds (parser, store's read path, this,
# and the wikilink grammar and address rule behind its kept link targets).
_SOURCES = (
    "canon_ls.core.storage.article",
    "canon_ls.core.storage.yaml_subset",
    "canon_ls.core.storage.index",
    "canon_ls.core.storage.cache",
    "canon_ls.core.storage.freshness",
    "canon_ls.core.retrieval.links",
    "canon_ls.core.storage.address",
)


@functools.cache
def fingerprint(sources: tuple[str, ...] = _SOURCES) -> bytes:
    """Changes whenever a cached article could differ from a fresh parse: the sources (of
    core/), the field list, the YAML library (its `__init__` holds the version; hashed, not
    imported: a read that parses no YAML never pays for it), the Python version (marshal)."""
    digest = hashlib.sha256(f"{VERSION} {art.FIELDS}".encode())
    digest.update(repr(tuple(sys.version_info)).encode())
    for name in (*sources, "yaml"):
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        with open(spec.origin, "rb") as fh:
            digest.update(fh.read())
    return digest.digest()


def records(file: Path | None, store_root: Path, racy_ns: int) -> Iterator[dict[str, _Entry]]:
    """The snapshot's usable entries one record (CHUNK articles) at a time, so a store loads from it
    without ever holding it whole (~20 MB of entries at 50k articles)."""
    if file is None:
        return
    try:
        with fsio.open_regular(file) as fh:
            header = _header(fh, store_root)
            if header is None or not _whole(fh, header[1]):
                return
            written, chunks = header
            for _ in range(chunks):
                payload = read_record(fh)
                part = marshal.loads(payload) if payload is not None else None
                if not isinstance(part, dict):
                    return
                kept: dict[str, _Entry] = {}
                _keep(part, written - racy_ns, kept)
                del part
                yield kept
    except (OSError, ValueError, TypeError, EOFError):
        return


def usable(file: Path | None, store_root: Path) -> bool:
    """Whether `records` would read this snapshot (of this version, code and store, and
    whole); its records' contents are not read."""
    if file is None:
        return False
    try:
        with fsio.open_regular(file) as fh:
            header = _header(fh, store_root)
            return header is not None and _whole(fh, header[1])
    except (OSError, ValueError, TypeError, EOFError):
        return False


def _header(fh: Any, store_root: Path) -> tuple[int, int] | None:
    """(when written, how many records) from a snapshot's opening, or None when it is not
    one of this version, this code and this store."""
    if fh.read(len(_MAGIC)) != _MAGIC:
        return None
    head = read_record(fh)
    if head is None:
        return None
    version, stamp, root, written, chunks = marshal.loads(head)
    if (
        version != VERSION
        or stamp != fingerprint()
        or root != os.path.realpath(store_root)
        or not isinstance(written, int)
        or not isinstance(chunks, int)
    ):
        return None
    return written, chunks


def _whole(fh: Any, chunks: int) -> bool:
    """Whether `chunks` records follow and end the file (lengths walked, not read); fh stays put."""
    start = fh.tell()
    end = os.fstat(fh.fileno()).st_size
    for _ in range(chunks):
        head = fh.read(8)
        if len(head) != 8:
            return False
        fh.seek(int.from_bytes(head[:4], "big"), os.SEEK_CUR)
    whole: bool = fh.tell() == end
    fh.seek(start)
    return whole


def _keep(part: dict[str, Any], limit: int, kept: dict[str, _Entry]) -> None:
    """The well-formed entries of a record whose file was settled when it was written."""
    for address, entry in part.items():
        try:
            key, values = entry
            if len(key) == 4 and len(values) == _FIELDS and max(key[0], key[3]) < limit:
                kept[address] = entry
        except (TypeError, IndexError, ValueError):
            continue


def restore(
    address: str, values: tuple[Any, ...], source: art.BodySource | None, key: _Key | None = None
) -> Article:
    """A lean Article from a snapshot entry's fields, its body read through `source`."""
    (capsule, updated, scope, title, meta, problems, body_line, mtime_ns, size, targets, chars) = (
        values
    )
    if key is not None and (key[0], key[1]) == (mtime_ns, size):
        mtime_ns, size = key[0], key[1]
    return art.make(
        address,
        capsule,
        updated,
        scope,
        title,
        None,
        meta,
        problems,
        body_line,
        mtime_ns,
        size,
        targets,
        chars,
        source,
    )


def fields_of(article: Article) -> tuple[Any, ...]:
    """The fields a snapshot keeps for an article: everything but its address and body."""
    return (
        article.capsule,
        article.updated,
        article.scope,
        article.title,
        article.meta,
        article.problems,
        article.body_line,
        article.mtime_ns,
        article.size,
        article.targets,
        article.body_chars,
    )


_FIELDS = 11  # len(fields_of(...))


def save(file: Path | None, store_root: Path, entries: Iterable[tuple[str, _Key, Article]]) -> bool:
    """Write the snapshot atomically (temp file + rename); False when it could not be written
    (unwritable directory, a value marshal cannot hold). Never raises."""
    if file is None:
        return False
    items = list(entries)
    written = time.time_ns()
    chunks = -(-len(items) // CHUNK)
    try:
        head = marshal.dumps(
            (VERSION, fingerprint(), os.path.realpath(store_root), written, chunks)
        )
    except (ValueError, OSError):
        return False

    def records() -> Iterator[bytes]:
        yield _MAGIC
        yield from record(head)
        for start in range(0, len(items), CHUNK):
            chunk = items[start : start + CHUNK]
            part = {address: (key, fields_of(article)) for address, key, article in chunk}
            yield from record(marshal.dumps(part))  # a value marshal refuses: nothing written

    if not write_file(file, records()):
        return False
    _prune(file)
    return True


def record(payload: bytes) -> tuple[bytes, bytes]:
    """A cache record: its length and CRC-32 (checked before marshal sees the bytes), the bytes."""
    return len(payload).to_bytes(4, "big") + zlib.crc32(payload).to_bytes(4, "big"), payload


def read_record(fh: Any) -> bytes | None:
    head = fh.read(8)
    if len(head) != 8:
        return None
    size, crc = int.from_bytes(head[:4], "big"), int.from_bytes(head[4:], "big")
    payload: bytes = fh.read(size)
    return payload if len(payload) == size and zlib.crc32(payload) == crc else None


def read_sealed(file: Path | None, limit: int = 1 << 31) -> Any:
    """The value a sealed marshal cache file holds; None when it is absent, not a regular file
    (a FIFO left in its place hangs nothing), damaged or cut short. Every such cache reads here."""
    try:
        payload = seal.unsealed(fsio.read_regular(file or "", limit)[0])
        return None if payload is None else marshal.loads(payload)
    except (OSError, ValueError, TypeError, EOFError):
        return None


def write_sealed(file: Path, value: Any) -> bool:
    """`value` (plain data) sealed into `file`, for read_sealed; never raises."""
    try:
        return write_file(file, seal.sealed(marshal.dumps(value)))
    except ValueError:  # marshal: not plain data
        return False


def write_file(file: Path, data: fsio.Data) -> bool:
    """Replace a cache file atomically without fsync (a lost cache is rebuilt), so no reader sees
    half of one; False when it could not be written. Shared by every cache; never raises."""
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        fsio.atomic_write(file, data, 0o600, durable=False)
    except (OSError, ValueError):
        return False
    return True


def _prune(keep: Path) -> None:
    """Delete snapshots nobody rewrote for PRUNE_DAYS (stores that are gone, temp projects)."""
    cutoff = time.time() - PRUNE_DAYS * 86400
    with contextlib.suppress(OSError), os.scandir(keep.parent) as it:
        for entry in it:  # temp files of writers killed mid-write (only the tool's own)
            if fsio.is_temp(entry.name):
                fsio.sweep(entry.path)
    for entry in _snapshots(keep.parent):
        if entry.path != str(keep):
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)


def _snapshots(directory: Path) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as it:
            names = ("store-", "journal-", "evidence-")
            yield from (e for e in it if e.name.endswith(".bin") and e.name.startswith(names))
    except OSError:
        return


def entries_of(
    index: Mapping[str, Article], keys: Mapping[str, _Key], racy: set[str]
) -> Iterator[tuple[str, _Key, Article]]:
    """The store's settled entries: own articles with a stat key, not racy."""
    for address, key in keys.items():
        article = index.get(address)
        if article is not None and address not in racy:
            yield address, key, article
