"""Same-day staleness in the editor (SPEC §9, §9.1): a commit later on the article's own day
makes it stale, and the server's diagnostic carries the same line as `canon read`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lsp_harness import SERVER_ENV, Session
from lsprotocol import types
from same_day_repo import build

ARTICLE = ".canon/articles/src/x.md"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    build(root, later_day="2026-11-20")
    return root


def read_line(root: Path) -> str:
    """The stale line `canon read` prints, from the real CLI with the server's environment."""
    script = Path(sys.executable).with_name("canon")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "canon_ls.agent.cli"]
    out = subprocess.run(
        [*command, "read", "src/x.py"], cwd=root, env=SERVER_ENV, capture_output=True,
        text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    (line,) = [line for line in out.splitlines() if line.startswith("stale:")]
    return line


async def test_spec_9_1_a_later_commit_the_same_day_reaches_the_diagnostic(s: Session):
    await s.checked()

    async def stale() -> list[types.Diagnostic]:
        return [d for d in await s.diagnostics(ARTICLE) if d.code == "stale"]

    found = await s.until(stale, what="the stale finding of a same-day change")
    line = read_line(s.root)
    assert line.startswith("stale: 1 commit in 9 days since updated 2026-11-20 touched src/x.py")
    assert found[0].message == (
        f"src/x is {line}; update it, or mark it reviewed if it still holds."
    )
