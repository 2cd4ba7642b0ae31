"""Shared fixtures: a real project directory in tmp with a fixed CANON_TODAY."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

from canon_ls.core.storage.store import Store

TODAY = "2026-11-29"
SCRATCH = pytest.StashKey[Path]()

# Property tests give the same verdict on every run (CI): examples are derived from each test,
# not drawn at random, and no example database carries state between runs. Explore new random
# examples locally with `pytest --hypothesis-profile=random` (failures print a reproduction).
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("random", derandomize=False, print_blob=True)
settings.load_profile("ci")


def pytest_configure(config: pytest.Config) -> None:
    """Keep the suite's caches, agent state and settings out of the user's home (~/.cache, …).

    Set before any test starts so that every subprocess (CLI, MCP, hooks, language server)
    inherits it; the npm installs of agent CLIs use their own CANON_NPM_CACHE and stay shared.
    """
    scratch = Path(tempfile.mkdtemp(prefix="canon-tests-"))
    config.stash[SCRATCH] = scratch
    for name in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        os.environ[name] = str(scratch / name.lower())


def pytest_unconfigure(config: pytest.Config) -> None:
    """The scratch folder goes when the run ends (nothing of it is left in /tmp)."""
    scratch = config.stash.get(SCRATCH, None)
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)


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
