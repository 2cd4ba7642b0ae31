"""SPEC §10 workspace symbols: the first query is answered at once from what the server holds
(addresses, titles, capsules, tags), before the store has loaded and before the BM25 worker
is ready; never empty for a store with matches, never a wait for the index."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_harness import article as article_text
from lsp_harness import build_workspace, busy_search_worker, write
from lsprotocol import types
from raw_rpc import RawServer

from canon_ls.lsp.handlers import symbols
from canon_ls.lsp.session.state import CanonLanguageServer
from canon_ls.lsp.startup import early_symbols


def test_the_first_query_answers_before_the_store_loads(tmp_path: Path):
    root = build_workspace(tmp_path / "proj")
    for i in range(3000):  # enough articles that the load takes many turns of the loop
        write(root, f".canon/articles/gen/d{i:04}.md", article_text(f"Gen {i}.", "2026-01-01", ""))
    ls = CanonLanguageServer()
    ls.protocol.client_capabilities = types.ClientCapabilities()  # a client that says nothing
    folder = ls.add_folder(root.as_uri())
    assert folder is not None and folder.store is not None
    store = folder.store

    async def first() -> tuple[list[str], bool, bool]:
        try:
            got = await symbols.on_workspace_symbol(ls, types.WorkspaceSymbolParams(query="config"))
            worker = folder.searcher
            return [s.name for s in got or []], store.loaded, bool(worker and worker.ready)
        finally:
            if folder.searcher is not None:
                folder.searcher.stop()

    names, loaded, ready = asyncio.run(first())
    assert "src/core/config — Loads layered config; env beats file." in names
    assert not loaded and not ready  # answered from what was held, waiting for neither


def test_the_early_ranking():
    """Exact address, then addresses starting with the query (or their last segment), then
    holding it, then articles holding every word in title, capsule or tags, then those holding
    some of the words."""
    from canon_ls.core.storage.article import parse

    held = [
        parse("---\ncapsule: Reads the env.\ntags: [settings]\n---\n# Config loader\n", "src/env"),
        parse("---\ncapsule: Nothing here.\n---\n# Other\n", "lib/other"),
    ]
    addresses = ["lib/configure", "src/config", "config", "docs/app-config", "src/env", "x/y"]
    assert early_symbols.rank("config", addresses, held, 10) == [
        "config",
        "src/config",
        "lib/configure",
        "docs/app-config",
        "src/env",
    ]
    assert early_symbols.rank("settings env", addresses, held, 10) == ["src/env"]
    # Some words only: never an empty first answer while something holds a word of it; the
    # article holding more of the words first, all of them above any partial one.
    everything = [*addresses, "lib/other"]
    assert early_symbols.rank("env reads nothing", everything, held, 10) == ["src/env", "lib/other"]
    assert early_symbols.rank("reads env", addresses, held, 10)[0] == "src/env"
    assert early_symbols.rank("env zzz", addresses + ["a/env-zzz"], held, 10)[0] == "a/env-zzz"
    assert early_symbols.rank("", addresses, held, 2) == ["x/y", "config"]


async def test_a_small_store_answers_a_body_word_without_the_search_worker(tmp_path: Path):
    """Issue 40 item 2: in a small store a first query that only a body matches is ranked
    by the server itself (the same BM25), not after the search worker starts (~1 s at 100
    articles, more than the peer's whole answer). The worker here never gets ready."""
    root = build_workspace(tmp_path / "proj")
    server = await RawServer.start(busy_search_worker(tmp_path))
    try:
        await server.initialize(root)
        # "resolution" is in the config article's body only (not its address, title, capsule)
        answer = await server.request("workspace/symbol", {"query": "resolution"}, timeout=30)
        names = [hit["name"] for hit in answer.get("result") or []]
        assert any(name.startswith("src/core/config") for name in names), answer
    finally:
        await server.stop()  # shutdown ends the server's helpers, the busy worker included
