"""SPEC §9.1: `canon mcp` keeps each folder's newest change below it (core/storage/inotify.py
TreeTimes) so a warm read stats no big tree. What git does inside `.git` is no asset's change:
that folder is neither walked nor watched, so `git gc` pruning loose objects does not throw the
table away (a new walk: 2.5 s at 50k articles)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from canon_ls.core.storage import inotify
from canon_ls.core.storage.inotify import TreeTimes

pytestmark = pytest.mark.skipif(not inotify.available(), reason="needs inotify (Linux)")


def test_spec_9_1_git_pruning_its_objects_leaves_the_folder_times_ready(tmp_path: Path) -> None:
    top = tmp_path / "proj"
    for folder in (".git/objects/ab", "src/a"):
        (top / folder).mkdir(parents=True)
    (top / "src/a/f.py").write_text("x\n", encoding="utf-8")
    times = TreeTimes(str(top))
    assert times.ready.wait(30)
    assert not [f for f in times.below if "/.git" in f[len(str(top)) :]]
    before = times.newest(str(top / "src"))
    assert before is not None
    shutil.rmtree(top / ".git/objects/ab")  # as `git gc` prunes loose objects
    (top / ".git/objects/cd").mkdir()
    assert times.newest(str(top / "src")) == before  # still ready: no new walk
    (top / "src/a/f.py").write_text("y\n", encoding="utf-8")
    after = times.newest(str(top / "src"))
    assert after is not None and after > before  # an edit inside still shows
    shutil.rmtree(top / "src/a")  # a folder walked is gone: the table is walked again
    assert times.newest(str(top / "src")) is None
    assert times.ready.wait(30) and times.newest(str(top / "src")) is not None
