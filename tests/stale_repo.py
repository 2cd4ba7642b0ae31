"""A project whose history is known to the second (SPEC §9.1, §9.2): dated commits, two stale
articles (one by commits, one by commits plus an uncommitted edit), a `stale_after` topic, a
fresh article, journal entries, links and tags. Shared by the core, CLI and LSP tests.

Every commit is stamped at noon UTC (GIT_AUTHOR_DATE/GIT_COMMITTER_DATE), so its calendar day
is the same in every usual time zone; "today" is CANON_TODAY = 2026-11-29.
"""

from __future__ import annotations

import calendar
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

TODAY = "2026-11-29"


def noon(date: str) -> int:
    y, m, d = (int(x) for x in date.split("-"))
    return calendar.timegm((y, m, d, 12, 0, 0))


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def git(root: Path, *args: str, date: str = "", author: str = "Ann Lee") -> str:
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": author,
        "GIT_AUTHOR_EMAIL": "dev@example.invalid",
        "GIT_COMMITTER_NAME": author,
        "GIT_COMMITTER_EMAIL": "dev@example.invalid",
    }
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{noon(date)} +0000"
    done = subprocess.run(
        ["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def article(capsule: str, body: str, **meta: str) -> str:
    lines = ["---", f"capsule: {capsule}"] + [f"{k}: {v}" for k, v in meta.items()] + ["---"]
    return "\n".join(lines) + "\n" + body


@dataclass
class Repo:
    root: Path
    hashes: dict[str, str] = field(default_factory=dict)  # commit subject -> short hash


COMMITS = [
    # (date, author, subject, {path: text})
    (
        "2026-10-01",
        "Ann Lee",
        "Initial import",
        {
            "src/feed/fetch.py": "def fetch():\n    return get()\n",
            "src/feed/parse.py": "def parse(x):\n    return x\n",
            "src/feed/util.py": "def util():\n    return 1\n",
            "src/app.py": "from feed import fetch\n",
        },
    ),
    (
        "2026-10-15",
        "Bob Ray",
        "Tune timeouts",
        {"src/feed/fetch.py": "def fetch():\n    return get(timeout=5)\n"},
    ),
    (
        "2026-10-21",
        "Ann Lee",
        "Document the fetcher",
        {
            ".canon/articles/src/feed/fetch.md": article(
                "Fetches feeds over HTTP; retries are the caller's job.",
                "# src/feed/fetch\n\nCalls get() with a 5 s timeout.\n",
                updated="2026-10-21",
                tags="[retry, http, network]",
            ),
            ".canon/articles/src/feed.md": article(
                "The feed pipeline (fetch, parse, util).",
                "# src/feed\n\nSee [[src/feed/fetch]] and [[src/feed/gone]].\n",
                updated="2026-10-21",
                reviewed="2026-11-05",
            ),
            ".canon/articles/src/app.md": article(
                "The app entry point; wires [[src/feed/fetch]] in.",
                "# src/app\n\nUses [[src/feed/fetch]]. No retry logic lives here.\n",
                updated="2026-11-28",
            ),
            ".canon/articles/notes/policy.md": article(
                "Release policy; re-check it every quarter.",
                "# notes/policy\n\nShip on Tuesdays.\n",
                updated="2026-10-01",
                stale_after="2026-11-01",
            ),
            ".canon/journal/2026-10-10-fetch-choice.md": (
                "---\ndate: 2026-10-10\nsubject:\n  - src/feed/fetch\nsource: cli\n---\n"
                "Chose plain HTTP over a client library.\n"
            ),
        },
    ),
    (
        "2026-11-02",
        "Bob Ray",
        "Add backoff",
        {"src/feed/fetch.py": "def fetch():\n    return backoff(get, timeout=5)\n"},
    ),
    (
        "2026-11-10",
        "Ann Lee",
        "Parse dates",
        {"src/feed/parse.py": "def parse(x):\n    return dates(x)\n"},
    ),
    (
        "2026-11-20",
        "Bob Ray",
        "Fix fetch and its article",
        {
            "src/feed/fetch.py": "def fetch():\n    return backoff(get, timeout=10)\n",
            ".canon/articles/src/feed/fetch.md": article(
                "Fetches feeds over HTTP; retries are the caller's job.",
                "# src/feed/fetch\n\nCalls get() with a 10 s timeout.\n",
                updated="2026-10-21",
                tags="[retry, http, network]",
            ),
            ".canon/journal/2026-11-21-fetch-retries.md": (
                "---\ndate: 2026-11-21\nsubject:\n  - src/feed/fetch\nsource: mcp\n---\n"
                "Retries now back off.\n"
            ),
        },
    ),
    (
        "2026-11-27",
        "Ann Lee",
        "Retry on 429",
        {"src/feed/fetch.py": "def fetch():\n    return retry(429, backoff(get, timeout=10))\n"},
    ),
]


def build(root: Path) -> Repo:
    """The project above, plus an uncommitted edit of src/feed/util.py dated 2026-11-28."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    repo = Repo(root)
    for date, author, subject, files in COMMITS:
        for rel, text in files.items():
            write(root, rel, text)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", subject, date=date, author=author)
        repo.hashes[subject] = git(root, "log", "-1", "--format=%h")
    write(root, "src/feed/util.py", "def util():\n    return 2\n")
    os.utime(root / "src/feed/util.py", (noon("2026-11-28"), noon("2026-11-28")))
    return repo
