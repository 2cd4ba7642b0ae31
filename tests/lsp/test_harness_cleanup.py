"""Issue 41 item 9: a test run leaves no folder of its own in the temporary directory (the
language servers' cache of lsp_harness.py, the XDG scratch of conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_run_removes_its_temporary_folders(tmp_path: Path) -> None:
    """A collecting run (it imports the harness and configures the session) with TMPDIR in
    tmp_path: nothing named canon-* stays there after it."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "tests/lsp/test_navigation.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("canon")) == []
