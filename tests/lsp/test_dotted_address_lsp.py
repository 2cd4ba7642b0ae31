"""SPEC §3 "an existing article wins over the extension rule" through the language server:
`src/core/config.test` names the article `config.test.md` in the `canon.read`/`canon.write`
commands and in hover, never `config.md` (issue 22 item 1). The store's bytes are pi-canon's."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import Session, build_workspace, git, text_of, write

DOTTED = "src/core/config.test"
TESTS_DOC = "docs/tests.md"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = build_workspace(tmp_path / "proj")
    write(
        root,
        f".canon/articles/{DOTTED}.md",
        "---\ncapsule: Tests for the config loader.\nupdated: 2026-11-21\n---\n# Config tests\n",
    )
    write(root, TESTS_DOC, "# Tests\n\nSee src/core/config.test for the loader tests.\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "dotted")
    return root


async def test_commands_read_and_write_the_dotted_article(s: Session) -> None:
    config = (s.root / ".canon/articles/src/core/config.md").read_bytes()
    wrote = await s.command("canon.write", {"path": DOTTED, "capsule": "Covers env over file."})
    assert wrote.startswith(f"Wrote {DOTTED}."), wrote
    assert (s.root / ".canon/articles/src/core/config.md").read_bytes() == config
    read = await s.command("canon.read", {"path": DOTTED})
    assert read.splitlines()[:2] == [DOTTED, "capsule: Covers env over file."]


async def test_hover_on_a_dotted_address_shows_that_article(s: Session) -> None:
    s.open(TESTS_DOC, "markdown")
    hover = await s.hover(TESTS_DOC, s.pos_of(TESTS_DOC, DOTTED, 4))
    assert "Tests for the config loader." in text_of(hover)


GUIDE = ".canon/articles/docs/guide.md"


async def test_a_path_link_is_a_link_to_that_path_s_article(s: Session) -> None:
    """Issue 22 item 6a: `[[src/core/config.ts]]` names `src/core/config`: a document link to
    it, no broken-link diagnostic, and a reference of that article."""
    from lsprotocol import types

    write(
        s.root,
        GUIDE,
        "---\ncapsule: The guide.\nupdated: 2026-11-20\n---\n# Guide\n\n"
        "See [[src/core/config.ts]] and [[src/core/config.test]].\n",
    )
    await s.checked()
    s.open(GUIDE, "markdown")
    links = await s.client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(uri=s.uri(GUIDE)))
    )
    targets = {link.target for link in links or []}
    assert s.uri(".canon/articles/src/core/config.md") in targets
    assert s.uri(f".canon/articles/{DOTTED}.md") in targets
    await s.until(lambda: s.root.joinpath(GUIDE).exists(), what="the guide")
    diagnostics = await s.diagnostics(GUIDE)
    assert not [d for d in diagnostics if d.code == "broken-link"], diagnostics
    refs = await s.client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(
                uri=s.uri(".canon/articles/src/core/config.md")
            ),
            position=types.Position(line=0, character=0),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    assert s.uri(GUIDE) in {r.uri for r in refs or []}


async def test_a_broken_path_link_offers_the_article_of_that_path(s: Session) -> None:
    """`[[src/nope.ts]]` names `src/nope` (no article either way): the quick fix creates
    `src/nope`, the article a later `[[src/nope.ts]]` resolves to."""
    from test_actions import actions

    write(
        s.root, GUIDE, "---\ncapsule: The guide.\nupdated: 2026-11-20\n---\nSee [[src/nope.ts]].\n"
    )
    s.open(GUIDE, "markdown")
    titles = [a.title for a in await actions(s, GUIDE, 4)]
    assert "Create article src/nope" in titles, titles
