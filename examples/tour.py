"""A tour of the demo store with the real `canon` CLI (scripts/demo.sh runs it).

Copies examples/demo to a temporary directory (the original is never touched), pins the clock
(CANON_TODAY) and the source files' modification times so the orphan and stale findings are the
same on every machine, then prints what an agent would see from `canon read`, `map`, `search`
and `check`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

DEMO = Path(__file__).resolve().parent / "demo"
TODAY = "2026-11-29"
# All demo sources "last changed" on this day: before every article's `updated`, so only the
# article with `stale_after` in the past reads as stale.
SOURCES_TIME = datetime(2026, 9, 1, 12, 0, tzinfo=UTC).timestamp()


def canon_command() -> list[str]:
    """The installed console script next to this interpreter, else the module."""
    script = Path(sys.executable).with_name("canon")
    if script.exists():
        return [str(script)]
    found = shutil.which("canon")
    return [found] if found else [sys.executable, "-m", "canon_ls.agent.cli"]


def prepare(target: Path, git: bool = False) -> Path:
    """A throwaway copy of the demo with pinned source mtimes; returns the project root.

    With `git=True` the copy also becomes a git repository with one commit dated on the same
    pinned day (SPEC §9 then takes change times from git, and the findings stay the same).
    """
    project = target / "demo"
    shutil.copytree(DEMO, project)
    for path in project.rglob("*"):
        if ".canon" not in path.relative_to(project).parts:
            os.utime(path, (SOURCES_TIME, SOURCES_TIME))
    if git:
        stamp = datetime.fromtimestamp(SOURCES_TIME, UTC).isoformat()
        env = dict(os.environ, GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
        ident = ["-c", "user.name=canon demo", "-c", "user.email=demo@example.invalid"]
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "demo"]):
            subprocess.run(["git", *ident, *args], cwd=project, env=env, check=True)
    return project


def canon(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real `canon` CLI on `project`, with the demo's fixed "today"."""
    return subprocess.run(
        [*canon_command(), *args],
        cwd=project,
        env=dict(os.environ, CANON_TODAY=TODAY),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )


def run(project: Path, *args: str) -> str:
    proc = canon(project, *args)
    out = proc.stdout + proc.stderr
    return out.rstrip("\n") + f"\n[exit {proc.returncode}]"


def section(title: str, command: str, output: str) -> None:
    print(f"\n== {title}\n$ {command}")
    print(output)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Tour the demo store with the canon CLI.")
    parser.add_argument("--graph", metavar="FILE", help="also keep the HTML graph page as FILE")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="canon-tour-") as tmp:
        project = prepare(Path(tmp))
        print(f"canon tour: a copy of examples/demo in {project} (CANON_TODAY={TODAY})")
        steps = [
            ("The store at a glance", ["status"]),
            ("Read the article governing a file", ["read", "src/core/config.py"]),
            (
                "A file without its own article: the nearest ancestor answers",
                ["read", "src/feed/__init__.py"],
            ),
            ("Every article under a prefix", ["map", "src/feed"]),
            ("The whole map", ["map"]),
            ("Search in English", ["search", "retry budget"]),
            ("Search in Chinese (CJK bigrams)", ["search", "日期格式"]),
            ("Search with the journal included", ["search", "--journal", "keyring"]),
            ("Whole-store check (broken link, orphan, stale)", ["check"]),
        ]
        for title, args in steps:
            section(title, "canon " + " ".join(args), run(project, *args))
        page = Path(options.graph).resolve() if options.graph else Path(tmp) / "graph.html"
        args = ["graph", "--out", str(page)]
        section("The graph page (self-contained HTML)", "canon " + " ".join(args),
                run(project, *args))  # fmt: skip
        if not options.graph:
            print("(to keep the page: bash scripts/demo.sh --graph FILE)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
