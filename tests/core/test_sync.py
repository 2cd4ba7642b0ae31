"""SPEC §4/§10: the in-memory index stays in sync with disk (hand and agent edits)."""

from __future__ import annotations

import os
from pathlib import Path

from canon_ls.core import tool
from canon_ls.core.storage.store import Store


def put(project: Path, address: str, text: str) -> Path:
    p = project / ".canon/articles" / (address + ".md")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_hand_edits_never_missed(store: Store, project: Path) -> None:
    """An edit by hand or by another process shows up on the next read."""
    p = put(project, "src/a", "---\ncapsule: One.\n---\n")
    assert "capsule: One." in tool.run(store, {"action": "read", "path": "src/a.ts"}).text
    p.write_text("---\ncapsule: Two!\n---\n")
    os.utime(p, ns=(p.stat().st_mtime_ns + 10**9,) * 2)
    assert "capsule: Two!" in tool.run(store, {"action": "read", "path": "src/a.ts"}).text
    put(project, "src/b", "---\ncapsule: B.\n---\n")
    assert "src/b: B." in tool.run(store, {"action": "map"}).text
    p.unlink()
    assert "src/a" not in tool.run(store, {"action": "map"}).text


def test_refresh_reports_changes_and_reparses_only_changed(store: Store, project: Path) -> None:
    put(project, "a", "---\ncapsule: A.\n---\n")
    put(project, "b/c", "---\ncapsule: C.\n---\n")
    assert store.refresh() == {"a", "b/c"}
    assert store.refresh() == set()
    first = store.article("a")
    p = put(project, "b/c", "---\ncapsule: C2 longer.\n---\n")
    assert store.refresh() == {"b/c"}
    assert store.article("a") is first  # untouched article not re-parsed
    p.unlink()
    assert store.refresh() == {"b/c"}
    assert store.addresses() == ["a"]


def test_reload_file_for_watchers(store: Store, project: Path) -> None:
    store.refresh()
    p = put(project, "x/y", "---\ncapsule: Y.\n---\n")
    assert store.reload_file(p) == {"x/y"}
    assert store.article("x/y").capsule == "Y."  # type: ignore[union-attr]
    assert store.reload_file(p) == set()
    p.unlink()
    assert store.reload_file(p) == {"x/y"}
    assert store.article("x/y") is None
    assert store.reload_file(project / "README.md") == set()


def test_search_index_follows_edits(store: Store, project: Path) -> None:
    """The search index is incremental and follows disk changes."""
    put(project, "a", "---\ncapsule: apples\n---\n")
    assert "a: apples" in tool.run(store, {"action": "search", "query": "apples"}).text
    p = put(project, "a", "---\ncapsule: bananas and more\n---\n")
    os.utime(p, ns=(p.stat().st_mtime_ns + 10**9,) * 2)
    assert "No article" in tool.run(store, {"action": "search", "query": "apples"}).text
    assert "a: bananas" in tool.run(store, {"action": "search", "query": "bananas"}).text


def test_backlinks(store: Store, project: Path) -> None:
    put(project, "a", "---\ncapsule: A.\n---\nSee [[b]] and [[b|again]].\n")
    put(project, "c", "---\ncapsule: C.\n---\n`[[b]]` is code.\n")
    put(project, "b", "---\ncapsule: B.\n---\n")
    assert store.backlinks("b") == ["a"]


def test_spec_2_hidden_and_dotted_names(store: Store, project: Path) -> None:
    """SPEC §3: '.env' and 'docs/v1.2/notes' are addresses like any other."""
    tool.run(store, {"action": "write", "path": ".env", "capsule": "Env vars."})
    tool.run(store, {"action": "write", "path": "docs/v1.2/notes.md", "capsule": "Notes."})
    assert (project / ".canon/articles/.env.md").is_file()
    assert store.refresh() == set()
    assert store.addresses() == [".env", "docs/v1.2/notes"]
    assert store.governing("docs/v1.2/notes/deeper") == "docs/v1.2/notes"


