"""SPEC §4 (resolution from an in-memory index that must be ready fast) and §2/§12 (nothing of
ours inside the project): the parse cache of core/storage/cache.py. A stale cache must never be
served,
a damaged one is ignored, and the cache never lives inside the project or the store."""

from __future__ import annotations

import marshal
import os
import time
import zlib
from pathlib import Path

import pytest

from canon_ls.core.retrieval.links import wikilinks
from canon_ls.core.storage import cache
from canon_ls.core.storage import store as store_mod
from canon_ls.core.storage.store import Store

N = 12


def _load(file, root, racy_ns):  # the snapshot's usable entries, all records
    return {k: v for part in cache.records(file, root, racy_ns) for k, v in part.items()}


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache home; MIN_PARSED lowered so a small store writes its snapshot."""
    home = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.delenv("CANON_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "MIN_PARSED", 1)
    return home


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend every file is older than the racy window (tests must not sleep 3 s)."""
    monkeypatch.setattr("canon_ls.core.storage.freshness.RACY_NS", 0)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The addresses the store parses from disk (the real parser, counted)."""
    seen: list[str] = []
    real = store_mod.art.parse

    def counting(data: bytes | str, address: str, *rest: int) -> store_mod.Article:
        seen.append(address)
        return real(data, address, *rest)

    monkeypatch.setattr(store_mod.art, "parse", counting)
    return seen


def put(project: Path, address: str, text: str) -> Path:
    p = project / ".canon/articles" / (address + ".md")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def fill(project: Path, n: int = N) -> None:
    for i in range(n):
        put(
            project,
            f"src/m{i}",
            f"---\ncapsule: Module {i}.\nupdated: 2026-01-0{i % 9 + 1}\ntags: [a, b{i}]\n---\n"
            f"# m{i}\nSee [[src/m{(i + 1) % n}]].\n",
        )


def loaded(project: Path) -> Store:
    s = Store(project)
    s.refresh()
    return s


def snapshots(home: Path) -> list[Path]:
    return sorted((home / "canon-ls").glob("store-*.bin"))


def test_spec_4_second_load_comes_from_the_cache_and_equals_a_fresh_parse(
    project: Path, xdg: Path, settled: None, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(project)
    put(project, "bad", "---\ncapsule: [unclosed\n---\nbody\n")  # a problem survives the cache
    (project / ".canon/articles/latin1.md").write_bytes(b"---\ncapsule: caf\xe9\n---\n")
    loaded(project)
    assert len(parses) == N + 2
    assert len(snapshots(xdg)) == 1
    parses.clear()
    second = loaded(project)
    assert parses == []  # every article came from the snapshot
    monkeypatch.setenv("CANON_NO_CACHE", "1")
    fresh = loaded(project)
    assert len(parses) == N + 2
    assert second.addresses() == fresh.addresses()
    for address in fresh.addresses():
        got, want = second.article(address), fresh.article(address)
        assert got == want
        assert got is not None and want is not None
        assert (got.meta, got.problems, wikilinks(got.body)) == (
            want.meta,
            want.problems,
            wikilinks(want.body),
        )
    assert second.governing("src/m3/deep/file") == "src/m3"
    assert second.backlinks("src/m1") == ["src/m0"]


def test_spec_4_same_size_edit_with_the_old_mtime_is_reparsed(
    project: Path, xdg: Path, settled: None, parses: list[str]
) -> None:
    """An in-place edit that keeps size, inode and mtime (touch -r, sync tools, an edit within
    the mtime granularity) changes ctime, which is part of the key."""
    fill(project)
    p = project / ".canon/articles/src/m1.md"
    before = p.stat()
    loaded(project)
    new = p.read_text().replace("Module 1.", "Modulo 1.")
    deadline = time.monotonic() + 5
    while True:  # coarse ctime clocks: rewrite until the kernel shows a new ctime
        p.write_text(new)
        os.utime(p, ns=(before.st_atime_ns, before.st_mtime_ns))
        st = p.stat()
        if st.st_ctime_ns != before.st_ctime_ns or time.monotonic() > deadline:
            break
    assert (st.st_size, st.st_ino, st.st_mtime_ns) == (
        before.st_size,
        before.st_ino,
        before.st_mtime_ns,
    )
    parses.clear()
    again = loaded(project)
    assert parses == ["src/m1"]
    art = again.article("src/m1")
    assert art is not None and art.capsule == "Modulo 1."


def test_spec_4_racy_entries_are_never_cached(project: Path, xdg: Path, parses: list[str]) -> None:
    """Real racy window (3 s): files written just now are not trusted from the snapshot, so an
    edit that keeps size, inode, mtime and even ctime would still be seen."""
    fill(project)
    loaded(project)
    (file,) = snapshots(xdg)
    assert _load(file, project / ".canon", 0) == {}  # written, but without racy entries
    parses.clear()
    loaded(project)
    assert len(parses) == N  # all re-read: they were modified within the racy window
    p = project / ".canon/articles/src/m2.md"
    st = p.stat()
    p.write_text(p.read_text().replace("Module 2.", "Modulo 2."))
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    art = loaded(project).article("src/m2")
    assert art is not None and art.capsule == "Modulo 2."


def test_load_drops_entries_modified_near_the_snapshot_time(tmp_path: Path) -> None:
    root = tmp_path / "store"
    file = tmp_path / "c.bin"
    fresh_stub = Store(tmp_path)
    now = time.time_ns()
    old = now - 10 * 10**9
    article = store_mod.art.parse(b"---\ncapsule: X.\n---\n", "a")
    entries = [("old", (old, 1, 2, old), article), ("recent", (old, 1, 3, now), article)]
    assert cache.save(file, root, entries)
    got = _load(file, root, 3 * 10**9)
    assert set(got) == {"old"}
    assert set(_load(file, root, 0)) == {"old", "recent"}
    assert _load(file, tmp_path / "other-root", 0) == {}  # another store's snapshot
    assert fresh_stub.addresses() == []


def test_spec_4_deleted_added_and_replaced_files(
    project: Path, xdg: Path, settled: None, parses: list[str]
) -> None:
    fill(project)
    loaded(project)
    (project / ".canon/articles/src/m0.md").unlink()
    put(project, "src/new", "---\ncapsule: New.\n---\n")
    p = project / ".canon/articles/src/m5.md"
    st = p.stat()
    tmp = p.with_name(".m5.md.tmp")  # an editor's atomic save: new inode, same size and mtime
    tmp.write_text(p.read_text().replace("Module 5.", "Modulo 5."))
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, p)
    parses.clear()
    again = loaded(project)
    assert again.article("src/m0") is None
    assert "src/m0" not in again.addresses()
    new = again.article("src/new")
    m5 = again.article("src/m5")
    assert new is not None and new.capsule == "New."
    assert m5 is not None and m5.capsule == "Modulo 5."
    assert sorted(parses) == ["src/m5", "src/new"]


@pytest.mark.parametrize(
    "damage",
    [
        "garbage",
        "truncated",
        "bitflip",
        "empty",
        "wrong-shape",
        "wrong-version",
        "bad-entries",
        "missing-chunk",
        "not-a-chunk",
        "trailing",
    ],
)
def test_a_damaged_or_incompatible_cache_is_ignored(
    project: Path, xdg: Path, settled: None, parses: list[str], damage: str
) -> None:
    fill(project)
    loaded(project)
    (file,) = snapshots(xdg)
    data = file.read_bytes()
    head = len(cache._MAGIC)

    def record(obj: object) -> bytes:
        payload = marshal.dumps(obj)
        return len(payload).to_bytes(4, "big") + zlib.crc32(payload).to_bytes(4, "big") + payload

    def framed(head: object, *chunks: object) -> bytes:
        return cache._MAGIC + record(head) + b"".join(record(c) for c in chunks)

    root = os.path.realpath(project / ".canon")
    written = time.time_ns()
    broken = {
        "garbage": os.urandom(4096),
        "truncated": data[: len(data) // 2],
        "bitflip": data[:-40] + bytes([data[-40] ^ 1]) + data[-39:],
        "empty": b"",
        "wrong-shape": framed([1, 2, 3]),
        "wrong-version": framed((cache.VERSION + 1, cache.fingerprint(), root, written, 0)),
        "bad-entries": framed(
            (cache.VERSION, cache.fingerprint(), root, written, 1),
            {"src/m1": ("x", 1), "src/m2": ((1, 2), ()), "src/m3": None},
        ),
        "missing-chunk": framed((cache.VERSION, cache.fingerprint(), root, written, 2), {}),
        "not-a-chunk": framed((cache.VERSION, cache.fingerprint(), root, written, 1), [1]),
        "trailing": data + b"x",
    }[damage]
    assert len(data) > head
    file.write_bytes(broken)
    parses.clear()
    again = loaded(project)
    assert len(parses) == N  # everything parsed, then a good snapshot written again
    assert len(again.addresses()) == N
    art = again.article("src/m3")
    assert art is not None and art.capsule == "Module 3."
    assert _load(file, project / ".canon", 0)  # the rewrite is valid


def test_spec_2_cache_never_inside_the_project_or_store(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: None
) -> None:
    monkeypatch.setattr(cache, "MIN_PARSED", 1)
    monkeypatch.delenv("CANON_NO_CACHE", raising=False)
    fill(project)
    before = sorted(str(p) for p in project.rglob("*"))
    for inside in (project, project / "cache", project / ".canon", project / ".canon/x"):
        monkeypatch.setenv("XDG_CACHE_HOME", str(inside))
        assert cache.cache_file(project / ".canon", project) is None
        loaded(project)
    assert sorted(str(p) for p in project.rglob("*")) == before
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")  # ignored, as the XDG spec says
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(project)
    file = cache.cache_file(project / ".canon", project)
    assert file is not None and file.parent == tmp_path / "home/.cache/canon-ls"
    loaded(project)
    assert file.is_file()
    assert sorted(str(p) for p in project.rglob("*")) == before


def test_opt_out_and_small_loads_write_nothing(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: None
) -> None:
    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    fill(project)
    loaded(project)  # default MIN_PARSED: a dozen articles are not worth a snapshot
    assert not home.exists()
    monkeypatch.setattr(cache, "MIN_PARSED", 1)
    monkeypatch.setenv("CANON_NO_CACHE", "1")
    loaded(project)
    assert not home.exists()
    monkeypatch.setenv("CANON_NO_CACHE", "0")
    loaded(project)
    assert len(snapshots(home)) == 1


def test_stores_get_their_own_snapshot(tmp_path: Path, xdg: Path, settled: None) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    fill(one, 3)
    put(two, "x", "---\ncapsule: X.\n---\n")
    loaded(one)
    loaded(two)
    assert len(snapshots(xdg)) == 2
    assert loaded(two).addresses() == ["x"]
    assert loaded(one).addresses() == ["src/m0", "src/m1", "src/m2"]


def test_old_snapshots_are_pruned(project: Path, xdg: Path, settled: None) -> None:
    stale = xdg / "canon-ls/store-0123456789abcdef0123.bin"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"old")
    recent = xdg / "canon-ls/store-aaaaaaaaaaaaaaaaaaaa.bin"
    recent.write_bytes(b"recent")
    old = time.time() - (cache.PRUNE_DAYS + 1) * 86400
    os.utime(stale, (old, old))
    fill(project, 2)
    loaded(project)
    assert not stale.exists()
    assert recent.exists()


def test_spec_6_search_from_the_snapshot_sees_edits_made_while_no_process_ran(
    project: Path, xdg: Path, settled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC §6 search through the persisted index: an article edited between two processes is
    re-tokenized (its stat key changed), unchanged ones come from the snapshot, and the answers
    equal a fresh build."""
    fill(project)
    put(project, "src/alpha", "---\ncapsule: Alpha retries with backoff.\n---\n# alpha\n")
    first = Store(project)
    assert [a for a, _ in first.search_articles("backoff", 10)[0]] == ["src/alpha"]
    assert list(xdg.rglob("search-articles-*.idx")), "the first build saved a snapshot"

    put(project, "src/alpha", "---\ncapsule: Alpha now streams pages lazily.\n---\n# alpha\n")
    second = Store(project)
    assert second.search_articles("backoff", 10) == ([], 0)
    assert [a for a, _ in second.search_articles("streams", 10)[0]] == ["src/alpha"]

    monkeypatch.setenv("CANON_NO_CACHE", "1")
    fresh = Store(project)
    for query in ("alpha", "streams lazily", "article"):
        assert second.search_articles(query, 10) == fresh.search_articles(query, 10)


