"""Issue 24 item 4 through the language server: `canon.write` refuses an absolute path outside
the project and an address inside a .git directory with the core's one sentence."""

from __future__ import annotations

import pytest
from lsp_harness import Session


@pytest.mark.parametrize("path", ["/etc/hosts", ".git/config"])
async def test_canon_write_refuses_outside_and_git(s: Session, path: str) -> None:
    before = sorted(p.relative_to(s.root) for p in s.root.rglob("*.md"))
    text = await s.command("canon.write", {"path": path, "capsule": "x"})
    assert str(text).startswith("Refused: "), text
    assert sorted(p.relative_to(s.root) for p in s.root.rglob("*.md")) == before