def test_article_file_path_names_its_address(store: Store, project: Path) -> None:
    """The path of an article file (relative, absolute or URI) reaches that article."""
    put(project, "src/a", "---\ncapsule: A.\n---\n")
    for raw in (
        ".canon/articles/src/a.md",
        str(project / ".canon/articles/src/a.md"),
        (project / ".canon/articles/src/a.md").as_uri(),
    ):
        assert store.address_of(raw) == "src/a", raw
    assert store.address_of(".canon/schema.json") == ".canon/schema"


def test_set_reviewed_keeps_updated(store: Store, project: Path) -> None:
    """SPEC §9: reviewed is written without changing updated or anything else."""
    p = put(project, "a", "---\ncapsule: A.\nupdated: 2020-01-01\ntags: [x]\n---\nbody\n")
    store.set_reviewed("a")
    assert p.read_text() == (
        "---\ncapsule: A.\nupdated: 2020-01-01\nreviewed: 2026-11-29\ntags: [x]\n---\nbody\n"
    )
    assert store.article("a").reviewed == "2026-11-29"  # type: ignore[union-attr]


def test_same_size_edit_within_one_mtime_tick_is_seen(store: Store, project: Path) -> None:
    """Coarse file-system clocks: an in-place, same-size edit that keeps the mtime is still
    picked up, because recently modified files are re-read (as git does for racy entries)."""
    p = put(project, "a", "---\ncapsule: AAAA\n---\n")
    assert store.refresh() == {"a"}
    stamp = p.stat().st_mtime_ns
    p.write_text("---\ncapsule: BBBB\n---\n")
    os.utime(p, ns=(stamp, stamp))
    assert store.refresh() == {"a"}
    assert store.article("a").capsule == "BBBB"  # type: ignore[union-attr]
    assert store.refresh() == set()


def test_spec_10_revalidate_rereads_only_what_changed(store: Store, project: Path) -> None:
    """Store.revalidate (core/storage/freshness.py's one stat key): a same-size, same-mtime rewrite
    by replacement (a new inode) is seen; an unchanged file is not re-read; a file that
    appeared or vanished is added or removed."""
    a = put(project, "src/a", "---\ncapsule: One.\n---\n")
    assert store.refresh() == {"src/a"}
    first = store.article("src/a")
    store._racy.clear()  # as if read 3 s ago: only the stat key decides from here
    assert store.revalidate([a]) == set()
    assert store.article("src/a") is first  # not re-read
    mtime = a.stat().st_mtime_ns
    fresh = a.with_name("a.md.new")
    fresh.write_text("---\ncapsule: Two.\n---\n")  # same size
    os.utime(fresh, ns=(mtime, mtime))
    os.replace(fresh, a)
    assert store.revalidate([a]) == {"src/a"}
    assert store.article("src/a").capsule == "Two."
    b = put(project, "src/b", "---\ncapsule: B.\n---\n")
    assert store.revalidate([b, project / ".canon/articles/none.md"]) == {"src/b"}
    a.unlink()
    assert store.revalidate([a]) == {"src/a"} and not store.has("src/a")


def test_spec_10_refresh_of_one_directory(store: Store, project: Path) -> None:
    """Store.refresh(dirs=…): the incremental pass over the directories a watcher names;
    files elsewhere are not looked at, articles gone from there are removed."""
    put(project, "x/one", "---\ncapsule: One.\n---\n")
    put(project, "y/two", "---\ncapsule: Two.\n---\n")
    assert store.refresh() == {"x/one", "y/two"}
    put(project, "x/new", "---\ncapsule: New.\n---\n")
    put(project, "x/deep/er", "---\ncapsule: Deeper.\n---\n")
    put(project, "y/other", "---\ncapsule: Elsewhere.\n---\n")
    (project / ".canon/articles/x/one.md").unlink()
    x = project / ".canon/articles/x"
    assert store.refresh(dirs=[x]) == {"x/new", "x/deep/er", "x/one"}
    assert not store.has("y/other")  # not under the directories named
    import shutil

    shutil.rmtree(x)
    assert store.refresh(dirs=[x]) == {"x/new", "x/deep/er"}
    assert store.addresses() == ["y/two"]
    assert store.refresh(dirs=[project / ".canon/articles"]) == {"y/other"}