def test_a_cache_file_is_written_in_pieces(tmp_path: Path):
    """Issue 15: a header and a big payload are written in turn, never joined in memory
    first (a second copy of the payload); the file holds them end to end."""
    from canon_ls.core.storage.cache import write_file

    file = tmp_path / "cache" / "x.bin"
    assert write_file(file, (b"head", b"", b"payload" * 1000))
    assert file.read_bytes() == b"head" + b"payload" * 1000
    assert write_file(file, b"whole")
    assert file.read_bytes() == b"whole"


def test_a_snapshot_in_many_records_loads_whole(
    project: Path, xdg: Path, settled: None, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 15: the snapshot is written and read a record of CHUNK articles at a time (never
    whole in memory); every record comes back, and a file missing one is not trusted."""
    monkeypatch.setattr(cache, "CHUNK", 5)  # 12 articles: records of 5, 5 and 2
    fill(project)
    first = loaded(project)
    (file,) = snapshots(xdg)
    parses.clear()
    again = loaded(project)
    assert parses == []
    assert [again.article(a) for a in again.addresses()] == [
        first.article(a) for a in first.addresses()
    ]
    data = file.read_bytes()
    starts, at = [], len(cache._MAGIC)
    while at < len(data):  # each record: 4 bytes of length, 4 of CRC, the marshal bytes
        starts.append(at)
        at += 8 + int.from_bytes(data[at : at + 4], "big")
    assert len(starts) == 4  # the head and three records of articles
    file.write_bytes(data[: starts[-1]])  # the last record gone
    assert _load(file, project / ".canon", 0) == {}


def test_a_damaged_record_costs_only_its_own_articles(
    project: Path, xdg: Path, settled: None, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store reads the snapshot a record at a time (never whole): records before a
    damaged one are used, the articles of the damaged one and after are parsed again."""
    monkeypatch.setattr(cache, "CHUNK", 4)
    fill(project)
    loaded(project)
    (file,) = snapshots(xdg)
    data = file.read_bytes()
    file.write_bytes(data[:-40] + bytes([data[-40] ^ 1]) + data[-39:])  # in the last record
    parses.clear()
    again = loaded(project)
    assert len(parses) == 4  # the last record's articles, nothing else
    assert len(again.addresses()) == N
    art = again.article("src/m3")
    assert art is not None and art.capsule == "Module 3." and art.targets == ("src/m4",)


def test_a_project_s_own_cache_file_is_named_for_any_path(tmp_path: Path) -> None:
    """The history and rename caches are named by the project's path: a path that is not UTF-8
    (surrogate-escaped, as os.fsdecode gives it) names one too instead of failing the check."""
    project_cache_file = cache.project_cache_file
    odd = tmp_path / "caf\udce9"
    first = project_cache_file(odd, "renames", tmp_path / "c")
    assert first is not None and first.parent == tmp_path / "c"
    assert first.name.startswith("renames-") and first != project_cache_file(
        tmp_path, "renames", tmp_path / "c"
    )
