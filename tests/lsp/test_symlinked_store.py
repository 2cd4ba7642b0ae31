"""SPEC §12 through the language server: a store whose articles/ is a symbolic link leading
outside the project is refused for reads and writes alike: `canon.read` answers the refusal
sentence, "Create article" (lens command and code action) creates nothing, inside or out."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsp_harness import Session, build_workspace
from test_actions import actions


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = build_workspace(tmp_path / "proj")
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.move(root / ".canon/articles", outside / "articles")
    (outside / "articles/src/core/config.md").write_text(
        "---\ncapsule: SECRET capsule\nupdated: 2026-01-01\n---\nSECRET body\n", "utf-8"
    )
    (root / ".canon/articles").symlink_to(outside / "articles", target_is_directory=True)
    return root


async def test_spec_12_canon_read_refuses_a_symlinked_store(s: Session) -> None:
    """`canon.read` names the link and reads nothing through it."""
    text = await s.command("canon.read", {"path": "src/core/config.ts"})
    assert "SECRET" not in str(text)
    assert "symbolic link" in str(text) and "outside the project" in str(text), text
    hover = await s.hover("src/app.ts", s.pos_of("src/app.ts", "./core/config", 3))
    assert hover is None or "SECRET" not in str(hover.contents)


async def test_spec_12_create_article_writes_nothing_through_the_link(s: Session) -> None:
    """The lens command `canon.createArticle` and the "Create article" code action on an
    ungoverned file create no article: nothing appears outside, no edit is applied."""
    outside = s.root.parent / "outside"
    before = _tree(outside)
    s.open("src/core/util.py")
    await s.command("canon.createArticle", {"uri": s.uri("src/core/util.py")})
    await s.command("canon.createArticle", {"address": "src/core/util"})
    for action in await actions(s, "src/core/util.py"):
        if action.title.startswith("Create article") and action.command is not None:
            await s.command(action.command.command, *(action.command.arguments or []))
    assert s.client.applied_edits == []  # type: ignore[attr-defined]
    assert _tree(outside) == before
    assert not (s.root / ".canon/articles/src/core/util.md").exists()


async def test_spec_12_history_and_changes_refuse_a_symlinked_store(s: Session) -> None:
    """`canon.history` and `canon.showChanges` read nothing through the link either."""
    text = await s.command("canon.history", {"path": "src/core/config.ts"})
    assert "SECRET" not in str(text)
    assert "symbolic link" in str(text) and "outside the project" in str(text), text
    changes = await s.command("canon.showChanges", {"address": "src/core/config"})
    assert "SECRET" not in str(changes)


async def test_spec_12_symbols_and_completion_show_nothing_through_the_link(s: Session) -> None:
    """workspace/symbol (the BM25 worker) and the search command find nothing through it."""
    from lsprotocol import types

    symbols = await s.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="SECRET"))
    assert not any("SECRET" in sym.name for sym in symbols or [])
    symbols = await s.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="config"))
    assert not any("src/core/config" in sym.name for sym in symbols or [])
    assert "SECRET" not in str(await s.command("canon.search", {"query": "SECRET body"}))
    assert "SECRET" not in str(await s.command("canon.map", {}))
