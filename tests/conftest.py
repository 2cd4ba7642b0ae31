"""Shared fixtures: a real project directory in tmp with a fixed CANON_TODAY."""

from __future__ import annotations

from pathlib import Path

import pytest

from canon_ls.core.store import Store

TODAY = "2026-11-29"


@pytest.fixture
def today(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("CANON_TODAY", TODAY)
    return TODAY


@pytest.fixture
def project(tmp_path: Path, today: str) -> Path:
    """An empty project directory (no .canon/ yet) with CANON_TODAY set."""
    root = tmp_path / "proj"
    root.mkdir()
    return root


@pytest.fixture
def store(project: Path) -> Store:
    return Store(project)


def make_files(root: Path, *paths: str) -> None:
    """Create empty asset files (and their directories) under root."""
    for rel in paths:
        p = root / rel
        if rel.endswith("/"):
            p.mkdir(parents=True, exist_ok=True)
        else:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.touch()
