"""SPEC §12: nothing in a workspace runs as code. The server's helper processes (the
whole-store check, the search worker, history) start Python with the project as working
directory; a repository carrying its own `canon_ls/` package must not be imported by them."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import Session, build_workspace, write
from lsprotocol import types


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = build_workspace(tmp_path / "proj")
    marker = tmp_path / "planted-code-ran"
    write(
        root,
        "canon_ls/__init__.py",
        f"open({str(marker)!r}, 'a').write('imported\\n')\n",
    )
    return root


async def test_a_planted_canon_ls_package_never_runs(s: Session, tmp_path: Path):
    await s.checked()  # the whole-store check ran in its child
    await s.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="config"))
    history = await s.command("canon.history", {"path": "src/core/config.ts"})
    assert "src/core/config" in str(history)

    async def found() -> list[types.WorkspaceSymbol] | None:
        got = await s.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="layered"))
        return got or None  # type: ignore[return-value]

    await s.until(found, what="the search worker's answer")
    assert not (tmp_path / "planted-code-ran").exists()
