"""SPEC §10 references: ranges follow external writes and the editor's unsaved text.

The server caches each linking article's link ranges; these tests pin that the cache never
answers from an old text: after an agent writes through `canon tool` (including a rewrite of
the same size moments later), while an article is edited but unsaved, and after it closes.
Columns are checked in the negotiated encoding (non-ASCII text precedes every link).
"""

from __future__ import annotations

from lsp_harness import Session
from lsprotocol import types
from test_external import agent_write, report

CONFIG = ".canon/articles/src/core/config.md"
WIDGET = ".canon/articles/lib/widget.md"
GUIDE = ".canon/articles/docs/guide.md"
LINK = "[[src/core/config]]"


async def agent(s: Session, obj: dict) -> None:
    """Write through `canon tool` (a subprocess); a watching client then reports the file."""
    await agent_write(s, obj)
    report(s, GUIDE, types.FileChangeType.Changed)


async def references(s: Session) -> list[types.Location]:
    result = await s.client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=s.uri(CONFIG)),
            position=types.Position(line=0, character=0),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    return list(result or [])


def expected(s: Session, uri: str, text: str) -> list[tuple[str, int, int, int]]:
    """(uri, line, start column, end column) of every link to config in `text`."""
    out = []
    for n, line in enumerate(text.split("\n")):
        at = line.find(LINK)
        while at != -1:
            out.append((uri, n, s.col(line, at), s.col(line, at + len(LINK))))
            at = line.find(LINK, at + 1)
    return out


def found(locations: list[types.Location], uri: str) -> list[tuple[str, int, int, int]]:
    return [
        (loc.uri, loc.range.start.line, loc.range.start.character, loc.range.end.character)
        for loc in locations
        if loc.uri == uri
    ]


def change(s: Session, rel: str, text: str) -> None:
    uri = s.uri(rel)
    s.versions[uri] += 1
    s.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=s.versions[uri]),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def test_spec_10_references_follow_an_agent_write(s: Session):
    """SPEC §10 references + external changes: a new linking article written by the agent is
    found with its exact range, and a same-size rewrite moments later moves the range."""
    await s.checked()
    s.open(CONFIG, "markdown")
    assert found(await references(s), s.uri(GUIDE)) == []
    for body in ("# Guide\n\nété 🚀 " + LINK + " ok\n", "# Guide\n\nok été 🚀 " + LINK + "\n"):
        await agent(s, {"action": "write", "path": "docs/guide", "capsule": "G.", "body": body})
        uri = s.uri(GUIDE)

        async def ranged(uri: str = uri) -> bool:
            text = (s.root / GUIDE).read_text(encoding="utf-8")
            return found(await references(s), uri) == expected(s, uri, text)

        await s.until(ranged, what="the guide's link range in references")
    widget = s.uri(WIDGET)
    assert found(await references(s), widget) == expected(
        s, widget, (s.root / WIDGET).read_text(encoding="utf-8")
    )


async def test_spec_10_references_use_the_unsaved_text(s: Session):
    """SPEC §10 references: an open, edited (unsaved) article gives ranges in the editor's text;
    once closed, the file's ranges again."""
    await s.checked()
    s.open(CONFIG, "markdown")
    uri = s.open(WIDGET, "markdown")
    disk = (s.root / WIDGET).read_text(encoding="utf-8")
    assert found(await references(s), uri) == expected(s, uri, disk)
    edited = disk.replace("Uses " + LINK, "ünï 🚀\n\n🚀🚀 é " + LINK + " and " + LINK)
    change(s, WIDGET, edited)
    assert len(found(await references(s), uri)) == 2
    assert found(await references(s), uri) == expected(s, uri, edited)
    again = edited.replace("🚀🚀 é ", "")
    change(s, WIDGET, again)
    assert found(await references(s), uri) == expected(s, uri, again)
    s.client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert found(await references(s), uri) == expected(s, uri, disk)


async def test_spec_10_references_count_links_only_in_the_editor(s: Session):
    """SPEC §10 references: a link typed into an open article (not saved yet) is a reference;
    one deleted from an open article (still on disk) is not."""
    await s.checked()
    s.open(CONFIG, "markdown")
    guide = s.uri(GUIDE)
    await agent(s, {"action": "write", "path": "docs/guide", "capsule": "G.", "body": "# G\n"})
    s.open(GUIDE, "markdown")
    typed = (s.root / GUIDE).read_text(encoding="utf-8") + "See " + LINK + ".\n"
    change(s, GUIDE, typed)
    assert found(await references(s), guide) == expected(s, guide, typed)
    widget = s.open(WIDGET, "markdown")
    assert found(await references(s), widget) != []
    change(s, WIDGET, (s.root / WIDGET).read_text(encoding="utf-8").replace(LINK, "config"))
    assert found(await references(s), widget) == []
