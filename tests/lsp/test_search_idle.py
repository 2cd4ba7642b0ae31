"""The search worker is not kept when nobody searches (issue 15): after a while without a
question it exits, and the next workspace/symbol starts it again from its index file, with
the same answers and what changed meanwhile (SPEC §10 workspace symbols)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from lsp_harness import SERVER_COMMAND, SERVER_ENV, article, poll, write
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities


def worker_pid(server: int) -> int | None:
    """The server's search worker, if one runs (its children, read from /proc)."""
    children: list[str] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{server}/task"):
            with open(f"/proc/{server}/task/{task}/children", encoding="ascii") as fh:
                children += fh.read().split()
    for child in children:
        with contextlib.suppress(OSError), open(f"/proc/{child}/cmdline", "rb") as fh:
            if b"canon_ls.lsp.helpers.searcher" in fh.read():
                return int(child)
    return None


async def names(client: LanguageClient, query: str) -> list[str]:
    got = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    return [sym.name.split(" — ")[0] for sym in got or []]


async def test_an_idle_worker_exits_and_the_next_question_starts_it_again(
    workspace: Path, tmp_path: Path
):
    env = {**SERVER_ENV, "CANON_SEARCH_IDLE_S": "1", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    client = await ClientServerConfig(server_command=SERVER_COMMAND, server_env=env).start(None)
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                root_uri=workspace.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="proj")],
            )
        )
        server = client._server.pid  # type: ignore[union-attr]
        assert (await names(client, "layered config"))[0] == "src/core/config"  # at once

        def indexed() -> bool:  # BM25 answers from now on
            return any(
                token.startswith("canon-index-")
                and any(isinstance(r, types.WorkDoneProgressEnd) for r in reports)
                for token, reports in client.progress_reports.items()
            )

        await poll(indexed, 60, lambda: "the indexing progress did not end")
        before = {q: await names(client, q) for q in ("layered config", "widget", "env file")}
        assert before["layered config"][0] == "src/core/config"
        first = await poll(lambda: worker_pid(server), 30, lambda: "no search worker started")
        await poll(lambda: worker_pid(server) is None, 30, lambda: "the idle worker did not exit")
        write(  # written while no worker runs: the next one reads it
            workspace,
            ".canon/articles/src/app.md",
            article("Zanzibar quokka entry point.", "2026-01-01", "# app\n"),
        )
        assert (await names(client, "zanzibar quokka"))[:1] == ["src/app"]
        again = worker_pid(server)
        assert again is not None and again != first
        for query, answer in before.items():
            assert await names(client, query) == answer, query
    finally:
        await client.shutdown_session()
