"""SPEC §12: every cost a client can make large is linear or bounded, and the server always
answers. An open article changed to megabytes of broken links (a hostile paste) must not hold
the event loop: a hover and `shutdown` sent right after the change are answered, and the
diagnostics say the unsaved text was not checked as typed. Checked quadratically, the 4 MB
text below held the loop for minutes; the timeouts here are far below that."""

from __future__ import annotations

from pathlib import Path

from lsp_harness import build_workspace, poll
from raw_rpc import RawServer

CONFIG = ".canon/articles/src/core/config.md"


def _links(count: int) -> str:
    return "# Big\n\n" + "".join(f"see [[missing/link{i}]]\n" for i in range(count))


async def test_a_huge_change_leaves_hover_and_shutdown_answered(tmp_path: Path) -> None:
    root = build_workspace(tmp_path / "proj")
    uri = (root / CONFIG).as_uri()
    saved = (root / CONFIG).read_text(encoding="utf-8")
    server = await RawServer.start()
    await server.initialize(root)
    doc = {"uri": uri, "languageId": "markdown", "version": 1, "text": saved}
    server.notify("textDocument/didOpen", {"textDocument": doc})
    big = saved + _links(188_000)  # ~4 MB
    change = {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": big}]}
    server.notify("textDocument/didChange", change)

    def skipped() -> bool:
        return any(
            d.get("code") == "typed-skipped"
            for n in server.reader.notifications
            if n["method"] == "textDocument/publishDiagnostics" and n["params"]["uri"] == uri
            for d in n["params"]["diagnostics"]
        )

    await poll(skipped, 60, lambda: "no diagnostic saying the typed check was skipped")
    position = {"line": 0, "character": 0}
    hover = {"textDocument": {"uri": uri}, "position": position}
    answer = await server.request("textDocument/hover", hover, timeout=60)
    assert "error" not in answer
    assert await server.stop() == 0
    assert (root / CONFIG).read_text(encoding="utf-8") == saved  # nothing written
