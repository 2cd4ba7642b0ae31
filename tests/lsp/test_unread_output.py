"""SPEC §12: a client that stops reading the server's stdout cannot grow the server without
bound. The real server process gets 20,000 requests (5 kB answers each: 100 MB if all were
queued) from a client that reads nothing: past a bounded backlog the server stops reading
requests (it says so on stderr), its memory stays bounded, and once the client reads again
every request is answered and `shutdown` too."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from lsp_harness import SERVER_COMMAND, SERVER_ENV, build_workspace, poll

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")

REQUESTS = 20_000
METHOD = "canon/" + "x" * 5000  # unknown: answered with an error that names it


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def _message(stream: asyncio.StreamReader) -> dict:
    length = 0
    while line := (await stream.readline()).strip():
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(await stream.readexactly(length))


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.timeout(300)
async def test_a_client_that_reads_nothing_cannot_grow_the_server(tmp_path: Path) -> None:
    root = build_workspace(tmp_path / "proj")
    proc = await asyncio.create_subprocess_exec(
        *SERVER_COMMAND,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=SERVER_ENV,
        limit=2**20,
    )
    assert proc.stdin and proc.stdout and proc.stderr
    stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr
    log = bytearray()

    async def collect() -> None:
        while chunk := await stderr.read(65536):
            log.extend(chunk)

    logging = asyncio.ensure_future(collect())
    params = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
    stdin.write(_frame({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}))
    while (await asyncio.wait_for(_message(stdout), 60)).get("id") != 0:
        pass
    stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    ping = {"jsonrpc": "2.0", "id": "ping", "method": "canon/ping", "params": {}}
    stdin.write(_frame(ping))  # answered once the server is built (its imports weigh tens of MB)
    while (await asyncio.wait_for(_message(stdout), 60)).get("id") != "ping":
        pass
    before = _rss_kb(proc.pid)

    async def send() -> None:
        for i in range(1, REQUESTS + 1):
            stdin.write(_frame({"jsonrpc": "2.0", "id": i, "method": METHOD, "params": {}}))
            await stdin.drain()  # waits while the server reads nothing

    sending = asyncio.ensure_future(send())
    await poll(lambda: b"paused reading" in log or sending.done(), 120, lambda: log.decode())
    assert not sending.done(), "the server read every request and queued every answer"
    grown_mb = (_rss_kb(proc.pid) - before) / 1024
    assert grown_mb < 48, f"the server grew by {grown_mb:.0f} MB for a client reading nothing"
    answered: set[int] = set()
    while len(answered) < REQUESTS:  # the client reads again: nothing was lost
        message = await asyncio.wait_for(_message(stdout), 60)
        if isinstance(message.get("id"), int):
            assert message["error"]["code"] == -32601
            answered.add(message["id"])
    await sending
    stdin.write(_frame({"jsonrpc": "2.0", "id": "end", "method": "shutdown"}))
    while (await asyncio.wait_for(_message(stdout), 60)).get("id") != "end":
        pass
    stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
    assert await asyncio.wait_for(proc.wait(), 30) == 0
    logging.cancel()
