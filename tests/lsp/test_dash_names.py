"""Issue 24 item 12: a file named `-x.py` is a path, never an option, in `canon.history` and
`canon.showChanges` (the server runs `canon history … -- PATH`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import Session, article, build_workspace, git, write


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = build_workspace(tmp_path / "proj")
    write(root, "-x.py", "X = 1\n")
    write(root, ".canon/articles/-x.md", article("The dash file.", "2026-05-01", "# -x\n"))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "dash file")
    write(root, "-x.py", "X = 2\n")
    git(root, "commit", "-q", "-am", "Change the dash file", date="2026-07-01T12:00:00")
    return root


async def test_history_and_changes_of_a_dash_named_file(s: Session) -> None:
    history = str(await s.command("canon.history", {"path": "-x.py"}))
    assert "Change the dash file" in history and "usage" not in history.lower(), history
    uri = str(await s.command("canon.showChanges", {"address": "-x"}))
    assert uri.startswith("file:") and uri.endswith(".diff"), uri
