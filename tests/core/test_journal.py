"""SPEC §6 journal: exclusive create, collisions, slugs, front matter, empty body."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from canon_ls.core import tool
from canon_ls.core.storage import article as art
from canon_ls.core.storage import fsio
from canon_ls.core.storage import journal as jrn
from canon_ls.core.storage.store import Store, sanitise_slug, slug_from_body
from tests.conftest import TODAY


def j(store: Store, **kw: object) -> tool.ToolResult:
    return tool.run(store, {"action": "journal", **kw}, source="mcp", session="s-1")


def test_spec_6_journal_collisions_increment(store: Store, project: Path) -> None:
    """SPEC §6 journal: a name collision increments -<n> (2, 3, …) and never loses an entry."""
    for _ in range(3):
        assert j(store, body="Same words here", slug="same").code == 0
    names = sorted(p.name for p in (project / ".canon/journal").iterdir())
    assert names == [f"{TODAY}-same-2.md", f"{TODAY}-same-3.md", f"{TODAY}-same.md"]


def test_spec_6_journal_front_matter(store: Store, project: Path) -> None:
    """SPEC §6 journal: pi-canon's keys in its order (subject as a flow list, normalised, only
    when any; logged; harness), then session; any YAML reader takes them as written."""
    j(store, body="Chose X over Y.", subject=["src/a.ts", "./src//b.py", "src/a.ts"], slug="x")
    text = (project / f".canon/journal/{TODAY}-x.md").read_text()
    entry = art.parse(text, "x")
    assert list(entry.meta) == ["subject", "logged", "harness", "session"]
    assert entry.meta["subject"] == ["src/a", "src/b"]
    assert entry.meta["logged"].startswith(f"{TODAY}T") and entry.meta["logged"].endswith("Z")
    assert (entry.meta["harness"], entry.meta["session"]) == ("mcp", "s-1")
    assert entry.body == "Chose X over Y.\n"


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ("src/a.ts", ["src/a"]),
        ("./src//b.py", ["src/b"]),
        ("{project-uri}/x/../src/c.ts", ["src/c"]),
        ("", None),
        ([], None),
        (["src/a.ts", "src/a"], ["src/a"]),
    ],
)
def test_spec_6_journal_string_subject_is_one_element_array(
    store: Store, project: Path, subject: object, expected: list[str] | None
) -> None:
    """SPEC §6 journal: a bare string subject is a one-element array, never dropped."""
    if isinstance(subject, str):  # a file:// URI of a file in the project is decoded too
        subject = subject.replace("{project-uri}", project.as_uri())
    r = j(store, body="About one file.", subject=subject, slug="s")
    assert r.code == 0, r.text
    entry = art.parse((project / f".canon/journal/{TODAY}-s.md").read_text(), "s")
    assert entry.meta.get("subject") == expected
    if expected:
        assert Store(project).journal_names(expected[0])[:3] == [f"{TODAY}-s.md"]


def test_spec_6_journal_subject_outside_the_project_is_refused(store: Store, project: Path) -> None:
    """SPEC §3, §12: a subject outside the project (an absolute path or file:// URI) is refused
    with a sentence, and no entry is written."""
    r = j(store, body="About a file elsewhere.", subject="file:///nowhere/../src/c.ts")
    assert r.code == 2 and "outside the project" in r.text
    assert not (project / ".canon/journal").exists()


def test_spec_6_journal_slugs() -> None:
    """SPEC §6 journal: slug sanitised to [a-z0-9-] max 60; derived from the body; 'entry'."""
    assert sanitise_slug("Hello, World! Ünïcode_snake") == "hello-world-unicode-snake"
    assert len(sanitise_slug("a" * 100)) == 60
    assert sanitise_slug("../../etc/passwd") == "etc-passwd"
    assert slug_from_body("Decided: use the NEW parser because it is faster") == (
        "decided-use-the-new-parser-because"
    )
    assert slug_from_body("配置") == "entry"
    assert slug_from_body("!!!") == "entry"


def test_spec_6_journal_slug_derivation_via_tool(store: Store, project: Path) -> None:
    j(store, body="Fixed the flaky test in CI")
    j(store, body="决定", slug="!!!")
    names = sorted(p.name for p in (project / ".canon/journal").iterdir())
    assert names == [f"{TODAY}-entry.md", f"{TODAY}-fixed-the-flaky-test-in-ci.md"]


def test_spec_6_journal_empty_body(store: Store, project: Path) -> None:
    """SPEC §6 journal: an empty body returns a sentence asking what happened, writes nothing."""
    for body in ("", "   \n", None):
        r = j(store, body=body) if body is not None else j(store)
        assert r.code == 2 and "what happened" in r.text
    assert not (project / ".canon").exists()


def test_spec_6_journal_bad_types(store: Store) -> None:
    for kw in (
        {"body": 3},
        {"body": "x", "subject": 5},
        {"body": "x", "subject": [1]},
        {"body": "x", "slug": 7},
    ):
        r = j(store, **kw)
        assert r.code == 2 and "\n" not in r.text, kw


def test_spec_6_journal_never_rewritten(store: Store, project: Path) -> None:
    """SPEC §6: the tool never rewrites or deletes an entry."""
    j(store, body="first", slug="keep")
    path = project / f".canon/journal/{TODAY}-keep.md"
    before = path.read_bytes()
    for _ in range(3):
        j(store, body="second", slug="keep")
    assert path.read_bytes() == before


def test_spec_6_journal_index_exact_subject_newest_three(store: Store, project: Path) -> None:
    """SPEC §6 read: newest three entries whose subject contains exactly the address."""
    import os

    tool.run(store, {"action": "write", "path": "src/a.ts", "capsule": "A."})
    paths = []
    for i in range(5):
        j(store, body=f"entry {i}", subject=["src/a.ts"], slug=f"e{i}")
        paths.append(project / f".canon/journal/{TODAY}-e{i}.md")
    j(store, body="child", subject=["src/a/b.ts"], slug="child")
    for i, p in enumerate(paths):
        os.utime(p, ns=(10**18 + i * 10**9, 10**18 + i * 10**9))
    newest_three = [f"{TODAY}-e4.md", f"{TODAY}-e3.md", f"{TODAY}-e2.md"]
    assert store.journal_names("src/a")[:3] == newest_three
    read = tool.run(store, {"action": "read", "path": "src/a.ts"}).text
    newest = f"journal: {TODAY}-e4.md, {TODAY}-e3.md, {TODAY}-e2.md"
    assert read.splitlines()[-1] == newest + " and 2 earlier"
    assert "entry 4" not in read  # names, never contents


def test_journal_listing_cached_until_directory_changes(store: Store, project: Path) -> None:
    """Hover-time journal look-ups reuse the listing until an entry is added; refresh() and
    reload_file() force a re-check, so hand edits are still seen."""
    import os

    tool.run(store, {"action": "write", "path": "a.ts", "capsule": "A."})
    j(store, body="one", subject=["a.ts"], slug="one")
    assert store.journal_names("a")[:3] == [f"{TODAY}-one.md"]
    j(store, body="two", subject=["a.ts"], slug="two")
    assert len(store.journal_names("a")[:3]) == 2
    # a hand edit of an entry's subject, with an old directory mtime
    entry = project / f".canon/journal/{TODAY}-one.md"
    entry.write_text(entry.read_text().replace("subject: [a]\n", "subject: [b]\n"))
    os.utime(project / ".canon/journal", ns=(10**18, 10**18))
    store.journal_names("a")[:3]
    store.reload_file(entry)
    assert store.journal_names("a")[:3] == [f"{TODAY}-two.md"]
    assert store.journal_names("b")[:3] == [f"{TODAY}-one.md"]


def test_spec_6_journal_draft_names_the_next_free_file_and_writes_nothing(store: Store) -> None:
    """SPEC §6 journal / §10 code action "Journal an entry about <address>": the editor gets the
    entry's name and front matter from the core (the same header `journal` writes) and creates
    the file itself through an undoable edit; the draft touches nothing on disk."""
    first, text = store.journal_draft(["src/feed.py"], slug="src-feed")
    assert first.name == f"{TODAY}-src-feed.md"
    assert text.startswith("---\nsubject: [src/feed]\nlogged: ")
    assert "harness: lsp\n" in text and text.endswith("---\n\n")
    assert not store.root.exists()
    store.journal("Split the feed parser.", subject=["src/feed"], slug="src-feed")
    second, _ = store.journal_draft(["src/feed"], slug="src-feed")
    assert second.name == f"{TODAY}-src-feed-2.md"


def test_spec_6_journal_index_follows_new_and_removed_entries(store: Store) -> None:
    """SPEC §6 read's journal index: the cached grouping by subject never hides a change."""
    first = store.journal("Chose WAL mode.", subject=["src/core/db"], slug="wal")
    assert store.journal_names("src/core/db") == [first.name]
    second = store.journal("Moved to a queue.", subject=["src/core/db", "src/feed"], slug="queue")
    assert set(store.journal_names("src/core/db")) == {first.name, second.name}
    assert store.journal_names("src/feed")[:3] == [second.name]
    second.unlink()
    store.refresh()
    assert store.journal_names("src/core/db") == [first.name]
    assert store.journal_names("src/feed")[:3] == []


def test_spec_6_a_replaced_entry_of_the_same_size_and_mtime_is_read_again(
    store: Store, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal follows core's one stat key (freshness.py) too: an entry replaced by hand
    with the same size and mtime (a new inode) is read again, not served from memory."""
    import os

    monkeypatch.setattr("canon_ls.core.storage.freshness.RACY_NS", 0)  # every key settled at once

    path = store.journal(body="First body.\n", subject=["src/a"])
    assert store.journal_names("src/a") == [path.name]
    st = path.stat()
    text = path.read_text("utf-8")
    fresh = path.with_name("entry.new")
    fresh.write_text(text.replace("src/a", "src/b"), "utf-8")  # same length
    os.utime(fresh, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(fresh, path)
    assert store.journal_names("src/b") == [path.name]
    assert store.journal_names("src/a") == []


def _synced(monkeypatch: pytest.MonkeyPatch) -> set[tuple[int, int]]:
    """Watch os.fsync (it still runs): the (device, inode) of everything synced from now."""
    import os

    synced: set[tuple[int, int]] = set()
    real = os.fsync

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        synced.add((st.st_dev, st.st_ino))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


def _identity(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_dev, st.st_ino


def test_spec_12_a_journal_entry_is_synced_with_its_directory(
    store: Store, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC §12 durability: an entry survives a crash once journal() returns: its bytes are
    synced (the file) and so is its name (the journal directory)."""
    store.journal("Before.", ["src/a"])  # the directory exists before the watch starts
    synced = _synced(monkeypatch)
    path = store.journal("Env now beats file.", ["src/a"])
    assert _identity(path) in synced, "the entry's bytes were not synced"
    assert _identity(path.parent) in synced, "the journal directory was not synced"


def test_spec_12_an_article_write_is_synced_with_its_directory(
    store: Store, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC §12 durability: a written article (new, then replaced) is synced, file and
    directory, before write() returns."""
    synced = _synced(monkeypatch)
    for capsule in ("First.", "Second."):
        store.write("src/core/config.py", capsule=capsule)
        path = project / ".canon/articles/src/core/config.md"
        assert _identity(path) in synced, capsule
        assert _identity(path.parent) in synced, capsule


def test_spec_6_a_journal_entry_tries_only_the_names_it_needs(tmp_path: Path) -> None:
    """An entry takes the first free name of <date>-<slug>.md, -2, -3, …; the candidates are
    drawn one at a time (a tuple of all 100k candidate names cost 16 ms per entry)."""
    drawn: list[str] = []

    def candidates() -> Iterator[str]:
        for name in jrn.names("2026-12-05", "step"):
            drawn.append(name)
            yield name

    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        assert fsio.link_new_in(fd, candidates(), b"one") == "2026-12-05-step.md"
        drawn.clear()
        assert fsio.link_new_in(fd, candidates(), b"two") == "2026-12-05-step-2.md"
    finally:
        os.close(fd)
    assert drawn == ["2026-12-05-step.md", "2026-12-05-step-2.md"]
