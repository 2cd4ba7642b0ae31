"""SPEC §5 through the language server: a duplicate owned key in an article pi-canon wrote (a
blank `capsule:` beside a second one) is a `duplicate-key` diagnostic whose code action keeps
the non-empty value; the article's capsule reads as that value meanwhile (issue 22 item 8)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import Session, build_workspace, text_of, write
from test_actions import actions, apply, edit_of

DUP = ".canon/articles/src/core/util.md"
TEXT = (
    "---\ncapsule:\nupdated: 2026-11-20\nowner: data-team\ncapsule: Small helpers.\n---\n# Util\n"
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = build_workspace(tmp_path / "proj")
    write(root, DUP, TEXT)
    return root


async def test_duplicate_key_diagnostic_and_its_fix(s: Session) -> None:
    await s.checked()
    s.open(DUP, "markdown")
    if not s.pulls:
        pushed = s.client.diagnostics  # type: ignore[attr-defined]
        await s.until(lambda: pushed.get(s.uri(DUP)), what="diagnostics of the article")
    diagnostics = await s.diagnostics(DUP)
    assert any(d.code == "duplicate-key" for d in diagnostics), diagnostics
    s.open("src/core/util.py")
    hover = await s.hover("src/core/util.py", s.pos("src/core/util.py", 0, 2))
    assert "Small helpers." in text_of(hover)
    fix = next(a for a in await actions(s, DUP) if a.title.startswith("Keep the non-empty"))
    apply(s, await edit_of(s, fix))
    assert (s.root / DUP).read_text() == (
        "---\ncapsule: Small helpers.\nupdated: 2026-11-20\nowner: data-team\n---\n# Util\n"
    )
