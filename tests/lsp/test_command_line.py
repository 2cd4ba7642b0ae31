"""The `canon-ls` command line: `--version`, and `--stdio` (what stdio clients append)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from lsp_harness import SERVER_ENV

CANON_LS = str(Path(sys.executable).parent / "canon-ls")


def test_version_is_printed() -> None:
    done = subprocess.run([CANON_LS, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout.startswith("canon-ls ")


async def test_stdio_flag_serves_over_stdio(tmp_path: Path) -> None:
    """vscode-languageclient's stdio transport (and other clients) start `canon-ls --stdio`."""
    proc = await asyncio.create_subprocess_exec(
        CANON_LS,
        "--stdio",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=SERVER_ENV,
    )
    assert proc.stdin is not None and proc.stdout is not None
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}},
        }
    ).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    await proc.stdin.drain()
    while True:  # headers, then the answer to initialize (log notifications may come first)
        length = 0
        while (line := await asyncio.wait_for(proc.stdout.readline(), 60)).strip():
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        message = json.loads(await proc.stdout.readexactly(length))
        if message.get("id") == 1:
            break
    assert message["result"]["serverInfo"]["name"] == "canon-ls"
    proc.kill()
    await proc.wait()
