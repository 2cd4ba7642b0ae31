"""The server's stdout (SPEC §10: answers never wait on the push): a write never blocks the
event loop, and an answer goes out before notifications still queued. A real pipe, a real
event loop; the reader is this test, reading late as a busy client does."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os

import pytest

from canon_ls.lsp.wire.stdio import LoopStdout

pytestmark = pytest.mark.skipif(os.name != "posix", reason="a non-blocking pipe")


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _messages(data: bytes) -> list[dict]:
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        length = int(head.split(b":")[1])
        out.append(json.loads(rest[:length]))
        data = rest[length:]
    return out


async def test_an_answer_overtakes_the_queued_push() -> None:
    read_end, write_end = os.pipe()
    answering = False
    pushes = [
        _frame(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/publishDiagnostics",
                "params": {"uri": f"file:///a{i}.md", "diagnostics": [{"message": "x" * 2000}]},
            }
        )
        for i in range(200)
    ]  # ~400 kB: far more than a pipe holds
    with os.fdopen(write_end, "wb", buffering=0) as stream:
        writer = LoopStdout(stream, lambda: answering)
        for push in pushes:
            writer.write(push)  # returns at once although nobody reads yet
        answering = True
        writer.write(_frame({"jsonrpc": "2.0", "id": 7, "result": {"contents": "hover"}}))
        answering = False
        writer.write(_frame({"jsonrpc": "2.0", "method": "window/logMessage", "params": {}}))
        received = b""
        while len(received) < sum(map(len, pushes)):
            await asyncio.sleep(0)  # the loop drains the pipe as room appears
            with contextlib.suppress(BlockingIOError):
                received += os.read(read_end, 1 << 20)
            os.set_blocking(read_end, False)
        writer.flush()
        os.set_blocking(read_end, True)
    while chunk := os.read(read_end, 1 << 20):
        received += chunk
    os.close(read_end)
    messages = _messages(received)
    order = [m.get("id", m.get("method")) for m in messages]
    assert len(messages) == 202  # nothing lost, each message whole
    assert order.index(7) < 50  # after what the pipe held already, not after 200 pushes
    assert order[-1] == "window/logMessage"  # the notifications keep their order
    uris = [m["params"]["uri"] for m in messages if m.get("method", "").endswith("Diagnostics")]
    assert uris == [f"file:///a{i}.md" for i in range(200)]
