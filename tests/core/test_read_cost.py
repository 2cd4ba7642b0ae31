"""SPEC §6 read (the journal line, the governing article) and §4 (resolution must not cost a
walk): a read about one article in a new process parses a bounded number of journal entries
and never loads the whole store. The journal's entries persist in a sealed cache file beside
the parse cache (core/storage/journal_index.py); an entry another tool adds or deletes shows at
once,
and a damaged cache file costs a full read, never a wrong answer."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from canon_ls.core import tool
from canon_ls.core.storage import cache
from canon_ls.core.storage import journal_index as ji
from canon_ls.core.storage.store import Store

N = 60  # entries about src/a (more than the cache's minimum)


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.delenv("CANON_NO_CACHE", raising=False)
    monkeypatch.setattr("canon_ls.core.storage.freshness.RACY_NS", 0)  # files count as settled
    return home


@pytest.fixture
def journal(project: Path, xdg: Path) -> Path:
    """A store with articles src and src/a and N entries about src/a, read once (the
    process that fills the cache file)."""
    store = Store(project)
    for address in ("src", "src/a"):
        tool.run(store, {"action": "write", "path": address, "capsule": f"{address} here."})
    for i in range(N):
        tool.run(store, {"action": "journal", "body": f"Step {i}.", "subject": ["src/a"]})
    past = os.stat(project / ".canon/journal").st_mtime - 60  # any later change moves it
    os.utime(project / ".canon/journal", (past, past))
    read(project)
    return project / ".canon/journal"


def read(project: Path, path: str = "src/a") -> tuple[str, Store]:
    """A read as a new process makes it: a new Store, one tool call."""
    store = Store(project)
    result = tool.run(store, {"action": "read", "path": path})
    assert result.code == 0, result.text
    return result.text, store


def parsed(store: Store) -> int:
    return store._journal.parsed


def journal_line(text: str) -> str:
    return text.splitlines()[-1]


def test_spec_6_read_in_a_new_process_parses_no_entry_and_loads_no_store(
    project: Path, journal: Path
) -> None:
    text, store = read(project)
    assert parsed(store) == 0
    assert not store.loaded  # one article file read, not the whole store
    assert text.startswith("src/a\ncapsule: src/a here.")
    assert journal_line(text).endswith(f"and {N - 3} earlier")
    text, store = read(project, "src/b.py")  # an ancestor answers, still from the disk
    assert text.startswith("src governs src/b") and not store.loaded


def test_spec_6_an_entry_added_or_deleted_by_another_tool_shows_at_once(
    project: Path, journal: Path
) -> None:
    newest = sorted(os.listdir(journal))[-1]
    (journal / newest).unlink()
    (journal / "2099-01-01-pi.md").write_text(
        "---\nsubject: [src/a]\nlogged: 2099-01-01T00:00:00Z\nharness: pi\n---\nBy pi.\n", "utf-8"
    )
    text, store = read(project)
    assert parsed(store) == 1  # only the new file
    line = journal_line(text)
    assert line.startswith("journal: 2099-01-01-pi.md, ") and newest not in line
    assert line.endswith(f"and {N - 3} earlier")
    text, store = read(project)  # the cache file now holds it
    assert parsed(store) == 0 and journal_line(text) == line


def test_spec_6_a_read_when_no_entry_came_or_went_lists_no_journal(
    project: Path, journal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The subjects files keep the directory's settled stat key: while it holds, no entry came
    or went, so a read loads the one shard holding its subject and lists nothing (25k names
    listed and compared took ~20 ms)."""
    expected, _ = read(project)
    listed: list[str] = []
    real = os.listdir

    def listdir(path: str | Path = ".") -> list[str]:
        listed.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    text, store = read(project)
    assert text == expected and parsed(store) == 0
    assert not [p for p in listed if Path(p) == journal], listed


