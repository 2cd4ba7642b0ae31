"""Issue 15, SPEC §4 (the files are the truth): a store keeps no article bodies. A body is read
from its file when asked, so an edit made since shows at once and the index catches up; the
checker reads a body only where a finding needs it, and its findings do not change."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from canon_ls.core.checking.check import check
from canon_ls.core.retrieval.links import link_targets, wikilinks
from canon_ls.core.storage import article as art
from canon_ls.core.storage import cache
from canon_ls.core.storage.project import open_store
from canon_ls.core.storage.store import Store


def put(project: Path, address: str, text: str, root: str = ".canon") -> Path:
    p = project / root / "articles" / (address + ".md")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def edit(path: Path, text: str) -> None:
    """An edit by another program, the stat key surely moved (a new inode, a later mtime)."""
    st = path.stat()
    tmp = path.with_name(path.name + ".new")
    tmp.write_text(text, encoding="utf-8")
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    os.replace(tmp, path)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many bodies were read back from files (the real reader, counted)."""
    seen: list[int] = []
    real = art.body_from

    def counting(data: bytes) -> str:
        seen.append(len(data))
        return real(data)

    monkeypatch.setattr(art, "body_from", counting)
    return seen


def test_a_body_read_on_demand_shows_an_external_edit(project: Path) -> None:
    path = put(project, "a", "---\ncapsule: Old.\n---\n# A\nOld body, see [[b]].\n")
    put(project, "b", "---\ncapsule: B.\n---\nB.\n")
    store = Store(project)
    store.refresh()
    article = store.article("a")
    assert article is not None and article.held is None  # nothing of the body kept
    assert article.body == "# A\nOld body, see [[b]].\n"
    assert store.backlinks("b") == ["a"]
    edit(path, "---\ncapsule: New.\n---\n# A\nA new and longer body, see [[c]].\n")
    assert article.body == "# A\nA new and longer body, see [[c]].\n"  # never the old text
    fresh = store.article("a")  # nobody asked for a refresh: the read re-parsed the file
    assert fresh is not None and fresh.capsule == "New." and fresh.targets == ("c",)
    assert store.backlinks("b") == [] and store.backlinks("c") == ["a"]
    path.unlink()
    assert article.body == ""


def test_a_body_from_the_parse_cache_shows_an_external_edit(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CANON_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "MIN_PARSED", 1)
    monkeypatch.setattr("canon_ls.core.storage.freshness.RACY_NS", 0)
    path = put(project, "a", "---\ncapsule: Cached.\n---\nCached body [[b]].\n")
    Store(project).refresh()  # writes the snapshot
    file = cache.cache_file(project / ".canon", project)
    assert file is not None and b"Cached body" not in file.read_bytes()  # no bodies in it
    store = Store(project)
    store.refresh()
    article = store.article("a")
    assert article is not None and article.targets == ("b",)
    assert article.body == "Cached body [[b]].\n"
    edit(path, "---\ncapsule: Edited.\n---\nEdited body.\n")
    assert article.body == "Edited body.\n"
    fresh = store.article("a")
    assert fresh is not None and fresh.capsule == "Edited." and fresh.targets == ()


def test_a_mount_body_is_read_from_the_mount(project: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    path = put(lake, "prices", "---\ncapsule: Prices.\n---\nDaily.\n")
    store = open_store(project, {"mounts": [str(lake)]})
    article = store.article("lake:prices")
    assert article is not None and article.body == "Daily.\n"
    edit(path, "---\ncapsule: Hourly prices.\n---\nHourly.\n")
    assert article.body == "Hourly.\n"
    fresh = store.article("lake:prices")
    assert fresh is not None and fresh.capsule == "Hourly prices."


def test_the_check_reads_only_the_bodies_a_finding_needs(project: Path, reads: list[int]) -> None:
    """body-long from the kept length, relations.refs from the kept targets; a broken link's
    range needs its body, read once."""
    long = "x" * 9_000
    put(project, "ok", f"---\ncapsule: Fine.\n---\n# Ok\n{long}\nSee [[lone]].\n")
    put(project, "lone", "---\ncapsule: Alone.\n---\nNo links.\n")
    put(project, "bad", "---\ncapsule: Broken.\n---\n# Bad\n\nto [[nowhere|there]], `[[code]]`\n")
    schema = {"relations": {"refs": {"min_count": 1}}}
    (project / ".canon/schema.json").write_text(json.dumps(schema))
    store = Store(project)
    store.refresh()
    reads.clear()
    found = check(store, staleness=False)
    assert len(reads) == 1  # the article with the broken link, nothing else
    got = {(f.address, f.code, f.line, f.start, f.end) for f in found}
    assert ("bad", "broken-link", 5, 3, 20) in got  # on the link itself, 0-based
    assert ("ok", "body-long", 3) in {(f.address, f.code, f.line) for f in found}
    refs = sorted(f.address for f in found if f.code == "schema")
    assert refs == ["lone"]  # `ok` and `bad` reference an article; `lone` none


def test_a_schema_rule_on_the_body_reads_it(project: Path, reads: list[int]) -> None:
    put(project, "a", "---\ncapsule: A.\n---\n   \n")
    schema = {"article": {"body": {"required": True}}}
    (project / ".canon/schema.json").write_text(json.dumps(schema))
    store = Store(project)
    store.refresh()
    reads.clear()
    found = check(store, staleness=False)
    assert [f.code for f in found if f.address == "a"] == ["schema"]
    assert len(reads) == 1


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="[]|#`~ \nab/.:-", max_size=60))
def test_the_kept_targets_are_the_links_targets(text: str) -> None:
    """What a store keeps per article (`targets`) is what the lints' full parse finds."""
    assert link_targets(text) == [link.target for link in wikilinks(text)]
    assert art.parse(f"---\ncapsule: C.\n---\n{text}", "a").targets == tuple(link_targets(text))


def test_spec_12_no_body_is_read_once_articles_leads_outside(project: Path, tmp_path: Path) -> None:
    """The store loaded, then `articles/` is swapped for a link leading outside the project:
    a body asked for afterwards is not read through it."""
    put(project, "a", "---\ncapsule: A.\n---\nInside.\n")
    store = Store(project)
    store.refresh()
    article = store.article("a")
    assert article is not None and article.body == "Inside.\n"
    outside = tmp_path / "outside"
    put(outside, "a", "---\ncapsule: Secret.\n---\nSecret.\n", root=".")
    articles = project / ".canon/articles"
    articles.rename(project / ".canon/moved")
    articles.symlink_to(outside / "articles", target_is_directory=True)
    assert article.body == ""
    assert store.article("a") is None  # the read re-checked the store: nothing is read there
