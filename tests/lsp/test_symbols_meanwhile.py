"""SPEC §10 workspace symbols: the first query is answered while the server is still being
built (lsp/startup/meanwhile.py), and whatever the client sent meanwhile reaches the server whole,
in
order, each request answered exactly once."""

from __future__ import annotations

import asyncio
import collections
import json
import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import SERVER_COMMAND, SERVER_ENV, build_workspace
from processes import descendants
from raw_rpc import RawServer

CONFIG = "src/core/config — Loads layered config; env beats file."


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _initialize(root: Path, msg_id: int = 1, **capabilities: Any) -> dict[str, Any]:
    uri = root.as_uri()
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "initialize",
        "params": {
            "processId": None,
            "rootUri": uri,
            "capabilities": capabilities,
            "workspaceFolders": [{"uri": uri, "name": "proj"}],
        },
    }


def _symbol(msg_id: int, query: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "workspace/symbol",
        "params": {"query": query},
    }


@pytest.mark.parametrize("early", ["1", "0"])
@pytest.mark.parametrize("query", ["config", "resolution"])
def test_the_first_symbol_is_answered_before_the_server_is_built(
    tmp_path: Path, early: str, query: str
):
    """stdout and stderr share one pipe, so writes are seen in their order: the symbol's
    answer precedes `-X importtime`'s line for the server module (which the server's own
    answer can only follow). "resolution" is a word of the config article's body only: a
    small store ranks it by BM25 before the server is built too (issue 40 item 2)."""
    root = build_workspace(tmp_path / "proj")
    sent = (
        _frame(_initialize(root))
        + _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        + _frame(_symbol(8, query))
    )
    proc = subprocess.Popen(
        [SERVER_COMMAND[0], "-X", "importtime", *SERVER_COMMAND[1:]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**SERVER_ENV, "CANON_LS_EARLY_SYMBOLS": early},
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(sent)
    proc.stdin.flush()
    both = b""
    server_module = re.compile(rb"\| +canon_ls\.lsp\.server\r?\n")
    while not (server_module.search(both) and b"env beats file" in both.partition(b'"id": 8')[2]):
        chunk = proc.stdout.read1(65536)  # the test's timeout ends a server that never says
        assert chunk, both[-3000:]
        both += chunk
    proc.stdin.close()
    proc.stdout.read()
    proc.wait(timeout=60)
    answer = both.find(b'"id": 8')
    built = server_module.search(both)
    assert answer != -1, both[-3000:]
    assert built is not None, "importtime wrote nothing about canon_ls.lsp.server"
    assert (answer < built.start()) == (early == "1")
    assert both.count(b'"id": 8') == 1
    assert CONFIG.encode() in both or json.dumps(CONFIG)[1:-1].encode() in both


async def test_every_byte_sent_meanwhile_reaches_the_server_in_order(tmp_path: Path):
    """Requests of every kind while the server is built, one frame cut in two: each answered
    once, the symbols early or late, the rest by the server, as if nothing stood between."""
    root = build_workspace(tmp_path / "proj")
    server = await RawServer.start()
    server.reader.responses = counted = Counted()
    await server.initialize(root)
    hover = {
        "textDocument": {"uri": (root / "src/core/config.ts").as_uri()},
        "position": {"line": 0, "character": 0},
    }
    ids = list(range(100, 120))
    for msg_id in ids:
        if msg_id % 3 == 0:
            server.write(_symbol(msg_id, "config"))
        elif msg_id % 3 == 1:
            server.write(
                {"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/hover", "params": hover}
            )
        else:
            cut = _frame(_symbol(msg_id, "layered"))
            assert server.proc.stdin is not None
            server.proc.stdin.write(cut[:20])
            await server.flush()
            server.proc.stdin.write(cut[20:])
        await server.flush()
    answers = {msg_id: await server.reader.wait(msg_id) for msg_id in ids}
    await server.stop()
    for msg_id, answer in answers.items():
        got = json.dumps(answer.get("result"), ensure_ascii=False)
        if msg_id % 3 == 1:
            assert "Loads layered config" in got, answer
        else:
            assert CONFIG in got, answer
    # every id once: the early reader's answers are not answered again by the server
    assert {msg_id: counted.times[msg_id] for msg_id in ids} == dict.fromkeys(ids, 1)


class Counted(dict):
    """The reader's responses by id, counting how often each id was answered."""

    def __init__(self) -> None:
        super().__init__()
        self.times: collections.Counter[Any] = collections.Counter()

    def __setitem__(self, key: Any, value: Any) -> None:
        self.times[key] += 1
        super().__setitem__(key, value)


async def test_an_early_answer_starts_the_indexing_progress(tmp_path: Path):
    """The server never saw the query answered early, yet starts what it would have started:
    the store's load, the index, and the progress saying the answers may miss body words."""
    root = build_workspace(tmp_path / "proj")
    server = await RawServer.start()
    await server.initialize(root, {"window": {"workDoneProgress": True}})
    answer = await server.request("workspace/symbol", {"query": "config"})
    assert CONFIG in json.dumps(answer["result"], ensure_ascii=False)

    async def begun() -> None:
        while True:
            for request in server.reader.requests:
                if (
                    request["method"] == "window/workDoneProgress/create"
                    and "answered" not in request
                ):
                    request["answered"] = True
                    server.write({"jsonrpc": "2.0", "id": request["id"], "result": None})
                    await server.flush()
            titles = [
                n["params"]["value"].get("title")
                for n in server.reader.notifications
                if n["method"] == "$/progress"
            ]
            if "canon: indexing symbols" in titles:
                return
            server.reader.arrived.clear()
            await server.reader.arrived.wait()

    await asyncio.wait_for(begun(), 60)
    await server.stop()


def test_no_process_outlives_a_client_that_closes_stdin(tmp_path: Path):
    """The client sends `initialize` and goes away while the early reader holds stdin: the
    server and its reader both end (none waits for the other forever)."""
    root = build_workspace(tmp_path / "proj")
    proc = subprocess.Popen(
        SERVER_COMMAND,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=SERVER_ENV,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(_frame(_initialize(root)))
    proc.stdin.flush()
    assert b'"id": 1' in proc.stdout.read1(65536)  # answered early; the reader has forked
    children = list(descendants(proc.pid))
    assert children, "no early reader was forked"
    proc.stdin.close()
    assert proc.wait(timeout=60) in (0, 1)
    for pid in children:
        _wait_gone(pid)


def _wait_gone(pid: int, timeout: float = 30) -> None:
    """Wait (without sleeping blind) until `pid` is no more: a pidfd is readable once the
    process has ended."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        import select

        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"process {pid} outlived the session")
    finally:
        os.close(fd)
