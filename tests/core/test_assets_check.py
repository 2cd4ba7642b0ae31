"""SPEC §9 orphans and staleness, §7 graph relations, §11.1 whole-store check: real stores in
real git repositories (commits dated with GIT_COMMITTER_DATE)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from canon_ls.core.checking.assets import Assets
from canon_ls.core.checking.check import article_findings, check, orphans
from canon_ls.core.checking.lint import Finding
from canon_ls.core.git.changes import ChangeTimes
from canon_ls.core.git.staleness import stale
from canon_ls.core.storage.store import Store

DAY = 86400
NOON = 1_735_732_800  # 2025-01-01 12:00 UTC


def day(n: int) -> int:
    """Noon UTC, n days after 2025-01-01: the same calendar day in every usual time zone."""
    return NOON + n * DAY


def date(n: int) -> str:
    import datetime as dt

    return (dt.date(2025, 1, 1) + dt.timedelta(days=n)).isoformat()


def git(repo: Path, *args: str, when: int | None = None) -> None:
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
    if when is not None:
        env["GIT_COMMITTER_DATE"] = env["GIT_AUTHOR_DATE"] = f"{when} +0000"
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        check=True,
    )


def write(root: Path, rel: str, text: str = "x\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def commit(repo: Path, when: int, *files: str) -> None:
    for rel in files:
        write(repo, rel, f"{rel} at {when}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "c", when=when)


def article(repo: Path, address: str, updated: str = "", body: str = "", **meta: str) -> None:
    lines = ["---", f"capsule: About {address.rsplit('/', 1)[-1]}."]
    if updated:
        lines.append(f"updated: {updated}")
    lines += [f"{k}: {v}" for k, v in meta.items()]
    lines += ["---", f"# {address}", "", body]
    write(repo, f".canon/articles/{address}.md", "\n".join(lines) + "\n")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANON_TODAY", date(100))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return root


def signals(repo: Path) -> tuple[Store, Assets, ChangeTimes]:
    store = Store(repo)
    store.refresh()
    return store, Assets(repo, store_root=store.root), ChangeTimes(repo)


# -- orphans ----------------------------------------------------------------------------------


def test_spec_9_orphan_is_nested_address_without_asset_in_existing_directory(repo: Path):
    """SPEC §9 / §6.1 item 5: orphan = nested address, parent directory exists, no asset maps."""
    commit(repo, day(0), "src/core/config.ts", "src/feed/reader.py")
    article(repo, "src/core/config", date(0))
    article(repo, "src/core/renamed", date(0))  # src/core/ exists, no src/core/renamed.*
    article(repo, "src/feed", date(0))  # the directory is its asset
    article(repo, "gone/deeper", date(0))  # parent directory gone/ does not exist
    article(repo, "toplevel", date(0))  # one segment: silent
    article(repo, "src/core/policy", date(0), scope="rule")  # declared rule: silent
    store, assets, _ = signals(repo)
    assert orphans(store, assets) == ["src/core/renamed"]


def test_spec_9_no_orphans_in_a_store_where_no_address_maps(repo: Path):
    """SPEC §6.1 item 5: silent for stores none of whose addresses maps to a file."""
    commit(repo, day(0), "src/a.py")
    article(repo, "src/topic-one", date(0))
    article(repo, "src/topic-two", date(0))
    store, assets, _ = signals(repo)
    assert orphans(store, assets) == []


def test_spec_9_orphan_after_the_asset_is_deleted_uncommitted(repo: Path):
    commit(repo, day(0), "src/a.py", "src/b.py")
    article(repo, "src/a", date(0))
    article(repo, "src/b", date(0))
    (repo / "src/b.py").unlink()
    store, assets, _ = signals(repo)
    assert orphans(store, assets) == ["src/b"]


# -- stale ------------------------------------------------------------------------------------


def test_spec_9_stale_when_an_asset_changed_on_a_later_day(repo: Path):
    """SPEC §9: stale = newest asset change on a later day than max(updated, reviewed)."""
    commit(repo, day(0), "src/a.py", "src/b.py", "src/c.py", "src/d.py")
    commit(repo, day(5), "src/a.py", "src/b.py", "src/c.py")
    article(repo, "src/a", date(4))  # changed after: stale
    article(repo, "src/b", date(5))  # same day: fresh (day granularity)
    article(repo, "src/c", date(1), reviewed=date(6))  # reviewed later: fresh
    article(repo, "src/d", date(1))  # untouched since: fresh
    store, assets, times = signals(repo)
    result = stale(store, assets, times)
    assert list(result) == ["src/a"]
    assert "src/a.py" in result["src/a"] and date(5) in result["src/a"]


def test_spec_9_stale_after_makes_an_article_stale_from_that_date(repo: Path):
    """SPEC §9: an explicit stale_after: YYYY-MM-DD makes the article stale from that date on."""
    commit(repo, day(0), "src/a.py", "src/b.py")
    article(repo, "src/a", date(0), stale_after=date(100))  # today is date(100)
    article(repo, "src/b", date(0), stale_after=date(101))
    article(repo, "notes/topic", date(0), stale_after=date(50))  # no asset needed
    store, assets, times = signals(repo)
    assert sorted(stale(store, assets, times)) == ["notes/topic", "src/a"]


def test_spec_9_directory_counts_only_files_it_governs_directly(repo: Path):
    """SPEC §9: directory assets count only files under it with no nearer article."""
    commit(repo, day(0), "src/feed/reader.py", "src/feed/parse/lexer.py", "src/feed/util.py")
    commit(repo, day(10), "src/feed/parse/lexer.py")
    article(repo, "src/feed", date(5))
    article(repo, "src/feed/parse", date(12))
    store, assets, times = signals(repo)
    assert stale(store, assets, times) == {}
    commit(repo, day(20), "src/feed/util.py")
    times.refresh()
    assert list(stale(store, assets, times)) == ["src/feed"]


def test_spec_9_file_and_directory_collision_both_count(repo: Path):
    """SPEC §9 (decided in docs): `x.py` and `x/` are both assets of article `x`."""
    commit(repo, day(0), "pkg/x.py", "pkg/x/inner.py")
    commit(repo, day(9), "pkg/x/inner.py")
    article(repo, "pkg/x", date(3))
    store, assets, times = signals(repo)
    assert "pkg/x/inner.py" in stale(store, assets, times)["pkg/x"]


def test_spec_9_uncommitted_edit_counts_by_mtime(repo: Path):
    """SPEC §9: a modified file's change time is its mtime."""
    commit(repo, day(0), "src/a.py")
    article(repo, "src/a", date(2))
    path = write(repo, "src/a.py", "edited\n")
    os.utime(path, (day(30), day(30)))
    store, assets, times = signals(repo)
    assert list(stale(store, assets, times)) == ["src/a"]


