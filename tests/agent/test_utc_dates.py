"""SPEC §5 dates: `updated`, journal file names and the days staleness compares follow one
clock, the UTC date, as pi-canon stamps them (issue 22 item 10). Run with a TZ whose local
date differs from the UTC date right now, so a local-clock date cannot pass."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

from tests.agent.test_cli import canon


def _utc_dates() -> set[str]:
    """Today's UTC date (and the next, should the test straddle midnight UTC)."""
    now = dt.datetime.now(dt.UTC)
    return {now.date().isoformat(), (now + dt.timedelta(minutes=5)).date().isoformat()}


def _far_zone() -> dict[str, str]:
    """A POSIX TZ (no zone files needed) whose local date is neither the UTC date now nor in five
    minutes: UTC-12 before noon UTC, UTC+14 after, UTC-24 in the minutes before midnight (when
    the other two land on one of those dates)."""
    for zone in ("ZZZ+12", "ZZZ-14", "ZZZ+24"):
        env = {"TZ": zone, "CANON_TODAY": ""}
        local = subprocess.run(["date", "+%F"], env=dict(os.environ, **env), capture_output=True)
        if local.stdout.decode().strip() not in _utc_dates():
            return env
    raise AssertionError("no zone shifts the date")


def test_updated_and_journal_names_are_utc_dates(project: Path) -> None:
    env = _far_zone()
    wrote = canon("write", "src/core/config.py", "--capsule", "Loads config.", cwd=project, env=env)
    assert wrote.code == 0, wrote.err
    text = (project / ".canon/articles/src/core/config.md").read_text()
    updated = next(line for line in text.splitlines() if line.startswith("updated: "))
    assert updated[len("updated: ") :] in _utc_dates(), text
    assert canon("journal", "Chose env over file.", cwd=project, env=env).code == 0
    (entry,) = (project / ".canon/journal").glob("*.md")
    assert entry.name[:10] in _utc_dates(), entry.name


def test_a_commit_made_right_after_a_write_is_the_same_day(project: Path) -> None:
    """Staleness compares days of one clock: a file committed just after its article was
    written is not 'changed after updated', whatever the local zone."""
    env = _far_zone()
    git_env = dict(os.environ, **env, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t")
    git_env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=project, env=git_env, check=True)
    assert (
        canon("write", "src/core/config.py", "--capsule", "Loads.", cwd=project, env=env).code == 0
    )
    (project / "src/core/config.py").write_text("X = 2\n", encoding="utf-8")
    subprocess.run(["git", "commit", "-qam", "Change"], cwd=project, env=git_env, check=True)
    read = canon("read", "src/core/config.py", cwd=project, env=env)
    assert "stale:" not in read.out, read.out
