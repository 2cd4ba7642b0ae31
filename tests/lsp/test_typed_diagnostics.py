"""SPEC §10 diagnostics as you type: an open article's findings follow its unsaved text
(pushed, or pulled by a client that pulls), cleared when fixed; the file is never written."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_harness import Session, build_workspace, poll
from raw_rpc import RawServer

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


async def test_ten_quick_changes_are_checked_once_on_the_last_text(tmp_path: Path) -> None:
    """Issue 43 row 9 (SPEC §10, debounced): ten changes inside the debounce window re-arm one
    timer; the unsaved text is checked and pushed once, for the last text (a timer left
    pending per change would push ten times)."""
    root = build_workspace(tmp_path / "proj")
    uri = (root / CONFIG).as_uri()
    saved = (root / CONFIG).read_text(encoding="utf-8")
    server = await RawServer.start()
    try:
        await server.initialize(root, {"textDocument": {"publishDiagnostics": {}}})
        server.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": saved}},
        )

        def pushes(needle: str) -> int:
            return sum(
                1
                for n in server.reader.notifications
                if n.get("method") == "textDocument/publishDiagnostics"
                and n["params"]["uri"] == uri
                and needle in json.dumps(n["params"]["diagnostics"])
            )

        probe = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
        await server.request("textDocument/hover", probe)
        # the store is loaded once a typed broken link is pushed
        server.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"text": saved + "[[ready/link]]\n"}],
            },
        )
        await poll(lambda: pushes("ready/link"), 30, lambda: "no diagnostics as you type")

        def checked() -> bool:  # the start-up check's landing pushes the open text again
            return any(
                n.get("method") == "window/logMessage" and "canon checked" in n["params"]["message"]
                for n in server.reader.notifications
            )

        await poll(checked, 30, lambda: "the start-up check never ended")
        for n in range(10):
            server.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": 3 + n},
                    "contentChanges": [{"text": saved + f"[[typed/link{n}]]\n"}],
                },
            )
        await server.flush()
        await poll(lambda: pushes("typed/link9"), 30, lambda: "the last text was never pushed")
        server.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": 20},
                "contentChanges": [{"text": saved + "[[sentinel/link]]\n"}],
            },
        )
        await server.flush()
        await poll(lambda: pushes("sentinel/link"), 30, lambda: "the sentinel was never pushed")
        assert pushes("typed/link9") == 1
    finally:
        await server.stop()
