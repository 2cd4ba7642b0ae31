"""SPEC §12: special files are never opened for reading, deep nesting degrades to a finding or
a sentence (never RecursionError), and the tool deletes only its own old temp files.

Each class has a generator: every place the store reads a file gets a FIFO; directories,
JSON and YAML are nested at several depths.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from deep_tree import make_deep as _deep_dirs
from deep_tree import remove_deep

from canon_ls.core import tool
from canon_ls.core.checking import assets, check
from canon_ls.core.storage.store import Store

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")

ACTIONS = [
    {"action": "read", "path": "src/a.ts"},
    {"action": "map"},
    {"action": "search", "query": "alpha"},
    {"action": "search", "query": "alpha", "journal": True},
    {"action": "write", "path": "src/a.ts", "capsule": "Changed."},
    {"action": "write", "path": "src/b.ts", "capsule": "B.", "body": "# b\n\nB body.\n"},
    {"action": "journal", "body": "Something happened.", "subject": ["src/a.ts"]},
]

# Every file the store reads, relative to the project.
FIFO_PLACES = [
    ".canon/schema.json",
    ".canon/articles/src/a.md",
    ".canon/articles/src/b.md",
    ".canon/articles/deep/er/c.md",
    ".canon/journal/2026-01-01-entry.md",
    f".canon/journal/{'2026-11-29'}-something-happened.md",
]


def _store_with_fifo(project: Path, place: str) -> None:
    articles = project / ".canon/articles"
    (articles / "src").mkdir(parents=True)
    (project / "src").mkdir()
    (project / "src/a.ts").write_text("export {}\n")
    (project / ".canon/journal").mkdir()
    (project / ".canon/journal/2026-01-02-real.md").write_text(
        "---\ndate: 2026-01-02\nsubject:\n  - src/a\n---\nalpha entry\n"
    )
    if place != ".canon/articles/src/a.md":
        (articles / "src/a.md").write_text("---\ncapsule: Alpha.\n---\n# a\n\nalpha body\n")
    if place != ".canon/schema.json":
        (project / ".canon/schema.json").write_text('{"schema_version": 1}\n')
    fifo = project / place
    fifo.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(fifo)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("place", FIFO_PLACES)
def test_spec_12_a_fifo_anywhere_in_the_store_never_hangs(project: Path, place: str) -> None:
    """SPEC §12: a FIFO wherever the store reads a file: every action answers (a sentence
    when it cannot act), the check answers, and the FIFO is still there afterwards."""
    _store_with_fifo(project, place)
    for action in ACTIONS:
        r = tool.run(Store(project), action)
        assert "Traceback" not in r.text
        assert r.text.strip(), action
        if action["action"] == "write" and place.endswith(action["path"][:-3] + ".md"):  # type: ignore[index]
            assert r.code == 2 and "not a regular file" in r.text, r.text
    findings = check.check(Store(project))
    assert isinstance(findings, list)
    assert (project / place).is_fifo()


def test_spec_12_fifo_schema_reads_as_malformed(project: Path) -> None:
    """A FIFO at schema.json is not a contract: rules fail open and loud."""
    _store_with_fifo(project, ".canon/schema.json")
    r = tool.run(Store(project), {"action": "write", "path": "src/a.ts", "capsule": "Changed."})
    assert r.code == 0
    assert "schema.json" in r.text and "not a regular file" in r.text, r.text


# -- temp files ------------------------------------------------------------------------------


def test_spec_12_read_keeps_users_tmp_files(project: Path) -> None:
    """SPEC §12: a read never deletes a file the tool did not create: an hour-old
    `.ideas.md.draft.tmp` under articles/ survives `read`, `map` and a fresh load."""
    store = Store(project)
    store.write("src/a.ts", capsule="A.")
    draft = project / ".canon/articles/.ideas.md.draft.tmp"
    draft.write_text("my draft")
    hour_ago = time.time() - 3600
    os.utime(draft, (hour_ago, hour_ago))
    for action in ({"action": "read", "path": "src/a.ts"}, {"action": "map"}):
        tool.run(Store(project), action)
    assert draft.read_text() == "my draft"


# -- deep nesting ----------------------------------------------------------------------------


@pytest.mark.timeout(120)
@pytest.mark.parametrize("depth", [200, 1000])
def test_spec_12_deep_articles_directory(project: Path, depth: int) -> None:
    """SPEC §12: a 1,000-deep directory under articles/: load, read, map and check answer."""
    articles = project / ".canon/articles"
    (articles / "src").mkdir(parents=True)
    (articles / "src/a.md").write_text("---\ncapsule: Alpha.\n---\nalpha\n")
    _deep_dirs(articles, depth)
    try:
        store = Store(project)
        assert "src/a" in store.addresses()
        for action in ({"action": "map"}, {"action": "read", "path": "src/a.ts"}):
            r = tool.run(store, action)
            assert r.code == 0 and "Alpha." in r.text
        assert isinstance(check.check(store), list)
    finally:
        remove_deep(articles, "d")


@pytest.mark.timeout(180)
@pytest.mark.parametrize("git", [False, True], ids=["walk", "git"])
def test_spec_12_deep_asset_tree(project: Path, git: bool) -> None:
    """SPEC §12: a 3,000-deep asset tree (past PATH_MAX): the asset listing, orphans and the
    whole-store check answer; the deep part is skipped, not a crash."""
    import subprocess

    (project / "src").mkdir()
    (project / "src/a.ts").write_text("export {}\n")
    Store(project).write("src/a.ts", capsule="Alpha.")
    _deep_dirs(project, 3000, "n")
    try:
        if git:
            subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        listed = assets.Assets(project)
        assert "src/a.ts" in listed.files()
        findings = check.check(Store(project))
        assert isinstance(findings, list)
    finally:
        remove_deep(project, "n")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("depth", [100, 2_000, 100_000])
@pytest.mark.parametrize("shape", ["list", "object"])
def test_spec_12_deep_schema_json_is_a_finding(project: Path, depth: int, shape: str) -> None:
    """SPEC §7, §12: a 100k-deep schema.json is malformed (rules off, every write says so,
    check reports it), never a RecursionError."""
    Store(project).write("src/a.ts", capsule="Alpha.")
    text = "[" * depth + "]" * depth if shape == "list" else '{"a":' * depth + "1" + "}" * depth
    (project / ".canon/schema.json").write_text(text)
    r = tool.run(Store(project), {"action": "write", "path": "src/a.ts", "capsule": "Beta."})
    assert r.code == 0, r.text
    assert "schema.json is malformed" in r.text and "nested" in r.text, r.text
    found = check.check(Store(project), staleness=False)
    assert any(f.code == "schema-malformed" for f in found)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("depth", [50, 400, 1_500, 20_000])
@pytest.mark.parametrize(
    "shape",
    [
        lambda n: "[" * n + "]" * n,
        lambda n: "{a: " * n + "1" + "}" * n,
        lambda n: "\n" + "".join(" " * i + "k:\n" for i in range(n)) + " " * n + "x",
        lambda n: "\n" + "".join(" " * i + "- \n" for i in range(n)) + " " * n + "x",
    ],
    ids=["flow-list", "flow-map", "block-map", "block-list"],
)
def test_spec_12_deep_yaml_front_matter(project: Path, depth: int, shape) -> None:  # type: ignore[no-untyped-def]
    """SPEC §5, §12: deeply nested YAML front matter (articles and journal entries) reads as
    malformed front matter, never a RecursionError."""
    value = shape(depth)
    articles = project / ".canon/articles/src"
    articles.mkdir(parents=True)
    (articles / "a.md").write_text(f"---\ncapsule: Alpha.\ntags: {value}\n---\nalpha\n")
    (project / ".canon/journal").mkdir()
    (project / ".canon/journal/2026-01-01-x.md").write_text(
        f"---\nsubject: {value}\n---\nalpha entry\n"
    )
    store = Store(project)
    r = tool.run(store, {"action": "read", "path": "src/a.ts"})
    assert r.code == 0, r.text
    for action in (
        {"action": "search", "query": "alpha", "journal": True},
        {"action": "map"},
        {"action": "write", "path": "src/a.ts", "capsule": "Beta."},
    ):
        assert "RecursionError" not in tool.run(store, action).text
    assert isinstance(check.check(store, staleness=False), list)
    json.dumps([f.message for f in check.check(store, staleness=False)])
