"""SPEC §12 bad input: non-UTF-8, binary, huge documents, malformed articles and schema."""

from __future__ import annotations

import pytest
from lsp_harness import Session
from lsprotocol import types

BAD = ".canon/articles/src/bad.md"


async def test_malformed_front_matter_and_non_utf8_article_are_diagnostics(s: Session):
    """SPEC §5 + §10: a malformed or non-UTF-8 article reads with an empty capsule and a
    diagnostic says what is wrong; nothing crashes."""
    (s.root / BAD).write_text("---\ncapsule: [unclosed\nupdated: 2026-01-01\n---\n# bad\n")
    (s.root / ".canon/articles/src/latin.md").write_bytes(
        b"---\ncapsule: caf\xe9\nupdated: 2026-01-01\n---\n# latin\n"
    )
    await s.checked()
    bad = await s.until(lambda: s.diagnostics(BAD), what="malformed front matter diagnostic")
    assert any("front matter" in d.message.lower() for d in bad)
    latin = await s.until(lambda: s.diagnostics(".canon/articles/src/latin.md"), what="non-utf8")
    assert latin
    status = await s.command("canon.status")
    assert "articles" in status


async def test_malformed_schema_is_reported_on_schema_json(s: Session):
    """SPEC §7: a malformed schema.json fails open and loud: one diagnostic on the file."""
    (s.root / ".canon/schema.json").write_text("{not json")
    await s.checked()
    diags = await s.until(lambda: s.diagnostics(".canon/schema.json"), what="schema diagnostic")
    assert any(d.code == "schema-malformed" for d in diags)


async def test_binary_and_non_utf8_documents(s: Session):
    """SPEC §12: binary or non-UTF-8 files give no answers, never an error."""
    (s.root / "src/blob.bin").write_bytes(bytes(range(256)) * 100)
    uri = s.uri("src/blob.bin")
    assert await s.hover("src/blob.bin", types.Position(line=0, character=3)) is None
    hints = await s.client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=1, character=0)
            ),
        )
    )
    assert not hints
    links = await s.client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert not links


@pytest.mark.parametrize("client", ["neovim@0.11"], indirect=True)
async def test_fifty_megabyte_document(s: Session):
    """SPEC §12 huge files: a 50 MB open document answers hover/inlay/lens without a scan.
    One profile is enough for a 50 MB round trip (utf-8 positions, the costlier codec here)."""
    big = s.root / "src/core/big.ts"
    first = "// src/core/config.ts is the loader\n"
    big.write_text(first + ("x" * 1023 + "\n") * (50 * 1024))
    s.open("src/core/big.ts")
    hover = await s.hover("src/core/big.ts", types.Position(line=0, character=5))
    assert hover is not None and "Loads layered config" in hover.contents.value
    far = await s.hover("src/core/big.ts", types.Position(line=40_000, character=10))
    assert far is None
    hints = await s.inlay("src/core/big.ts")
    assert [h.label for h in hints] == ["src: Source root; everything under src."]
    links = await s.client.text_document_document_link_async(
        types.DocumentLinkParams(
            text_document=types.TextDocumentIdentifier(uri=s.uri("src/core/big.ts"))
        )
    )
    assert links == [] or links is None
