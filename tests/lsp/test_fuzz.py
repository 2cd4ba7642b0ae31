"""SPEC §12: 10,000 random or malformed JSON-RPC messages never kill the server.

Raw bytes over the server's stdin (asyncio subprocess, no LSP library on our side): bad JSON,
bad or lying headers, wrong params, unknown methods, responses to nothing. Afterwards hover
still answers correctly. Every body ends with a newline, as the resync point after a lying
Content-Length (pygls' reader finds the next header at the next line).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import FIRST_LINE, SERVER_COMMAND, SERVER_ENV, build_workspace
from raw_rpc import Reader, drain, send

METHODS = [
    "textDocument/hover",
    "textDocument/inlayHint",
    "textDocument/codeLens",
    "textDocument/codeAction",
    "textDocument/documentLink",
    "textDocument/definition",
    "textDocument/references",
    "textDocument/completion",
    "workspace/symbol",
    "workspace/willRenameFiles",
    "workspace/executeCommand",
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "textDocument/didSave",
    "workspace/didChangeWatchedFiles",
    "codeAction/resolve",
    "$/cancelRequest",
    "textDocument/diagnostic",
    "workspace/diagnostic",
    "canon/unknown",
    "",
    "x" * 300,
]
COMMANDS = [
    "canon.read",
    "canon.map",
    "canon.search",
    "canon.status",
    "canon.resolve",
    "canon.nope",
    "canon.write",
    "canon.journal",
    "canon.open",
    "canon.history",
    "canon.showChanges",
]


def junk(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 2**31, 2**63, 1.5, -0.0])
    if kind == 3:
        return rng.choice(
            [
                "",
                "file:///",
                "file:///etc/passwd",
                "\x00",
                "🚀" * 50,
                "../../x",
                "[[a]]",
                "src/core/config.ts",
                "file:///nonexistent/a.ts",
            ]
        )
    if kind == 4:
        return "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(rng.randrange(20)))
    if kind == 5:
        return rng.randrange(-5, 10_000_000)
    if kind == 6:
        return [junk(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = [
        "textDocument",
        "position",
        "uri",
        "line",
        "character",
        "range",
        "context",
        "files",
        "command",
        "arguments",
        "query",
        "id",
        "changes",
        "contentChanges",
    ]
    return {rng.choice(keys): junk(rng, depth + 1) for _ in range(rng.randrange(5))}


def plausible(rng: random.Random, uri: str) -> Any:
    """Params shaped almost right: the server's type checks and our guards get exercised."""
    pos = {"line": rng.choice([0, 1, 5, 10**6, -1]), "character": rng.choice([0, 3, 500, -2])}
    doc = {"uri": rng.choice([uri, "file:///nope.ts", "untitled:1", "file:///dev/zero"])}
    return rng.choice(
        [
            {"textDocument": doc, "position": pos},
            {"textDocument": doc, "range": {"start": pos, "end": pos}},
            {
                "textDocument": doc,
                "range": {"start": pos, "end": pos},
                "context": {"diagnostics": []},
            },
            {"query": junk(rng)},
            {"files": [{"oldUri": uri, "newUri": junk(rng)}]},
            {"command": rng.choice(COMMANDS), "arguments": [junk(rng)]},
            {"changes": [{"uri": junk(rng), "type": rng.choice([1, 2, 3, 9])}]},
            {"textDocument": {**doc, "version": 2}, "contentChanges": [{"text": junk(rng)}]},
        ]
    )


def frame(body: bytes, rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.003:  # an absurd length must not end the process (MemoryError)
        return b"Content-Length: 99999999999\r\n\r\n" + body
    if roll < 0.04:
        return b"Content-Type: nonsense\r\n" + b"Content-Length: %d\r\n\r\n" % len(body) + body
    if roll < 0.07:
        return b"Content-Length: %d\r\n\r\n" % max(0, len(body) + rng.choice([-3, 5])) + body
    if roll < 0.09:
        return b"Content-Lenght: 12\r\n\r\n" + body
    if roll < 0.10:
        return b"Content-Length: abc\r\n\r\n" + body
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def message(rng: random.Random, n: int, uri: str) -> bytes:
    roll = rng.random()
    if roll < 0.08:
        return b'{"jsonrpc": "2.0", "id": 1, "method": "textDocument/hov' + b"\r\n"
    if roll < 0.12:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60))) + b"\r\n"
    msg: dict[str, Any] = {
        "jsonrpc": rng.choice(["2.0"] * 9 + ["1.0"]),
        "method": rng.choice(METHODS),
    }
    if rng.random() < 0.6:
        msg["id"] = rng.choice([n, f"f{n}", None, [1], {"a": 1}])
    msg["params"] = plausible(rng, uri) if rng.random() < 0.6 else junk(rng)
    if rng.random() < 0.05:
        msg = {"jsonrpc": "2.0", "id": rng.randrange(1000), "result": junk(rng)}
    return json.dumps(msg).encode() + b"\r\n"


