"""SPEC §10: multi-root workspaces (one store per folder), logging, search kept current."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from lsp_harness import Session, article, poll, write
from lsprotocol import types


async def test_second_folder_gets_its_own_store(s: Session, tmp_path: Path):
    """SPEC §10 / §2: each workspace folder is a project with its own store."""
    other = tmp_path / "other"
    write(other, "lib/tool.py", "# tool\n")
    write(other, ".canon/articles/lib.md", article("Other project's lib.", "2026-12-01", "# lib\n"))
    s.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=other.as_uri(), name="other")], removed=[]
            )
        )
    )
    uri = (other / "lib/tool.py").as_uri()
    s.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text="# tool\n"
            )
        )
    )

    async def other_hint() -> list[str]:
        hints = await s.client.text_document_inlay_hint_async(
            types.InlayHintParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(
                    start=types.Position(line=0, character=0),
                    end=types.Position(line=1, character=0),
                ),
            )
        )
        return [h.label for h in hints or []]

    assert await s.until(other_hint, what="the second folder's hint") == [
        "lib: Other project's lib."
    ]
    s.open("src/core/config.ts")  # the first folder still answers from its own store
    assert [h.label for h in await s.inlay("src/core/config.ts")] == [
        "Loads layered config; env beats file."
    ]


async def test_logging_reaches_the_client(s: Session):
    """SPEC §10: Python logging is forwarded to window/logMessage."""
    await s.checked()
    await s.until(
        lambda: any("canon checked" in m.message for m in s.client.log_messages),
        what="the check's log line",
    )


async def test_search_sees_an_agent_write(s: Session):
    """SPEC §10 workspace symbols stay current: the searcher re-reads changed articles."""
    await s.checked()
    text = await s.command(
        "canon.write", {"path": "src/app.ts", "capsule": "Zanzibar quokka entry point."}
    )
    assert text.startswith("Wrote src/app")

    async def found() -> list[str]:
        result = await s.client.workspace_symbol_async(
            types.WorkspaceSymbolParams(query="zanzibar quokka")
        )
        return [sym.name.split(" — ")[0] for sym in result or []]

    assert (await s.until(found, what="the new article in search"))[0] == "src/app"


async def test_symbols_match_part_of_an_address_while_typed(s: Session):
    """SPEC §10 workspace symbols: a picker asks on every keystroke; a partial word inside an
    address ("idge", "CORE/CO") finds it, whether or not the BM25 index is ready yet."""

    async def names(query: str) -> list[str]:
        result = await s.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
        return [sym.name.split(" — ")[0] for sym in result or []]

    assert "lib/widget" in await names("idge")
    assert (await names("CORE/CO"))[:1] == ["src/core/config"]
    assert await names("xylophone quokkas zebu") == []  # words in no article


async def test_first_symbol_queries_answer_full_text(workspace: Path):
    """SPEC §10 workspace symbols: the very first queries, sent the moment the session starts
    (before any index is built), each get an answer that is never empty for a store that has
    matches: what the server holds when that matches, else the full text (words of bodies and
    capsules that no address contains, sent together); once the indexing progress ends, the
    same queries answer from the full text (issue 9 item 16, issue 25 item 1)."""
    import random

    from lsp_harness import SERVER_COMMAND, SERVER_ENV
    from pytest_lsp import ClientServerConfig, client_capabilities

    from canon_ls.core.storage.article import parse

    articles = workspace / ".canon" / "articles"
    addresses = {
        p.relative_to(articles).with_suffix("").as_posix(): p for p in articles.rglob("*.md")
    }
    words: dict[str, str] = {}
    for address, path in addresses.items():
        parsed = parse(path.read_bytes(), address)
        for word in re.findall(r"[a-z]{5,}", f"{parsed.capsule} {parsed.body}".lower()):
            if not any(word in a.lower() for a in addresses):
                words.setdefault(word, address)
    rng = random.Random(16)
    queries = rng.sample(sorted(words), min(8, len(words)))
    assert len(queries) >= 5
    config = ClientServerConfig(server_command=SERVER_COMMAND, server_env=SERVER_ENV)
    client = await config.start(None)  # no fixture: nothing may run before the first query
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                root_uri=workspace.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="proj")],
            )
        )
        answers = await asyncio.gather(
            *(client.workspace_symbol_async(types.WorkspaceSymbolParams(query=q)) for q in queries)
        )
        for query, answer in zip(queries, answers, strict=True):
            assert answer, query  # never empty: the store has a match for each
        await poll(lambda: _indexed(client), 60, lambda: "the indexing progress to end")
        for query in queries:
            answer = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
            names = [sym.name.split(" — ")[0] for sym in answer or []]
            assert words[query] in names, (query, names)
    finally:
        await client.shutdown_session()


async def test_a_failed_search_worker_says_why(tmp_path: Path):
    """Issue 9 item 16: when the BM25 worker cannot build its index, the question does not
    wait forever or pass for a full answer: `query` gives None and `failure` a reason (the
    server then answers from addresses and capsules and tells the person once)."""
    from canon_ls.lsp.helpers.searcher import Searcher

    def run(work: Any, name: str) -> asyncio.Task[Any]:
        return asyncio.get_running_loop().create_task(work, name=name)

    # the child cannot open this store
    worker = Searcher(tmp_path / "proj", {"mounts": {"lake": 5}}, run)
    try:
        assert await worker.query("config", 5, wait=60) is None
        assert "search worker" in worker.failure
    finally:
        worker.stop()


def _indexed(client: Any) -> bool:
    """The symbol indexing progress (`canon-index-…`), begun by the early answers, has ended."""
    tokens = [t for t in client.progress_reports if str(t).startswith("canon-index-")]
    return bool(tokens) and all(
        any(isinstance(r, types.WorkDoneProgressEnd) for r in client.progress_reports[t])
        for t in tokens
    )
