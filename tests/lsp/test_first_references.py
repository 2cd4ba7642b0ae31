"""Issue 40, SPEC §10 references and hover: a first `textDocument/references` sent before the
store has loaded waits for the load and the backlinks built in steps between requests, so a
hover sent right after it is answered meanwhile (it used to wait while references read the
whole store in one go), and the references are the loaded store's."""

from __future__ import annotations

from pathlib import Path

from lsp_harness import article, build_workspace, git, write
from raw_rpc import RawServer

MANY = 2_000  # articles: their load takes many turns of the loop


async def test_a_hover_is_not_held_by_the_first_references(tmp_path: Path) -> None:
    root = build_workspace(tmp_path / "proj")
    for n in range(MANY):
        body = f"# part {n}\n\nSee [[src/core/config]].\n" if n % 500 == 0 else f"# part {n}\n"
        write(root, f".canon/articles/parts/p{n}.md", article(f"Part {n}.", "2026-01-01", body))
        write(root, f"parts/p{n}.txt", "x\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "parts")
    server = await RawServer.start()
    try:
        await server.initialize(root)
        config = (root / "src/core/config.ts").as_uri()
        server.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": config,
                    "languageId": "typescript",
                    "version": 1,
                    "text": (root / "src/core/config.ts").read_text(encoding="utf-8"),
                }
            },
        )
        target = (root / ".canon/articles/src/core/config.md").as_uri()
        where = {"textDocument": {"uri": target}, "position": {"line": 0, "character": 0}}
        server.send(
            "refs", "textDocument/references", {**where, "context": {"includeDeclaration": False}}
        )
        at = {"textDocument": {"uri": config}, "position": {"line": 0, "character": 3}}
        server.send("hover", "textDocument/hover", at)
        await server.flush()
        refs = await server.reader.wait("refs")
        hover = await server.reader.wait("hover")
        assert "Loads layered config" in str(hover["result"])
        assert list(server.reader.responses).index("hover") < list(server.reader.responses).index(
            "refs"
        ), "the hover waited for the first references' load"
        linking = sorted(loc["uri"].rsplit("/", 2)[-1] for loc in refs["result"])
        # the four parts, src, lib/widget (the journal entry's location is the journal file)
        assert [u for u in linking if u.startswith("p")] == [
            "p0.md",
            "p1000.md",
            "p1500.md",
            "p500.md",
        ]
        assert "widget.md" in linking and "2026-01-02-config.md" in linking
    finally:
        await server.stop()
