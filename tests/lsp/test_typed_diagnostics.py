"""SPEC §10 diagnostics as you type: an open article's findings follow its unsaved text
(pushed, or pulled by a client that pulls), cleared when fixed; the file is never written."""

from __future__ import annotations

from lsp_harness import Session

CONFIG = ".canon/articles/src/core/config.md"
BROKEN = "Broken wikilink [[src/not/there]]"


async def test_typing_and_deleting_a_broken_link(s: Session):
    await s.checked()
    s.open(CONFIG, "markdown")
    saved = (s.root / CONFIG).read_text(encoding="utf-8")

    async def messages() -> list[str]:
        return [d.message for d in await s.diagnostics(CONFIG)]

    async def raised() -> bool:
        return any(m.startswith(BROKEN) for m in await messages())

    async def cleared() -> bool:
        return not await raised()

    assert await cleared()
    s.change(CONFIG, saved + "See [[src/not/there]].\n")
    await s.until(raised, what="the broken link's diagnostic from the unsaved text")
    diagnostic = next(d for d in await s.diagnostics(CONFIG) if d.message.startswith(BROKEN))
    assert diagnostic.range.start.line == saved.count("\n")
    s.change(CONFIG, saved)
    await s.until(cleared, what="the diagnostic cleared once the link is deleted")
    assert (s.root / CONFIG).read_text(encoding="utf-8") == saved