def test_spec_6_a_new_entry_costs_the_shards_it_falls_in_not_all(
    project: Path, journal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry another tool added moves the journal folder's key: the next read lists the
    names, reads the new entry, and loads and rewrites only the shards of its own subject and
    the new entry's (2 of 16), not all 5 MB of them at 25k entries; every subject stays right."""
    expected, _ = read(project)
    (journal / "2099-01-01-pi.md").write_text("---\nsubject: [src/b]\n---\nBy pi.\n", "utf-8")
    loaded: list[str] = []
    real = cache.read_sealed

    def read_sealed(file: Path) -> object:
        loaded.append(Path(file).name)
        return real(file)

    with monkeypatch.context() as m:
        m.setattr(cache, "read_sealed", read_sealed)
        text, store = read(project)
    shards = [n for n in loaded if re.search(r"-subjects\.\d+\.bin$", n)]
    assert text == expected and parsed(store) == 1 and 1 <= len(shards) <= 2, loaded
    assert Store(project).journal_names("src/b") == ["2099-01-01-pi.md"]
    assert read(project)[0] == expected
    with monkeypatch.context() as m:
        m.setenv("CANON_NO_CACHE", "1")
        assert Store(project).journal_names("src/b") == ["2099-01-01-pi.md"]


@pytest.mark.parametrize("part", ["", ".known", ".shard"])
@pytest.mark.parametrize("damage", ["flipped", "cut", "garbage", "foreign"])
def test_spec_6_a_damaged_journal_cache_costs_time_never_a_wrong_answer(
    project: Path, journal: Path, damage: str, part: str
) -> None:
    """The head (which names its shards), the list of known names, or the shard holding src/a;
    the names are read only when an entry came or went, so here one is added too."""
    expected, _ = read(project)
    file = cache.cache_file(project / ".canon", project, "journal")
    assert file is not None
    if part == ".shard":
        part = ji.shard_of("src/a")
    subjects = file.with_name(file.stem + f"-subjects{part}.bin")  # each subject's entries
    data = subjects.read_bytes()
    subjects.write_bytes(
        {
            "flipped": data[:-5] + bytes([data[-5] ^ 1]) + data[-4:],
            "cut": data[: len(data) // 2],
            "garbage": b"\0" * 40,
            "foreign": cache.fingerprint(),  # not even a sealed file
        }[damage]
    )
    (journal / "2099-01-01-pi.md").write_text("---\nsubject: [src/b]\n---\nBy pi.\n", "utf-8")
    text, store = read(project)
    assert text == expected
    assert parsed(store) >= N + 1  # read again from the files (the new one maybe twice)


def test_spec_6_search_of_the_journal_reads_bodies_of_cached_entries(
    project: Path, journal: Path
) -> None:
    store = Store(project)
    result = tool.run(store, {"action": "search", "query": "Step 42", "journal": True})
    assert "Step 42." in result.text


def test_a_short_journal_writes_no_cache_file(project: Path, xdg: Path) -> None:
    store = Store(project)
    tool.run(store, {"action": "journal", "body": "One.", "subject": ["src/a"]})
    read(project)
    assert ji.JournalIndex.MIN_ENTRIES > 1
    assert not list((xdg / "canon-ls").glob("journal-*.bin"))


def test_spec_6_write_and_journal_about_one_article_do_not_load_the_store(
    project: Path, journal: Path
) -> None:
    store = Store(project)
    body = "Calls [[src]] and [[src/gone]]."
    result = tool.run(store, {"action": "write", "path": "src/a", "body": body})
    assert result.code == 0 and not store.loaded
    assert "src/gone" in result.text and "[[src]]" not in result.text  # the link lint, from disk
    store = Store(project)
    result = tool.run(store, {"action": "journal", "body": "Set to 42 ms.", "subject": ["src/a"]})
    assert result.code == 0 and not store.loaded
    assert "src/a lacks 42" in result.text
    assert read(project)[0].startswith("src/a\ncapsule: src/a here.")


def test_spec_6_map_of_one_folder_reads_only_its_articles(project: Path, journal: Path) -> None:
    """SPEC §6 map {path}: the folder's articles, read from their files alone (a 50k-article
    store is not loaded to list one folder); the lines are those of a loaded store."""
    tool.run(Store(project), {"action": "write", "path": "docs/guide", "capsule": "Guide."})
    store = Store(project)
    text = tool.run(store, {"action": "map", "path": "src"}).text
    assert text == "src: src here.\nsrc/a: src/a here."
    assert not store.loaded
    loaded = Store(project)
    loaded.load()
    assert tool.run(loaded, {"action": "map", "path": "src"}).text == text


def test_spec_6_read_of_an_orphan_asks_its_question_without_loading_the_store(
    project: Path, journal: Path
) -> None:
    """SPEC §6 read, §6.1 item 5: "some address ever mapped" is answered by an ancestor's
    article that maps (src here), not by loading every article."""
    (project / "src").mkdir()
    tool.run(Store(project), {"action": "write", "path": "src/gone", "capsule": "Was here."})
    text, store = read(project, "src/gone")
    assert "Orphan: no file or directory maps to src/gone." in text
    assert not store.loaded
