"""`canon.resolve`: the server answers the §3 address and §4 governing article of a document,
path or address, so the editor clients (VS Code status bar, "Open Governing Article", Neovim
:CanonOpen) ask instead of re-implementing the rule (SPEC §3, §4, §10 commands)."""

from __future__ import annotations

from lsp_harness import Session


def expect(s: Session, kind: str, address: str, governing: str | None, article: str | None):
    return {
        "folder": s.root.as_uri(),
        "kind": kind,
        "address": address,
        "governing": governing,
        "article": s.uri(article) if article else None,
        "exists": governing is not None,
    }


async def test_resolve_a_document_uri(s: Session):
    """SPEC §4: the exact article, else the nearest ancestor's, else where it would be created."""
    config = ".canon/articles/src/core/config.md"
    assert await s.command("canon.resolve", {"uri": s.uri("src/core/config.ts")}) == expect(
        s, "asset", "src/core/config", "src/core/config", config
    )
    assert await s.command("canon.resolve", {"uri": s.uri("src/core/util.py")}) == expect(
        s, "asset", "src/core/util", "src", ".canon/articles/src.md"
    )
    assert await s.command("canon.resolve", {"uri": s.uri("lib/keep.ts")}) == expect(
        s, "asset", "lib/keep", None, ".canon/articles/lib/keep.md"
    )
    # an article file governs itself; a journal entry is nobody's asset
    assert await s.command("canon.resolve", {"uri": s.uri(config)}) == expect(
        s, "article", "src/core/config", "src/core/config", config
    )
    journal = await s.command(
        "canon.resolve", {"uri": s.uri(".canon/journal/2026-01-02-config.md")}
    )
    assert journal == expect(s, "journal", "", None, None)
    # outside every served project, or not a file: null
    assert await s.command("canon.resolve", {"uri": "file:///elsewhere/a.ts"}) is None
    assert await s.command("canon.resolve", {"uri": "untitled:Untitled-1"}) is None


async def test_resolve_a_path_or_an_address(s: Session):
    """SPEC §3: a path loses its extension; an address (as `map` prints it) is taken as it is."""
    by_path = await s.command("canon.resolve", {"path": "src/core/config.ts"})
    assert by_path == expect(
        s, "asset", "src/core/config", "src/core/config", ".canon/articles/src/core/config.md"
    )
    absolute = await s.command("canon.resolve", {"path": str(s.root / "src/core/config.ts")})
    assert absolute == by_path
    assert await s.command("canon.resolve", {"address": "src/core/config"}) == by_path
    # `uri` beside an address only picks the folder; a dotted address keeps its dots
    dotted = await s.command(
        "canon.resolve", {"address": "src/v1.2/notes", "uri": s.uri("src/app.ts")}
    )
    assert dotted == expect(s, "asset", "src/v1.2/notes", "src", ".canon/articles/src.md")
    assert await s.command("canon.resolve", {"path": "../../etc/passwd"}) is None


async def test_resolve_bad_arguments_get_a_sentence(s: Session):
    """SPEC §12: a wrong argument is a sentence, never an exception or a silent null."""
    assert "takes one argument" in await s.command("canon.resolve", "src/app.ts")
    assert "needs" in await s.command("canon.resolve", {})
    assert (await s.command("canon.resolve", {"address": "src/a\x00b"})).startswith(
        "canon.resolve:"
    )
    assert await s.command("canon.resolve", {"path": "src/a\x00b.ts"}) is None  # names no file
    # the server keeps answering
    assert (await s.command("canon.resolve", {"path": "src/app.ts"}))["address"] == "src/app"