def test_spec_9_staleness_without_git_uses_mtime(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("CANON_TODAY", date(100))
    path = write(tmp_path, "src/a.py")
    os.utime(path, (day(7), day(7)))
    write(tmp_path, "src/b.py")
    os.utime(tmp_path / "src/b.py", (day(1), day(1)))
    article(tmp_path, "src/a", date(3))
    article(tmp_path, "src/b", date(3))
    store, assets, times = signals(tmp_path)
    assert not times.git
    assert list(stale(store, assets, times)) == ["src/a"]


# -- relations --------------------------------------------------------------------------------


def test_spec_7_relations_orphan_warn_and_children_listed(repo: Path):
    """SPEC §7: orphan.warn (no other article references this one) and children.listed (the
    article does not reference each direct child article under its address)."""
    commit(repo, day(0), "src/a.py")
    article(repo, "src", date(0), body="Parts: [[src/a]].")
    article(repo, "src/a", date(0), body="Self [[src/a]] and up [[src]].")
    article(repo, "src/b", date(0))
    article(repo, "src/b/deep", date(0), body="```\n[[src/b]] in code\n```")
    article(repo, "src/c/nested", date(0))  # no src/c article: a direct child of src
    relations = {"orphan": {"warn": True}, "children": {"listed": True}}
    write(repo, ".canon/schema.json", json.dumps({"relations": relations}))
    found = [f for f in check(*signals(repo)) if f.code.startswith("relations")]
    orphans = sorted(f.address for f in found if f.code == "relations-orphan")
    assert orphans == ["src/b", "src/b/deep", "src/c/nested"]
    unlisted = {f.address: f.message for f in found if f.code == "relations-children"}
    assert sorted(unlisted) == ["src", "src/b"]
    assert "[[src/b]], [[src/c/nested]];" in unlisted["src"]
    assert "[[src/b/deep]];" in unlisted["src/b"]


# -- check ------------------------------------------------------------------------------------


def _codes(findings: list[Finding]) -> set[tuple[str, str]]:
    return {(f.address, f.code) for f in findings}


def test_spec_11_check_reports_every_kind_of_finding(repo: Path):
    """SPEC §11.1 canon check: lints, broken links, schema, relations, orphans, stale."""
    commit(repo, day(0), "src/a.py", "src/b.py")
    commit(repo, day(9), "src/a.py")
    write(
        repo,
        ".canon/schema.json",
        json.dumps(
            {
                "schema_version": 1,
                "article": {"title": {"required": True, "hint": "Start with # heading."}},
                "relations": {"orphan": {"warn": True}, "children": {"listed": True}},
            }
        ),
    )
    article(repo, "src", date(0), body="[[src/a]] [[src/b]] [[src/ghost]]")
    article(repo, "src/a", date(1), body="see [[src]]")
    article(repo, "src/b", date(10))
    article(repo, "src/moved", date(10))
    write(repo, ".canon/articles/src/bad.md", "---\ncapsule: [unclosed\n---\nno title\n")
    store, assets, times = signals(repo)
    found = check(store, assets, times)
    codes = _codes(found)
    assert ("src", "broken-link") in codes
    assert ("src/a", "stale") in codes
    assert ("src/moved", "orphan") in codes
    assert ("src/bad", "schema") in codes  # no title: required
    assert ("src/moved", "relations-orphan") in codes
    assert ("src", "relations-children") in codes
    broken = next(f for f in found if f.code == "broken-link")
    assert broken.severity == "warning" and broken.end > broken.start
    assert next(f for f in found if f.code == "schema").severity == "error"
    assert all(f.message and f.message[-1] in ".?" for f in found)


def test_check_with_default_schema_has_no_relation_findings(repo: Path):
    commit(repo, day(0), "src/a.py")
    article(repo, "src/a", date(0))
    article(repo, "src/a/child", date(0))
    store, assets, times = signals(repo)
    assert not [f for f in check(store, assets, times) if f.code.startswith("relations")]


def test_check_reports_a_malformed_schema_once(repo: Path):
    commit(repo, day(0), "src/a.py")
    write(repo, ".canon/schema.json", "{nope")
    article(repo, "src/a", date(0))
    article(repo, "src/b", date(0))
    store, assets, times = signals(repo)
    bad = [f for f in check(store, assets, times) if "schema" in f.code]
    assert [(f.address, f.code, f.severity) for f in bad] == [("", "schema-malformed", "error")]


def test_check_on_a_missing_store_is_empty(repo: Path):
    commit(repo, day(0), "src/a.py")
    assert check(Store(repo)) == []


def test_check_builds_its_own_signals(repo: Path):
    commit(repo, day(0), "src/a.py")
    commit(repo, day(9), "src/a.py")
    article(repo, "src/a", date(1))
    store = Store(repo)
    store.refresh()
    assert ("src/a", "stale") in _codes(check(store))
    assert ("src/a", "stale") not in _codes(check(store, staleness=False))


def test_article_findings_equal_the_whole_store_check_per_article(repo: Path):
    """The incremental re-check of one article agrees with the whole-store check."""
    commit(repo, day(0), "src/a.py", "src/b.py", "lib/x/y.py")
    commit(repo, day(9), "src/a.py", "lib/x/y.py")
    write(
        repo,
        ".canon/schema.json",
        json.dumps({"relations": {"orphan": {"warn": True}, "children": {"listed": True}}}),
    )
    article(repo, "src", date(0), body="[[src/a]] [[nowhere]]")
    article(repo, "src/a", date(1), body="[[src]]")
    article(repo, "src/gone", date(1))
    article(repo, "lib", date(1))
    article(repo, "lib/x", date(1), stale_after=date(3))
    store, assets, times = signals(repo)
    whole = check(store, assets, times)
    for address in store.addresses():
        one = article_findings(store, address, assets, times)
        assert sorted(one, key=repr) == sorted(
            (f for f in whole if f.address == address), key=repr
        ), address
    assert article_findings(store, "no/such", assets, times) == []


# -- against the benchmark generator's ground truth -----------------------------------------


def test_spec_9_orphans_and_stale_match_generated_ground_truth(tmp_path: Path, monkeypatch):
    """A synthetic project (benchmarks/gen_repo.py: real git history via fast-import) whose
    manifest lists the orphaned and stale articles by the SPEC §9 rules."""
    gen = Path(__file__).resolve().parents[2] / "benchmarks" / "gen_repo.py"
    out = tmp_path / "gen"
    cmd = [sys.executable, str(gen), "--out", str(out), "--files", "1500", "--articles", "150"]
    subprocess.run([*cmd, "--commits", "200", "--seed", "7"], check=True, capture_output=True)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    monkeypatch.setenv("CANON_TODAY", manifest["today"])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    store, assets, times = signals(out / "repo")
    assert sorted(orphans(store, assets)) == manifest["orphaned"]
    assert sorted(stale(store, assets, times)) == manifest["stale"]


def test_spec_8_mount_articles_are_linted_but_not_judged_orphan_or_stale(repo: Path, tmp_path):
    """SPEC §8 mounts: their articles get lints; orphan/stale judge the project's own assets."""
    lake = tmp_path / "lake"
    write(lake, ".canon/articles/prices/daily.md", "---\ncapsule: Daily prices.\n---\n[[nope]]\n")
    write(lake, "prices/other.csv")
    commit(repo, day(0), "src/a.py")
    article(repo, "src/a", date(0))
    store = Store(repo, mounts=[str(lake)])
    store.refresh()
    assert "lake:prices/daily" in store.addresses()
    found = check(store, Assets(repo, store.root), ChangeTimes(repo))
    lake_codes = {f.code for f in found if f.address.startswith("lake:")}
    assert "broken-link" in lake_codes
    assert not lake_codes & {"orphan", "stale"}
    one = article_findings(store, "lake:prices/daily", Assets(repo), ChangeTimes(repo))
    assert {f.code for f in one} == lake_codes


def test_spec_3_a_colon_in_a_project_address_is_not_a_mount(repo: Path):
    """Only a configured mount name makes 'name:…' a mount address (SPEC §3, §8)."""
    commit(repo, day(0), "docs/a:b.md", "docs/keep.md")
    commit(repo, day(9), "docs/a:b.md")
    article(repo, "docs/a:b", date(1))
    article(repo, "docs/x:gone", date(1))
    store, assets, times = signals(repo)
    assert "docs/a:b" in stale(store, assets, times)
    assert orphans(store, assets) == ["docs/x:gone"]
