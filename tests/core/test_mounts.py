"""SPEC §8 mounts and project options; SPEC §2 project root discovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from canon_ls.core import tool
from canon_ls.core.storage.project import OptionError, find_project, open_store
from tests.conftest import TODAY


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    d = tmp_path / "data" / "lake"
    (d / ".canon" / "articles").mkdir(parents=True)
    (d / "prices.csv").write_text("a,b\n")
    (d / ".canon/articles/prices.md").write_text("---\ncapsule: Daily prices.\n---\nbody\n")
    return d


def test_spec_8_mount_serves_articles(project: Path, lake: Path) -> None:
    """SPEC §8: /data/lake serves its articles as lake:prices, by name or absolute path."""
    store = open_store(project, {"mounts": [str(lake)]})
    assert store.mounts == {"lake": lake}
    assert tool.run(store, {"action": "map"}).text == "lake:prices: Daily prices."
    for path in ("lake:prices", "lake:prices.csv", str(lake / "prices.csv")):
        r = tool.run(store, {"action": "read", "path": path})
        assert r.text.splitlines()[0] == "lake:prices", path
    assert store.governing("lake:prices/2026/x") == "lake:prices"
    r = tool.run(store, {"action": "search", "query": "daily"})
    assert "lake:prices" in r.text
    tool.run(store, {"action": "write", "path": "src/a.ts", "capsule": "Project article."})
    for prefix in ("lake:", str(lake), str(lake) + "/"):
        assert tool.run(store, {"action": "map", "path": prefix}).text == (
            "lake:prices: Daily prices."
        ), prefix


def test_spec_8_mount_write_and_journal_location(project: Path, lake: Path) -> None:
    """SPEC §8: writes to mount addresses land in the mount's store; journal entries always
    land in the project store."""
    store = open_store(project, {"mounts": [str(lake)]})
    r = tool.run(store, {"action": "write", "path": str(lake / "volumes.csv"), "capsule": "Vol."})
    assert r.text.startswith("Wrote lake:volumes."), r.text
    assert (lake / ".canon/articles/volumes.md").is_file()
    assert not (project / ".canon/articles").exists()
    r = tool.run(store, {"action": "journal", "body": "Lake loaded", "subject": ["lake:prices"]})
    assert r.code == 0
    entries = list((project / ".canon/journal").iterdir())
    assert len(entries) == 1 and not (lake / ".canon/journal").exists()
    assert 'subject: ["lake:prices"]\n' in entries[0].read_text()
    assert store.journal_names("lake:prices")[:3] == [f"{TODAY}-lake-loaded.md"]


def test_spec_8_two_projects_share_a_mount(tmp_path: Path, lake: Path, today: str) -> None:
    """SPEC §8: two workspaces mounting the same directory share one store."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    sa = open_store(a, {"mounts": [str(lake)]})
    sb = open_store(b, {"mounts": [str(lake)]})
    tool.run(sa, {"action": "write", "path": "lake:prices", "capsule": "Shared."})
    assert "capsule: Shared." in tool.run(sb, {"action": "read", "path": "lake:prices"}).text


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"mount": ["/x"]}, "mount"),
        ({"colour": "red"}, "colour"),
        ({"root": 5}, "root"),
        ({"mounts": "/data/lake"}, "mounts"),
        ({"retrieval": "semantic"}, "retrieval"),
        ({"standout": 0.5}, "standout"),
    ],
)
def test_spec_8_unknown_or_bad_option_names_key(project: Path, options: dict, named: str) -> None:
    """SPEC §8: any other option key is an error at startup that names the key."""
    with pytest.raises(OptionError) as info:
        open_store(project, options)
    assert named in str(info.value)


def test_spec_2_root_option(project: Path) -> None:
    """SPEC §2: option root, absolute or relative to the project."""
    store = open_store(project, {"root": "memory/store"})
    tool.run(store, {"action": "write", "path": "a.ts", "capsule": "A."})
    assert (project / "memory/store/articles/a.md").is_file()
    assert not (project / ".canon").exists()


def test_spec_2_find_project(tmp_path: Path) -> None:
    """SPEC §2: the nearest ancestor holding .canon/, else the start directory."""
    (tmp_path / "p/.canon").mkdir(parents=True)
    (tmp_path / "p/src/deep").mkdir(parents=True)
    assert find_project(tmp_path / "p/src/deep") == tmp_path / "p"
    (tmp_path / "q").mkdir()
    assert find_project(tmp_path / "q") == tmp_path / "q"


def test_spec_8_mount_articles_are_judged_by_the_mounts_schema(project: Path, lake: Path) -> None:
    """SPEC §8: a mount has its own `.canon/` — its schema.json judges its articles (check,
    read); the project's schema keeps judging project articles."""
    from canon_ls.core.checking import check

    (lake / ".canon/schema.json").write_text(
        '{"schema_version": 1, "article": {"capsule": {"max_chars": 5}}}'
    )
    store = open_store(project, {"mounts": [str(lake)]})
    tool.run(store, {"action": "write", "path": "src/a.ts", "capsule": "Daily prices."})
    findings = check.check(store, staleness=False)
    schema_hits = {f.address for f in findings if f.code.startswith("schema")}
    assert schema_hits == {"lake:prices"}, findings
    assert "schema:" in tool.run(store, {"action": "read", "path": "lake:prices"}).text
    assert "schema:" not in tool.run(store, {"action": "read", "path": "src/a"}).text
    one = check.article_findings(store, "lake:prices")
    assert any(f.code.startswith("schema") for f in one)


def test_spec_4_8_the_disk_reader_answers_as_the_loaded_store(project: Path, lake: Path) -> None:
    """SPEC §3, §4, §8: the store's one read side (core/storage/reader.py). DiskReader, which
    the hooks resolve through without loading anything, answers what the loaded Store answers,
    a mount's addresses included."""
    from canon_ls.core.storage.reader import DiskReader

    (project / ".canon/articles/rules").mkdir(parents=True)
    (project / ".canon/articles/rules/ts.md").write_text(
        '---\ncapsule: Typed.\nscope: rule\napplies: ["**/*.ts"]\n---\nbody\n', "utf-8"
    )
    store = open_store(project, {"mounts": [str(lake)]})
    tool.run(store, {"action": "write", "path": "src/core", "capsule": "Core."})
    tool.run(store, {"action": "write", "path": "src", "capsule": "Source.", "scope": "rule"})
    tool.run(store, {"action": "journal", "body": "Core moved", "subject": ["src/core"]})
    reader = DiskReader(store.project, store.root, store.mounts)
    assert not hasattr(reader, "load")  # nothing to load: each answer a stat or one file
    asked = ["src/core/x.ts", "src/core", "src/other", "docs/a", "lake:prices/2026", "lake:none"]
    for address in asked:
        assert reader.governing(address) == store.governing(address), address
        assert reader.has(address) == store.has(address), address
    for address in ("src/core", "src", "lake:prices"):
        ours, theirs = reader.article(address), store.article(address)
        assert ours is not None and theirs is not None, address
        assert (ours.capsule, ours.scope, ours.body) == (theirs.capsule, theirs.scope, theirs.body)
    assert reader.address_of("lake:prices.csv") == store.address_of("lake:prices.csv")
    assert reader.journal_names("src/core") == store.journal_names("src/core")
    assert reader.rules_for("src/core/x.ts") == store.rules_for("src/core/x.ts") == ["rules/ts"]
