"""Fixtures for the real-editor tests; the helpers live in editor_support.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from editor_support import make_workspace, venv_bin


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


@pytest.fixture
def canon_ls() -> Path:
    """The real server's console script, as a user would install it."""
    path = venv_bin() / "canon-ls"
    if not path.exists():
        found = shutil.which("canon-ls")
        if not found:
            pytest.fail("canon-ls is not installed: run scripts/setup.sh test")
        path = Path(found)
    return path
