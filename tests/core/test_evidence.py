"""SPEC §9.1 staleness evidence in core: the one-line form and its variants, the verdict it
agrees with, and re-dating it after a review (what the language server does after an edit)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from stale_repo import Repo, build, noon

from canon_ls.core.checking import assets as core_assets
from canon_ls.core.git.changes import ChangeTimes
from canon_ls.core.git.evidence import Change, Dates, Evidence
from canon_ls.core.git.staleness import evidence_for, stale_evidence
from canon_ls.core.storage.store import Store


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("CANON_TODAY", "2026-11-29")
    return build(tmp_path / "proj")


def test_spec_9_1_whole_store_and_one_article_agree(repo: Repo, tmp_path: Path):
    """stale_evidence (check, the language server) and evidence_for (read) give equal facts."""
    store = Store(repo.root)
    assets = core_assets.Assets(repo.root, store.root)
    times = ChangeTimes(repo.root, cache_dir=tmp_path / "cache")
    every = stale_evidence(store, assets, times)
    assert set(every) == {"src/feed/fetch", "src/feed", "notes/policy"}
    for address, found in every.items():
        assert evidence_for(store, address, times) == found
    assert evidence_for(store, "src/app", times) is None
    fetch = every["src/feed/fetch"]
    assert [c.subject for c in fetch.commits] == [
        "Retry on 429",
        "Fix fetch and its article",
        "Add backoff",
    ]
    assert fetch.short() == "stale · 3 commits since 2026-10-21"
    assert every["src/feed"].short() == "stale · 1 commit, 1 uncommitted file since 2026-11-05"
    assert every["notes/policy"].short() == "stale · stale_after 2026-11-01 passed"


def test_spec_9_1_since_redates_after_a_review_or_an_update(repo: Repo, tmp_path: Path):
    """A later reference date keeps only what came after it; an earlier one cannot be told
    from the evidence alone (None: gather again)."""
    store = Store(repo.root)
    times = ChangeTimes(repo.root, cache_dir=tmp_path / "cache")
    fetch = evidence_for(store, "src/feed/fetch", times)
    assert fetch is not None
    later = fetch.since(Dates("2026-10-21", "2026-11-10", ""), "2026-11-29", never)
    assert later is not None and later.line().startswith(
        "stale: 2 commits in 19 days since reviewed 2026-11-10 touched src/feed/fetch.py"
    )
    nothing_after = Dates("2026-10-21", "2026-11-28", "")
    assert fetch.since(nothing_after, "2026-11-29", never) is None
    assert fetch.since(Dates("2026-10-01", "", ""), "2026-11-29", never) is None  # unknown


def test_spec_9_since_counts_from_the_article_s_own_change_on_its_day(repo: Repo, tmp_path: Path):
    """Reviewed the day of the newest commit: that commit counts only when it came after the
    article's own change that day (issue 27: a later commit the same day is stale)."""
    store = Store(repo.root)
    times = ChangeTimes(repo.root, cache_dir=tmp_path / "cache")
    fetch = evidence_for(store, "src/feed/fetch", times)
    assert fetch is not None
    reviewed = Dates("2026-10-21", "2026-11-27", "", "the article")
    morning = fetch.since(reviewed, "2026-11-29", lambda _: noon("2026-11-27") - 3600.0)
    assert morning is not None and morning.line().startswith(
        "stale: 1 commit in 2 days since reviewed 2026-11-27 touched src/feed/fetch.py"
    )
    assert fetch.since(reviewed, "2026-11-29", lambda _: noon("2026-11-27") + 1.0) is None
    assert fetch.since(reviewed, "2026-11-29", lambda _: float(noon("2026-11-27"))) is None


def never(_: str) -> float:
    """An article file with no known change (the reference day alone decides)."""
    return 0.0


def test_spec_9_1_without_git_changes_are_file_times(tmp_path: Path, monkeypatch):
    """No repository: the evidence counts changed files by mtime, without 'uncommitted'."""
    monkeypatch.setenv("CANON_TODAY", "2026-11-29")
    root = tmp_path / "plain"
    (root / "src").mkdir(parents=True)
    for name, date in (("a.py", "2026-11-20"), ("b.py", "2026-11-25"), ("c.py", "2026-10-01")):
        (root / "src" / name).write_text("x\n", encoding="utf-8")
        os.utime(root / "src" / name, (noon(date), noon(date)))
    store = Store(root)
    store.write("src", capsule="The sources.", body="# src\n")
    (root / ".canon/articles/src.md").write_text(
        "---\ncapsule: The sources.\nupdated: 2026-11-01\n---\n# src\n", encoding="utf-8"
    )
    store.refresh()
    found = evidence_for(store, "src", ChangeTimes(root))
    assert found is not None and not found.git
    assert found.line() == (
        "stale: 2 files changed in 28 days since updated 2026-11-01: src/b.py, src/a.py"
    )


def test_spec_9_1_one_line_form_for_many_files_and_long_subjects():
    change = Change("3f2a9c1", noon("2026-11-30"), "2026-11-30", "A", "x" * 100, ("b.py", "a.py"))
    older = Change("1111111", noon("2026-11-01"), "2026-11-01", "A", "older", ("c.py",))
    found = Evidence(
        address="src/feed",
        reference="2026-10-21",
        basis="updated",
        today="2026-12-01",
        commits=(change, older),
        uncommitted=(
            ("d.py", "2026-11-30", float(noon("2026-11-30"))),
            ("e.py", "2026-11-29", float(noon("2026-11-29"))),
            ("f.py", "2026-11-29", float(noon("2026-11-29"))),
            ("g.py", "2026-11-28", float(noon("2026-11-28"))),
        ),
    )
    assert found.line() == (
        "stale: 2 commits in 41 days since updated 2026-10-21 touched b.py and 2 other files "
        f'(newest 3f2a9c1 2026-11-30 "{"x" * 79}…"); 4 files changed uncommitted: d.py, e.py, '
        "f.py and 1 more"
    )
    assert found.message().endswith("; update it, or mark it reviewed if it still holds.")
