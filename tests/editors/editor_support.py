"""Helpers of the real-editor tests: a governed workspace on disk and the tools' locations.

The workspace is real files in a tmp dir with real git history: `src/app.py` governed by
`.canon/articles/src/app.md`, `src/util.py` with no article, and `src/legacy.md`, an orphan
article (its parent directory `src/` exists, no asset maps to it; SPEC §6.1 item 5, §9), and
`src/feed.py`, whose article (updated 2026-10-01) is stale: two commits touched the file since,
the newest on 2026-11-10 "Retry on 429" (SPEC §9.1).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TODAY = "2026-11-29"
APP_CAPSULE = "Entry point: wires config and routes; never reads the environment directly."
LEGACY_CAPSULE = "Old feed poller, replaced by the queue consumer."
FEED_EVIDENCE = "2 commits in 59 days since updated 2026-10-01 touched src/feed.py"
CACHE = Path(os.environ.get("CANON_EDITOR_CACHE", REPO / ".cache" / "editors"))


def venv_bin() -> Path:
    return Path(sys.executable).parent


def tool_env(home: Path) -> dict[str, str]:
    """Environment for editor processes: the venv (canon-ls, nvim) first, state kept in tmp."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(venv_bin()), env.get("PATH", "")])
    env["CANON_TODAY"] = TODAY
    env["HOME"] = str(home)
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        path = home / name.lower()
        path.mkdir(parents=True, exist_ok=True)
        env[name] = str(path)
    return env


def _git(cwd: Path, *args: str, date: str) -> None:
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_DATE=date,
        GIT_COMMITTER_DATE=date,
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.invalid",
    )
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def make_workspace(root: Path) -> Path:
    """Write the governed workspace described in the module docstring and commit it."""
    files = {
        "src/app.py": '"""Application entry point."""\n\nfrom src import util\n\nutil.run()\n',
        "src/util.py": "def run():\n    print('hello from util')\n",
        "README.md": "# demo\n\nSee [the app](src/app.py).\n",
        ".canon/schema.json": (
            '{"schema_version": 1,\n'
            ' "article": {"capsule": {"max_chars": 1000}, "body": {"max_chars": 8000}}}\n'
        ),
        ".canon/articles/src/app.md": (
            f'---\ncapsule: "{APP_CAPSULE}"\nupdated: 2026-11-20\n---\n# src/app\n'
            "Routes are registered in one table; config comes from src/config.\n"
        ),
        "src/feed.py": '"""Feed fetcher."""\n\ndef fetch():\n    return get()\n',
        ".canon/articles/src/feed.md": (
            "---\ncapsule: Fetches the feed; retries are the caller's job.\nupdated: 2026-10-01\n"
            "---\n# src/feed\nOne GET, no retry.\n"
        ),
        ".canon/articles/src/legacy.md": (
            f"---\ncapsule: {LEGACY_CAPSULE}\nupdated: 2026-11-20\n---\n# src/legacy\n"
            "Polled the feed every minute.\n"
        ),
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    _git(root, "init", "-q", "-b", "main", date="2026-11-01T10:00:00")
    _git(root, "add", "-A", date="2026-11-01T10:00:00")
    _git(root, "commit", "-q", "-m", "initial", date="2026-11-01T10:00:00")
    feed = root / "src" / "feed.py"
    feed.write_text(feed.read_text(encoding="utf-8").replace("get()", "retry(get)"), "utf-8")
    _git(root, "commit", "-q", "-am", "Retry on 429", date="2026-11-10T10:00:00")
    return root


def need(path: Path | str | None, what: str) -> str:
    """The path of a tool the editor tests need; a clear skip naming the installer otherwise.

    Under CI (CI=true, set by the CI runner) a missing tool fails instead: .ci/run installs
    everything first, so a skip there would hide a broken install step.
    """
    if not path or not Path(path).exists():
        message = f"{what} is missing: run scripts/install_editor_deps.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return str(path)


def node_bin() -> str | None:
    """Node for the JS tooling: the installer's Node 24 (code-server needs it), else PATH's."""
    cached = CACHE / "bin" / "node"
    return str(cached) if cached.exists() else shutil.which("node")


def doc_block(doc: Path, first_line: str) -> str:
    """The fenced code block of a Markdown file that starts with `first_line`, so a test runs
    what the docs tell a user to run, as written."""
    for match in re.finditer(r"```\w*\n(.*?)```", doc.read_text(encoding="utf-8"), re.S):
        if match.group(1).startswith(first_line):
            return match.group(1)
    raise AssertionError(f"{doc.relative_to(REPO)} has no code block starting {first_line!r}")
