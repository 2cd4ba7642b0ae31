"""The whole pass's staleness laid over the listing (core/git/dated.py) against the pair-by-pair
walk it replaces: the same newest changes and the same evidence (SPEC §9, §9.1), with
untracked, dirty, deleted, non-ASCII and store paths between the tracked ones."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from stale_repo import build, git, noon, write

from canon_ls.core.checking.assets import Assets
from canon_ls.core.git.changes import ChangeTimes
from canon_ls.core.git.staleness import (
    Governed,
    evidence_of,
    newest_changes,
    project_addresses,
    project_dates,
)
from canon_ls.core.storage.store import Store


def _dated(root: Path, rel: str, date: str, text: str = "x\n") -> None:
    write(root, rel, text)
    os.utime(root / rel, (noon(date), noon(date)))


def test_spec_9_laid_over_the_listing_equals_the_walk(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("CANON_TODAY", "2026-11-29")
    root = build(tmp_path / "proj").root
    write(root, "src/feed/old.py", "gone soon\n")
    write(root, "src/feed/dropped.py", "deleted in a commit\n")
    write(root, "zz/last.py", "after every other path\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "More files", date="2026-11-28")
    git(root, "rm", "-q", "src/feed/dropped.py")
    git(root, "commit", "-q", "-m", "Drop one", date="2026-11-28")
    (root / "src/feed/old.py").unlink()  # deleted in the work tree only
    _dated(root, "src/feed/new.py", "2026-11-25")  # untracked
    _dated(root, "src/feed/ünï.py", "2026-11-26")  # untracked, not ASCII
    _dated(root, "src/app.py", "2026-11-29", "changed\n")  # dirty
    _dated(root, "zz/zzz.py", "2026-11-24")  # untracked, after the history's last path
    _dated(root, "0first.py", "2026-11-23")  # untracked, before the history's first path
    for rel in ("src/feed/new.md", "zz.md", "0first.md"):
        write(root / ".canon/articles", rel, "---\ncapsule: C.\nupdated: 2026-10-02\n---\n# x\n")

    store = Store(root)
    assets = Assets(root, store_root=store.root)
    times = ChangeTimes(root, cache_dir=tmp_path / "cache")
    survey = assets.survey(project_addresses(store))
    fast = Governed(assets, survey)
    assert fast.timeline(times) is not None  # laid over the listing, not walked
    walked = list(Governed(assets, survey))  # a plain iterable: the walk
    newest = newest_changes(fast, times)
    assert newest == newest_changes(walked, times)
    assert list(newest) == list(newest_changes(walked, times))
    assert newest["src/app"][1] == "src/app.py"  # the dirty file, by its mtime
    assert newest["zz"] == (float(noon("2026-11-28")), "zz/last.py")
    dates = project_dates(store)
    found = evidence_of(dates, fast, times, newest)
    assert found == evidence_of(dates, walked, times, newest)
    assert set(found) >= {"src/feed", "src/feed/new", "zz", "0first", "src/app"}
    assert [u[0] for u in found["src/feed"].uncommitted] == ["src/feed/ünï.py"]
    assert [u[0] for u in found["src/app"].uncommitted] == ["src/app.py"]


@pytest.mark.parametrize("untracked", [0, 3, 40])
def test_spec_9_listing_without_history_paths(tmp_path: Path, monkeypatch, untracked: int):
    """Untracked runs of every length between tracked paths date by mtime, as the walk does."""
    monkeypatch.setenv("CANON_TODAY", "2026-11-29")
    root = build(tmp_path / "proj").root
    for i in range(untracked):
        _dated(root, f"src/feed/u{i:03}.py", "2026-11-2" + str(i % 9))
    store = Store(root)
    assets = Assets(root, store_root=store.root)
    times = ChangeTimes(root, cache_dir=tmp_path / "cache")
    survey = assets.survey(project_addresses(store))
    fast, walked = Governed(assets, survey), list(Governed(assets, survey))
    newest = newest_changes(fast, times)
    assert list(newest.items()) == list(newest_changes(walked, times).items())
    dates = project_dates(store)
    assert evidence_of(dates, fast, times, newest) == evidence_of(dates, walked, times, newest)


def test_spec_9_a_survey_of_another_listing_falls_back_to_the_walk(tmp_path: Path, monkeypatch):
    """Rows that do not match the listing are never laid over it: the pairs are walked."""
    monkeypatch.setenv("CANON_TODAY", "2026-11-29")
    root = build(tmp_path / "proj").root
    store = Store(root)
    assets = Assets(root, store_root=store.root)
    times = ChangeTimes(root, cache_dir=tmp_path / "cache")
    survey = assets.survey(project_addresses(store))
    _dated(root, "src/feed/late.py", "2026-11-25")  # listed after the survey
    assets.refresh()
    assert Governed(assets, survey).timeline(times) is None
