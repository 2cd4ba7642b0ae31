"""SPEC §7, §12 through the language server: a FIFO at `.canon/schema.json` hangs nothing. The
server starts, finishes its whole-store check, answers hover and the tool commands, and
reports the schema as malformed (rules fail open and loud); the FIFO stays where it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lsp_harness import Session, build_workspace, text_of

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = build_workspace(tmp_path / "proj")
    schema = root / ".canon/schema.json"
    schema.unlink(missing_ok=True)
    os.mkfifo(schema)
    return root


@pytest.mark.timeout(90)
async def test_spec_12_a_fifo_schema_hangs_nothing(s: Session) -> None:
    await s.checked()
    s.open("docs/readme.md", "markdown")
    hover = await s.hover("docs/readme.md", s.pos_of("docs/readme.md", "[[src/core/config]]", 4))
    assert "Loads layered config; env beats file." in text_of(hover)
    text = await s.command("canon.write", {"path": "src/app.ts", "capsule": "The app entry."})
    assert text.startswith("Wrote src/app"), text
    assert "schema.json is malformed" in text and "not a regular file" in text, text
    read = await s.command("canon.read", {"path": "src/core/config.ts"})
    assert "Loads layered config; env beats file." in read
    assert (s.root / ".canon/schema.json").is_fifo()
