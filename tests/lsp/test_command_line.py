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


def test_help_is_written_for_users() -> None:
    """Issue 14 item 6: `canon-ls --help` says what the server does, names its flags (stdio
    the default, --tcp, --ws, --version) and links the docs; not pygls' generic text."""
    done = subprocess.run([CANON_LS, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith("usage: canon-ls")
    for flag in ("--stdio", "--tcp", "--ws", "--host", "--port", "--version"):
        assert flag in text, flag
    assert "language server" in text and "hover" in text and "(the default" in text
    assert "docs/LSP.md" in text and "docs/EDITORS.md" in text and "docs/FORMAT.md" in text
    assert "pygls" not in text and "instance" not in text and "SPEC" not in text


def test_a_bad_flag_is_one_sentence() -> None:
    done = subprocess.run([CANON_LS, "--bogus"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "canon-ls: unrecognized arguments: --bogus. Run `canon-ls --help` for usage."
    ]


async def test_tcp_serves_on_the_given_port(tmp_path: Path) -> None:
    """`canon-ls --tcp --port N` says where it listens on stderr and answers initialize
    there."""
    import socket

    with socket.socket() as probe:  # a free port, released for the server
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = await asyncio.create_subprocess_exec(
        CANON_LS,
        "--tcp",
        "--port",
        str(port),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=SERVER_ENV,
    )
    assert proc.stderr is not None
    try:
        while b"Serving on" not in (line := await asyncio.wait_for(proc.stderr.readline(), 60)):
            assert line, "the server ended before it listened"
        assert str(port).encode() in line and line.startswith(b"canon-ls: ")
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}},
            }
        ).encode()
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
        while True:
            length = 0
            while (line := await asyncio.wait_for(reader.readline(), 60)).strip():
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(await reader.readexactly(length))
            if message.get("id") == 1:
                break
        assert message["result"]["serverInfo"]["name"] == "canon-ls"
        writer.close()
    finally:
        proc.kill()
        await proc.wait()