async def test_ten_thousand_bad_messages_then_hover_still_answers(tmp_path: Path):
    """SPEC §12: bad JSON-RPC yields errors or nothing; the server survives and stays right."""
    root = build_workspace(tmp_path / "proj")
    (root / "bin.dat").write_bytes(bytes(range(256)) * 64)
    proc = await asyncio.create_subprocess_exec(
        *SERVER_COMMAND,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=SERVER_ENV,
        limit=2**24,
    )
    assert proc.stdout is not None and proc.stderr is not None and proc.stdin is not None
    reader = Reader(proc.stdout)
    tasks = [asyncio.ensure_future(reader.run()), asyncio.ensure_future(drain(proc.stderr))]
    uri = (root / "src/core/config.ts").as_uri()
    send(
        proc,
        "initialize",
        {"processId": None, "rootUri": root.as_uri(), "capabilities": {}, "workspaceFolders": None},
        "init",
    )
    await reader.wait("init")
    send(proc, "initialized", {})
    send(
        proc,
        "textDocument/didOpen",
        {
            "textDocument": {
                "uri": uri,
                "languageId": "typescript",
                "version": 1,
                "text": (root / "src/core/config.ts").read_text(),
            }
        },
    )
    rng = random.Random(20261129)
    for n in range(int(os.environ.get("CANON_FUZZ_N", "10000"))):
        proc.stdin.write(frame(message(rng, n, uri), rng))
        if n % 200 == 0:
            await proc.stdin.drain()
    await proc.stdin.drain()
    assert proc.returncode is None, "the server died during the fuzz"
    hover = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 2}}
    for attempt in range(3):  # a lying length may swallow one message; ids are unique
        send(proc, "textDocument/hover", hover, f"final-{attempt}")
    await proc.stdin.drain()
    answer = await reader.wait("final-2", timeout=120)
    assert "Loads layered config; env beats file." in answer["result"]["contents"]["value"]
    assert FIRST_LINE  # the hovered line starts with a comment, not a path token
    send(proc, "shutdown", None, "bye")
    await reader.wait("bye")
    send(proc, "exit", None)
    await proc.stdin.drain()
    assert await asyncio.wait_for(proc.wait(), 30) == 0
    for task in tasks:
        task.cancel()


@pytest.mark.parametrize("polite", [True, False], ids=["shutdown-then-exit", "exit-only"])
async def test_exit_code_follows_the_protocol(tmp_path: Path, polite: bool):
    """LSP `exit`: the process ends with 0 after `shutdown`, with 1 without it."""
    root = build_workspace(tmp_path / "proj")
    proc = await asyncio.create_subprocess_exec(
        *SERVER_COMMAND,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=SERVER_ENV,
    )
    assert proc.stdout is not None and proc.stdin is not None
    reading = asyncio.ensure_future(drain(proc.stdout))
    send(proc, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}, 1)
    send(proc, "initialized", {})
    if polite:
        send(proc, "shutdown", None, 2)
    send(proc, "exit", None)
    await proc.stdin.drain()
    proc.stdin.close()  # as editors do once they sent `exit`
    assert await asyncio.wait_for(proc.wait(), 30) == (0 if polite else 1)
    reading.cancel()


async def test_shutdown_while_a_command_waits_still_exits_zero(tmp_path: Path):
    """LSP `shutdown` with a request still running (here `canon.open`, waiting for a
    window/showDocument answer this client never gives; likewise a `canon.history` child):
    the request is cancelled, `shutdown` is answered, and `exit` ends the process with 0."""
    root = build_workspace(tmp_path / "proj")
    proc = await asyncio.create_subprocess_exec(
        *SERVER_COMMAND,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=SERVER_ENV,
    )
    assert proc.stdout is not None and proc.stdin is not None
    reader = Reader(proc.stdout)
    task = asyncio.ensure_future(reader.run())
    send(proc, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}, 1)
    await reader.wait(1)
    send(proc, "initialized", {})
    uri = (root / "src/core/config.ts").as_uri()
    send(proc, "workspace/executeCommand", {"command": "canon.open", "arguments": [uri]}, 2)
    send(proc, "workspace/executeCommand", {"command": "canon.history", "arguments": [uri]}, 3)
    send(proc, "shutdown", None, 4)
    answer = await reader.wait(4)
    assert "error" not in answer, answer
    send(proc, "exit", None)
    await proc.stdin.drain()
    assert await asyncio.wait_for(proc.wait(), 30) == 0
    task.cancel()
