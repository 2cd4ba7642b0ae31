"""A raw JSON-RPC client over the real server's stdio (no LSP library on our side).

Used where the client must send what no well-behaved library would: malformed frames, invalid
params, ids of every kind. Responses are collected by id; notifications from the server are
kept too, in order.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

from lsp_harness import SERVER_COMMAND, SERVER_ENV


class Reader:
    """Collects responses by id (and server notifications) from the server's stdout."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream = stream
        self.responses: dict[Any, dict] = {}
        self.notifications: list[dict] = []
        self.requests: list[dict] = []
        self.arrived = asyncio.Event()

    async def run(self) -> None:
        while True:
            line = await self.stream.readline()
            if not line:
                self.arrived.set()
                return
            if not line.startswith(b"Content-Length:"):
                continue
            length = int(line.split(b":")[1])
            while (await self.stream.readline()).strip():
                pass
            data = json.loads(await self.stream.readexactly(length))
            if "id" in data and "method" not in data:
                key = data["id"]
                self.responses[key if isinstance(key, str | int | None) else repr(key)] = data
            elif "id" in data:
                self.requests.append(data)
            else:
                self.notifications.append(data)
            self.arrived.set()

    async def wait(self, msg_id: Any, timeout: float = 60) -> dict:
        async def get() -> dict:
            while msg_id not in self.responses:
                self.arrived.clear()
                await self.arrived.wait()
            return self.responses[msg_id]

        return await asyncio.wait_for(get(), timeout)


def send(proc: asyncio.subprocess.Process, method: str, params: Any, msg_id: Any = None) -> None:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if msg_id is not None:
        msg["id"] = msg_id
    body = json.dumps(msg).encode() + b"\r\n"
    assert proc.stdin is not None
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)


async def drain(stream: asyncio.StreamReader, into: bytearray | None = None) -> None:
    while chunk := await stream.read(65536):
        if into is not None:
            into += chunk


class RawServer:
    """The real `canon-ls` process, driven by hand: `await request(method, params)`."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        assert proc.stdout is not None and proc.stderr is not None
        self.reader = Reader(proc.stdout)
        self.stderr = bytearray()
        self.tasks = [
            asyncio.ensure_future(self.reader.run()),
            asyncio.ensure_future(drain(proc.stderr, self.stderr)),
        ]
        self.ids = itertools.count(1)

    @classmethod
    async def start(cls, env: dict[str, str] | None = None) -> RawServer:
        proc = await asyncio.create_subprocess_exec(
            *SERVER_COMMAND,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**SERVER_ENV, **(env or {})},
            limit=2**24,
        )
        return cls(proc)

    async def request(self, method: str, params: Any, timeout: float = 60, **extra: Any) -> dict:
        msg_id = next(self.ids)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method, **extra}
        if params is not ...:
            msg["params"] = params
        self.write(msg)
        await self.flush()
        try:
            return await self.reader.wait(msg_id, timeout)
        except TimeoutError:
            raise AssertionError(f"{method} with params {params!r} was left unanswered") from None

    def send(self, msg_id: Any, method: str, params: Any) -> None:
        """A request written without waiting for its answer (`reader.wait(msg_id)` takes it)."""
        self.write({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})

    def notify(self, method: str, params: Any) -> None:
        self.write({"jsonrpc": "2.0", "method": method, "params": params})

    def write(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def flush(self) -> None:
        assert self.proc.stdin is not None
        await self.proc.stdin.drain()

    async def initialize(self, root: Path, capabilities: dict[str, Any] | None = None) -> dict:
        answer = await self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": capabilities or {},
                "workspaceFolders": [{"uri": root.as_uri(), "name": "proj"}],
            },
        )
        self.notify("initialized", {})
        return answer

    async def stop(self) -> int:
        """`shutdown` then `exit`; the process's exit code."""
        await self.request("shutdown", None)
        self.notify("exit", None)
        await self.flush()
        code = await asyncio.wait_for(self.proc.wait(), 30)
        for task in self.tasks:
            task.cancel()
        return code
