"""SPEC §7, §12 through the language server: a FIFO where the server reads a file (schema.json,
an article, a journal entry, an asset) hangs nothing. The server starts, finishes its
whole-store check, answers hover, references and the tool commands; the FIFO stays."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lsp_harness import Session, build_workspace, text_of
from lsprotocol import types

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")

PLACES = [
    ".canon/schema.json",
    ".canon/articles/src/core/util.md",
    ".canon/journal/2026-01-03-fifo.md",
    "src/core/pipe.ts",
]


_fifo: dict[Path, Path] = {}


@pytest.fixture(params=PLACES)
def workspace(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    root = build_workspace(tmp_path / "proj")
    fifo = root / request.param
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    _fifo[root] = fifo
    return root


@pytest.mark.timeout(90)
async def test_spec_12_a_fifo_hangs_nothing(s: Session) -> None:
    await s.checked()
    s.open("docs/readme.md", "markdown")
    hover = await s.hover("docs/readme.md", s.pos_of("docs/readme.md", "[[src/core/config]]", 4))
    assert "Loads layered config; env beats file." in text_of(hover)
    refs = await s.client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(
                uri=s.uri(".canon/articles/src/core/config.md")
            ),
            position=types.Position(line=0, character=0),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    assert refs is not None
    text = await s.command("canon.write", {"path": "src/app.ts", "capsule": "The app entry."})
    assert text.startswith("Wrote src/app"), text
    if _fifo[s.root].name == "schema.json":
        assert "schema.json is malformed" in text and "not a regular file" in text, text
    read = await s.command("canon.read", {"path": "src/core/config.ts"})
    assert "Loads layered config; env beats file." in read
    assert "src/core/config" in await s.command("canon.map", {})
    assert await s.command("canon.search", {"query": "layered", "journal": True})
    symbols = await s.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="config"))
    assert symbols is not None
    assert _fifo[s.root].is_fifo()
