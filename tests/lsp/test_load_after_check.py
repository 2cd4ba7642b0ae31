"""Issue 15: with no parse cache yet, the server's store waits for the one the start-up
check's child writes instead of parsing every article a second time, and answers hovers
from the article files meanwhile. An article edited while it waits is read as it is now:
the cache is keyed by each file's stat and the store scans its files after the wait (the
file's event meanwhile waits for the load too, rather than loading the store in one go).

The check child is held (SIGSTOP) so the edit falls inside the wait; Linux only (/proc)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from lsp_harness import (
    SERVER_COMMAND,
    SERVER_ENV,
    Session,
    build_workspace,
    folder_params,
    text_of,
    write,
)
from lsp_harness import article as article_text
from lsprotocol import types
from pytest_lsp import ClientServerConfig

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

WAITS = "canon waits for the parse cache of the check of"
LOADED = "canon loaded the store of"
WATCHING = "canon watches the store"
DEFERRED = "canon reads the files changed meanwhile once the store of"


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def _check_child(server: int, deadline_s: float = 30.0) -> int:
    """The server's whole-store check child, as soon as it exists."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        for pid in _children(server):
            try:
                if b"canon_ls.lsp.helpers.background" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return pid
            except OSError:
                continue
    raise AssertionError("no check child started")


async def test_an_article_edited_while_the_store_waits_for_the_check_is_read(tmp_path: Path):
    root = build_workspace(tmp_path / "proj")
    for i in range(600):  # enough that the child writes a parse cache (cache.MIN_PARSED)
        write(root, f".canon/articles/gen/d{i:03}.md", article_text(f"Gen {i}.", "2026-01-01", ""))
    env = {**SERVER_ENV, "XDG_CACHE_HOME": str(tmp_path / "cache")}  # no parse cache yet
    config = ClientServerConfig(server_command=SERVER_COMMAND, server_env=env)
    client = await config.start(None)
    held: int | None = None
    try:
        await client.initialize_session(folder_params(root))
        server = client._server
        assert server is not None
        held = _check_child(server.pid)
        os.kill(held, signal.SIGSTOP)  # long before its store has loaded (it is importing)
        session = Session(client, root, "visual-studio-code", "utf-16")
        uri = (root / "src/core/config.ts").as_uri()

        async def hover() -> str:
            return text_of(
                await client.text_document_hover_async(
                    types.HoverParams(
                        text_document=types.TextDocumentIdentifier(uri=uri),
                        position=types.Position(line=0, character=3),
                    )
                )
            )

        def logged(line: str) -> bool:
            return any(line in m.message for m in client.log_messages)

        assert "Loads layered config; env beats file." in await hover()  # from the files
        await session.until(lambda: logged(WAITS), 30, "the load to wait for the check")
        await session.until(lambda: logged(WATCHING), 30, "the server's watcher to start")
        assert not logged(LOADED)
        write(
            root,
            ".canon/articles/src/core/config.md",
            article_text("Edited while the store waited.", "2026-01-01", "# Config\n"),
        )
        assert "Edited while the store waited." in await hover()  # still from the files
        # its file event waits for the load too (not a load in one go on the loop)
        await session.until(lambda: logged(DEFERRED), 30, "the file event to wait for the load")
        assert not logged(LOADED)
        os.kill(held, signal.SIGCONT)
        held = None
        await session.until(lambda: logged(LOADED), 60, "the store to load")
        loaded = await hover()  # from the loaded store now
        assert "Edited while the store waited." in loaded
        assert "Loads layered config" not in loaded
        await session.checked(60)
        assert (tmp_path / "cache" / "canon-ls").is_dir()  # the child wrote the parse cache
    finally:
        if held is not None:
            os.kill(held, signal.SIGCONT)
        await asyncio.wait_for(client.shutdown_session(), 60)
