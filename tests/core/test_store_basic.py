"""SPEC §2, §4, §6: read/write/journal/map through the store and the tool, on real files."""

from __future__ import annotations

from pathlib import Path

from canon_ls.core import tool
from canon_ls.core.storage.store import Store
from tests.conftest import TODAY, make_files


def run(store: Store, **action: object) -> tool.ToolResult:
    return tool.run(store, action)


def test_spec_2_nothing_created_by_reading(store: Store, project: Path) -> None:
    """SPEC §2: reads, map and search on a missing store answer with a sentence."""
    for action in (
        {"action": "read", "path": "src/a.ts"},
        {"action": "map"},
        {"action": "search", "query": "x"},
    ):
        result = tool.run(store, action)
        assert result.code == 0 and result.text
    assert not (project / ".canon").exists()


def test_spec_6_write_then_read(store: Store, project: Path) -> None:
    """SPEC §6 write/read: the title line, capsule, updated, body; schema.json defaults."""
    make_files(project, "src/core/config.ts")
    result = run(
        store,
        action="write",
        path="src/core/config.ts",
        capsule="Loads config.",
        body="# Config\nText.",
    )
    assert result.code == 0
    assert result.text.splitlines()[0] == "Wrote src/core/config."
    file = project / ".canon/articles/src/core/config.md"
    assert file.read_text() == (
        f"---\ncapsule: Loads config.\nupdated: {TODAY}\n---\n# Config\nText.\n"
    )
    assert (project / ".canon/schema.json").is_file()
    text = run(store, action="read", path="src/core/config.ts").text
    lines = text.splitlines()
    assert lines[0] == "src/core/config"
    assert "capsule: Loads config." in lines
    assert f"updated: {TODAY}" in lines
    assert "# Config" in lines


def test_spec_4_ancestor_governs(store: Store, project: Path) -> None:
    """SPEC §4 / §6 read: '<ancestor> governs <address>' when an ancestor answers."""
    run(store, action="write", path="src/feed.md", capsule="The feed.")
    text = run(store, action="read", path="src/feed/deep/item.ts").text
    assert text.splitlines()[0] == "src/feed governs src/feed/deep/item"
    assert store.governing("src/feed/deep/item") == "src/feed"
    assert store.governing("src/other") is None


def test_spec_6_read_miss_invites_write(store: Store) -> None:
    """SPEC §6 read: a miss is one sentence naming the address and inviting a write."""
    run(store, action="write", path="docs/a.md", capsule="A.")
    result = run(store, action="read", path="src/x.ts")
    assert result.code == 0
    assert "src/x" in result.text and "write" in result.text
    assert result.text.count("\n") == 0


def test_spec_6_journal_and_index(store: Store, project: Path) -> None:
    """SPEC §6 journal + read's journal index (newest three, exact subject)."""
    run(store, action="write", path="src/a.ts", capsule="A.")
    names = []
    for i in range(4):
        r = run(store, action="journal", body=f"Step {i} done", subject=["src/a.ts"])
        assert r.code == 0
        names.append(r.text.split("/")[-1].rstrip("."))
    run(store, action="journal", body="About b", subject=["src/a/b.ts"])
    text = run(store, action="read", path="src/a.ts").text
    last = text.splitlines()[-1]
    assert last.startswith("journal: ") and last.endswith(" and 1 earlier")
    shown = last[len("journal: ") : -len(" and 1 earlier")].split(", ")
    assert len(shown) == 3
    assert set(shown) <= set(names)
    assert "about-b" not in last


def test_spec_6_map_segment_aware(store: Store) -> None:
    """SPEC §6 map: sorted 'address: capsule', segment-aware prefix, no cap."""
    for p in ("src/core/b.ts", "src/core/a.ts", "src/cored.ts", "docs/x.md"):
        run(store, action="write", path=p, capsule=f"cap {p}")
    assert run(store, action="map").text.splitlines() == [
        "docs/x: cap docs/x.md",
        "src/core/a: cap src/core/a.ts",
        "src/core/b: cap src/core/b.ts",
        "src/cored: cap src/cored.ts",
    ]
    assert run(store, action="map", path="src/core").text.splitlines() == [
        "src/core/a: cap src/core/a.ts",
        "src/core/b: cap src/core/b.ts",
    ]
    assert "No article" in run(store, action="map", path="src/co").text
