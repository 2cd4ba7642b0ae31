"""SPEC §10 external changes: an agent writes through `canon tool` while the server runs.

VS Code profiles register `workspace/didChangeWatchedFiles` and the test client reports the
write as VS Code would; the Neovim profile offers no dynamic registration, so the server's own
watcher must notice. Either way hover, inlay hint and diagnostics change without a restart.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from lsp_harness import SERVER_ENV, Session
from lsprotocol import types

CONFIG = ".canon/articles/src/core/config.md"
CANON = str(Path(sys.executable).parent / "canon")


async def agent_write(s: Session, obj: dict) -> str:
    proc = await asyncio.create_subprocess_exec(
        CANON,
        "tool",
        json.dumps(obj),
        cwd=s.root,
        env=SERVER_ENV,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    return out.decode()


def client_watches(s: Session) -> bool:
    return any(
        r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        for r in getattr(s.client, "registrations", [])
    )


def report(s: Session, rel: str, kind: types.FileChangeType) -> None:
    """What a watching client (VS Code) sends after a write on disk; Neovim sends nothing."""
    if client_watches(s):
        s.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=s.uri(rel), type=kind)])
        )


@pytest.mark.parametrize("notify", [True, False], ids=["events", "no-events"])
async def test_agent_write_reaches_hover_inlay_and_diagnostics(s: Session, notify: bool):
    """SPEC §10 external changes + §9: a write by the agent is picked up incrementally, with
    the client's file events or without any (the server's own watcher)."""
    await s.checked()
    s.open("src/core/config.ts")
    first = s.pos("src/core/config.ts", 0, 2)
    assert "Loads layered config" in (await s.hover("src/core/config.ts", first)).contents.value
    assert await s.until(lambda: s.diagnostics("src/core/config.ts"), what="stale hint")

    text = await agent_write(
        s,
        {
            "action": "write",
            "path": "src/core/config.ts",
            "capsule": "Config now comes from env only.",
            "body": "# Config\n\nEnv only; see [[nowhere/else]].\n",
        },
    )
    assert text.startswith("Wrote src/core/config")
    assert client_watches(s) == (s.profile != "neovim@0.11")
    if s.profile == "neovim@0.11":  # no client events: the server's own watcher
        await s.until(
            lambda: any("store through " in m.message for m in s.client.log_messages),
            what="the watcher's log line",
        )
    if notify:
        report(s, CONFIG, types.FileChangeType.Changed)

    async def hover_changed() -> bool:
        hover = await s.hover("src/core/config.ts", first)
        return hover is not None and "Config now comes from env only." in hover.contents.value

    await s.until(hover_changed, what="the new capsule in hover")
    hints = await s.inlay("src/core/config.ts")
    assert [h.label for h in hints] == ["Config now comes from env only."]

    async def article_broken_link() -> bool:
        return any(d.code == "broken-link" for d in await s.diagnostics(CONFIG))

    await s.until(article_broken_link, what="the broken link diagnostic")

    async def asset_fresh() -> bool:
        return await s.diagnostics("src/core/config.ts") == []

    await s.until(asset_fresh, what="the stale hint to go (written today)")
    if s.profile != "visual-studio-code":  # only these declare inlayHint refresh support
        assert s.client.inlay_refreshes > 0  # type: ignore[attr-defined]


async def test_new_article_appears_for_an_ungoverned_file(s: Session):
    """SPEC §10 external changes: a nearer article created by the agent governs at once."""
    s.open("docs/readme.md")
    assert await s.inlay("docs/readme.md") == []
    await agent_write(s, {"action": "write", "path": "docs", "capsule": "User docs."})
    report(s, ".canon/articles/docs.md", types.FileChangeType.Created)

    async def hinted() -> bool:
        return [h.label for h in await s.inlay("docs/readme.md")] == ["docs: User docs."]

    await s.until(hinted, what="the new article's inlay hint")


async def test_a_hand_edit_shows_in_read_through_the_server(s: Session) -> None:
    """Issue 15: the server keeps no article bodies; `canon.read` shows the body on disk now,
    the capsule too (the read re-checks the file)."""
    await s.checked()
    before = await s.command("canon.read", {"path": "src/core/config.ts"})
    assert "Loads layered config" in before and "Edited by hand" not in before
    path = s.root / CONFIG
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("Loads layered config", "Edited by hand, loads config")
        + "\nA line added by hand.\n",
        encoding="utf-8",
    )
    after = await s.command("canon.read", {"path": "src/core/config.ts"})
    assert "capsule: Edited by hand, loads config" in after, after
    assert "A line added by hand." in after, after
