"""Fixtures shared by the CLI and MCP tests (the hook tests define their own project)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with one asset, src/core/config.py, and no store yet."""
    root = tmp_path / "proj"
    (root / "src" / "core").mkdir(parents=True)
    (root / "src" / "core" / "config.py").write_text("X = 1\n", encoding="utf-8")
    return root
