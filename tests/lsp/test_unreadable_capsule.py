"""SPEC §5, §12 through the language server (issue 36 item 1): a capsule canon cannot read (a
raw control character pi-canon wrote plain) is reported by the hover and by a diagnostic,
never shown as a missing capsule."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import Session, build_workspace, text_of, write

ART = ".canon/articles/src/core/util.md"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = build_workspace(tmp_path / "proj")
    write(root, ART, "---\ncapsule: small\x02helpers\nupdated: 2026-11-20\n---\n# Util\n")
    return root


async def test_an_unreadable_capsule_is_reported_not_absent(s: Session) -> None:
    await s.checked()
    s.open(ART, "markdown")
    if not s.pulls:
        pushed = s.client.diagnostics  # type: ignore[attr-defined]
        await s.until(lambda: pushed.get(s.uri(ART)), what="diagnostics of the article")
    diagnostics = await s.diagnostics(ART)
    codes = [d.code for d in diagnostics]
    assert "malformed-front-matter" in codes and "capsule-missing" not in codes, diagnostics
    s.open("src/core/util.py")
    value = text_of(await s.hover("src/core/util.py", s.pos("src/core/util.py", 0, 2)))
    assert "capsule cannot be read" in value and "no capsule yet" not in value, value
    assert "updated 2026-11-20" in value
