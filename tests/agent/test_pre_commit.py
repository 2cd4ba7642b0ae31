"""The shipped pre-commit hook (issue 27 item 2): `.pre-commit-hooks.yaml` exposes `canon
check`, run by the real `pre-commit` package in a temporary repository that uses this
repository (a path copy of its tracked files) as the hook's source, as a team's config would."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GIT = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "A",
    "GIT_AUTHOR_EMAIL": "a@example.invalid",
    "GIT_COMMITTER_NAME": "A",
    "GIT_COMMITTER_EMAIL": "a@example.invalid",
}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def hook_source(tmp_path: Path) -> tuple[Path, str]:
    """This repository's tracked files as they are now, committed in a repository of their own."""
    source = tmp_path / "canon-ls"
    for rel in git(REPO, "ls-files", "-z").split("\0"):
        if rel and (REPO / rel).is_file():
            (source / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, source / rel)
    git(source, "init", "-q")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "the hook's source")
    return source, git(source, "rev-parse", "HEAD")


def test_the_hook_runs_canon_check_and_fails_on_errors(tmp_path: Path) -> None:
    assert (REPO / ".pre-commit-hooks.yaml").is_file()
    source, rev = hook_source(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {source}\n  rev: {rev}\n  hooks:\n  - id: canon-check\n",
        encoding="utf-8",
    )
    article = project / ".canon" / "articles" / "src" / "app.md"
    article.parent.mkdir(parents=True)
    article.write_text("---\ncapsule: The entry point.\n---\n# src/app\n", encoding="utf-8")
    git(project, "add", "-A")
    env = {**os.environ, **GIT, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    env.pop("VIRTUAL_ENV", None)
    pre_commit = [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"]

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            pre_commit, cwd=project, env=env, capture_output=True, text=True, timeout=900
        )

    passed = run()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "canon check" in passed.stdout and "Passed" in passed.stdout

    article.write_text("---\ncapsule: [unclosed\n---\n# src/app\n", encoding="utf-8")
    failed = run()
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "Failed" in failed.stdout and "[malformed-front-matter]" in failed.stdout
