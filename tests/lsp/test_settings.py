"""SPEC §10 configuration: section `canon`, bad values -> window/showMessage and defaults."""

from __future__ import annotations

from typing import Any

import pytest
from lsp_harness import Session
from lsprotocol import types


@pytest.fixture
def canon_settings() -> dict[str, Any]:
    return {
        "inlayHints": {"enabled": "yes", "maxLength": 12},
        "codeLens": {"enabled": False},
        "assetDiagnostics": {"severity": "loud"},
        "bogus": 1,
    }


async def test_bad_settings_are_reported_and_defaulted(s: Session):
    """SPEC §10 configuration: each bad value is a clear message; valid ones still apply."""
    messages = await s.until(lambda: [m.message for m in s.client.messages], what="messages")
    await s.until(lambda: len(s.client.messages) >= 3, what="three messages")
    messages = [m.message for m in s.client.messages]
    assert any("canon.inlayHints.enabled must be true or false" in m for m in messages)
    assert any("canon.assetDiagnostics.severity must be one of" in m for m in messages)
    assert any("Unknown canon setting bogus" in m for m in messages)
    s.open("src/core/config.ts")
    hints = await s.inlay("src/core/config.ts")
    assert [h.label for h in hints] == ["Loads layer…"]  # maxLength 12 applied, enabled default
    lenses = await s.client.text_document_code_lens_async(
        types.CodeLensParams(
            text_document=types.TextDocumentIdentifier(uri=s.uri("src/core/config.ts"))
        )
    )
    assert not lenses
