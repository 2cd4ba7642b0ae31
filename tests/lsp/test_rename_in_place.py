"""SPEC §10 "Move article to …" on an orphan whose asset was renamed in its own folder
(src/core/config.ts -> src/core/settings.ts): git's rename detection finds it, although
nothing named config is left anywhere in the project."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import Session, build_workspace, git
from lsprotocol import types
from test_actions import actions, edit_of

CONFIG = ".canon/articles/src/core/config.md"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = build_workspace(tmp_path / "proj")
    git(root, "mv", "src/core/config.ts", "src/core/settings.ts")
    git(root, "commit", "-q", "-m", "config is settings now")
    return root


async def test_move_action_after_a_rename_in_place(s: Session):
    await s.checked()
    s.open(CONFIG, "markdown")
    wanted = "Move article to src/core/settings"

    async def offered() -> types.CodeAction | None:
        return next((a for a in await actions(s, CONFIG) if a.title == wanted), None)

    move = await s.until(offered, what=wanted)
    edit = await edit_of(s, move)
    renames = [c for c in edit.document_changes or [] if isinstance(c, types.RenameFile)]
    assert [(r.old_uri, r.new_uri) for r in renames] == [
        (s.uri(CONFIG), s.uri(".canon/articles/src/core/settings.md"))
    ]
