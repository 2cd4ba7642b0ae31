"""A small project whose `login.ts` can be renamed in a commit (the rename search's tests), and
a `git` first on PATH that logs each call's arguments (what git was asked, and in which order)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from stale_repo import git, write

ARTICLE = "---\ncapsule: Logs a person in.\nupdated: 2026-01-01\n---\n# login\n\nBody.\n"


def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write(root, "src/auth/login.ts", "export function login() {\n  return 1;\n}\n" * 5)
    write(root, "src/auth/other.ts", "x\n")
    write(root, ".canon/articles/src/auth/login.md", ARTICLE)
    write(root, ".canon/articles/src/auth/other.md", ARTICLE.replace("login", "other"))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    return root


def renamed(tmp_path: Path) -> Path:
    """The project with `login.ts` renamed to `signin.ts` in a commit (its article orphaned)."""
    root = project(tmp_path)
    git(root, "mv", "src/auth/login.ts", "src/auth/signin.ts")
    git(root, "commit", "-qm", "rename")
    return root


def logging_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put a `git` first on PATH that appends its arguments to the file returned, one call a
    line, then runs the real git."""
    real = shutil.which("git")
    bindir, log = tmp_path / "bin", tmp_path / "argv"
    bindir.mkdir()
    (bindir / "git").write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{real}" "$@"\n')
    (bindir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    log.touch()
    return log
