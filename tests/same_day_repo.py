"""Projects whose article and code change on the same day (SPEC §9, §9.1): the article's own
last change, not the end of its reference day, is where a governed change starts to count.

Times are UTC, between 09:00 and 16:00, so each lands on the same calendar day in every usual
time zone; "today" is CANON_TODAY = 2026-11-29.
"""

from __future__ import annotations

import calendar
import os
import subprocess
from pathlib import Path

from stale_repo import article, git, write

TODAY = "2026-11-29"


def at(date: str, hour: int) -> int:
    y, m, d = (int(x) for x in date.split("-"))
    return calendar.timegm((y, m, d, hour, 0, 0))


def commit(root: Path, subject: str, when: int, files: dict[str, str]) -> str:
    """Write `files`, commit them (only them) at epoch `when`, return the short hash."""
    for rel, text in files.items():
        write(root, rel, text)
    git(root, "add", "--", *files)
    git_at(root, when, "commit", "-q", "-m", subject)
    return git(root, "log", "-1", "--format=%h")


def git_at(root: Path, when: int, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Ann Lee",
        "GIT_AUTHOR_EMAIL": "dev@example.invalid",
        "GIT_COMMITTER_NAME": "Ann Lee",
        "GIT_COMMITTER_EMAIL": "dev@example.invalid",
        "GIT_AUTHOR_DATE": f"{when} +0000",
        "GIT_COMMITTER_DATE": f"{when} +0000",
    }
    return subprocess.run(
        ["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def x_article(updated: str, body: str = "Loads x.\n") -> str:
    return article("Loads x; the only reader of X.", "# src/x\n\n" + body, updated=updated)


def build(root: Path, *, later_day: str = TODAY) -> dict[str, str]:
    """A code-and-article commit on 2026-11-20 (updated that day), then one change of the code
    at 15:00 on `later_day` (the same day too when it is 2026-11-20). Subject -> short hash."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    hashes = {}
    hashes["Write x and its article"] = commit(
        root,
        "Write x and its article",
        at("2026-11-20", 10),
        {"src/x.py": "X = 1\n", ".canon/articles/src/x.md": x_article("2026-11-20")},
    )
    hashes["Change x"] = commit(root, "Change x", at(later_day, 15), {"src/x.py": "X = 2\n"})
    return hashes
