"""SPEC §10 hover, inlay hints, code lens over three client profiles."""

from __future__ import annotations

from lsp_harness import FIRST_LINE, Session, text_of
from lsprotocol import types


async def test_position_encoding_follows_the_client(s: Session):
    """SPEC §10: Neovim negotiates utf-8, VS Code utf-16; columns go through the codec."""
    expected = "utf-8" if s.profile.startswith("neovim") else "utf-16"
    assert s.encoding == expected


async def test_hover_on_path_token_shows_governing_article(s: Session):
    """SPEC §10 hover: a path token after non-BMP text; title, capsule, updated, journal, link."""
    s.open("src/core/config.ts")
    at = FIRST_LINE.index("src/app.ts") + 3
    hover = await s.hover("src/core/config.ts", s.pos("src/core/config.ts", 0, at))
    value = text_of(hover)
    assert "Source root; everything under src." in value
    assert "`src` governs `src/app`" in value
    assert hover is not None and hover.range is not None
    start = FIRST_LINE.index("src/app.ts")
    assert hover.range.start == types.Position(line=0, character=s.col(FIRST_LINE, start))
    assert hover.range.end == types.Position(line=0, character=s.col(FIRST_LINE, start + 10))


async def test_hover_on_first_line_shows_own_article(s: Session):
    """SPEC §10 hover: on line 1 of a governed file, the file's own governing article."""
    s.open("src/core/config.ts")
    hover = await s.hover("src/core/config.ts", s.pos("src/core/config.ts", 0, 3))
    value = text_of(hover)
    assert "**Config**" in value
    assert "Loads layered config; env beats file." in value
    assert "updated 2026-01-01" in value
    assert "2026-01-02-config.md" in value
    assert (s.root / ".canon/articles/src/core/config.md").as_uri() in value


async def test_hover_on_wikilink_and_nothing_elsewhere(s: Session):
    """SPEC §10 hover: [[wikilinks]] answer; plain words give no (empty) hover."""
    s.open("docs/readme.md")
    hover = await s.hover("docs/readme.md", s.pos_of("docs/readme.md", "[[src/core/config]]", 4))
    assert "Loads layered config" in text_of(hover)
    assert await s.hover("docs/readme.md", s.pos_of("docs/readme.md", "See", 1)) is None
    assert await s.hover("docs/readme.md", s.pos("docs/readme.md", 0, 3)) is None


async def test_inlay_hint_at_end_of_first_line(s: Session):
    """SPEC §10 inlay hints: one hint at the end of line 1, capsule, ancestor prefix, tooltip."""
    s.open("src/core/config.ts")
    hints = await s.inlay("src/core/config.ts")
    assert len(hints) == 1
    assert hints[0].position == types.Position(line=0, character=s.col(FIRST_LINE, len(FIRST_LINE)))
    assert hints[0].label == "Loads layered config; env beats file."
    assert hints[0].tooltip == "Loads layered config; env beats file."
    s.open("src/core/util.py")
    hints = await s.inlay("src/core/util.py")
    assert [h.label for h in hints] == ["src: Source root; everything under src."]
    s.open("docs/readme.md")
    assert await s.inlay("docs/readme.md") == []


async def test_code_lens_names_article_or_offers_create(s: Session):
    """SPEC §10 code lens: `canon: <address> · updated <date> · N journal`, or create; on a
    stale article's file, SPEC §9.1's short evidence too (once the check has measured it)."""
    await s.checked()
    s.open("src/core/config.ts")
    lenses = await s.client.text_document_code_lens_async(
        types.CodeLensParams(
            text_document=types.TextDocumentIdentifier(uri=s.uri("src/core/config.ts"))
        )
    )
    assert lenses is not None
    assert [lens.command.title for lens in lenses if lens.command] == [
        "canon: src/core/config · updated 2026-01-01 · 1 journal",
        "stale · 1 commit since 2026-01-01",
    ]
    lenses = await s.client.text_document_code_lens_async(
        types.CodeLensParams(
            text_document=types.TextDocumentIdentifier(uri=s.uri("docs/readme.md"))
        )
    )
    assert lenses is not None
    assert [lens.command.title for lens in lenses if lens.command] == ["canon: no article · create"]
    assert lenses[0].command is not None and lenses[0].command.command == "canon.createArticle"
