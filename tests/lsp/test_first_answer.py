"""`initialize` is answered before the server's heavy imports, with the very answer the server
itself would give (SPEC §10: the editor is served from the first moment)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import SERVER_COMMAND, SERVER_ENV, capabilities
from pygls.protocol import default_converter as converter
from raw_rpc import RawServer

from tests.stale_repo import write

CLIENTS: dict[str, dict[str, Any]] = {
    "nothing": {},
    "vscode": {
        "general": {"positionEncodings": ["utf-16"]},
        "workspace": {"workspaceFolders": True, "configuration": True},
        "textDocument": {"inlayHint": {}, "publishDiagnostics": {}},
    },
    "neovim": {"general": {"positionEncodings": ["utf-8", "utf-16", "utf-32"]}},
    "pull": {
        "textDocument": {"diagnostic": {"dynamicRegistration": False}},
        "workspace": {"diagnostics": {"refreshSupport": True}},
    },
    "pull-no-refresh": {"textDocument": {"diagnostic": {}}},
    "unknown-encoding": {"general": {"positionEncodings": ["utf-7", "utf-32"]}},
    "no-known-encoding": {"general": {"positionEncodings": ["ebcdic"]}},
    "odd-shape": {"general": {"positionEncodings": "utf-8"}},
    "will-save": {"textDocument": {"synchronization": {"willSave": True, "didSave": True}}},
    "file-operations": {"workspace": {"fileOperations": {"willRename": True, "didCreate": True}}},
    # a capability stated false is stated (issue 43 row 8): not the same as left out
    "will-save-false": {"textDocument": {"synchronization": {"willSave": False}}},
    "will-rename-false": {"workspace": {"fileOperations": {"willRename": False}}},
    # the captured editors the suite runs as (VS Code 1.65, its modern form, Neovim 0.11)
    **{
        profile: converter().unstructure(capabilities(profile))
        for profile in ("visual-studio-code", "vscode-modern", "neovim@0.11")
    },
}


def _store(root: Path) -> Path:
    write(root, ".canon/articles/src.md", "---\ncapsule: Source code.\n---\n# src\n")
    write(root, "src/main.py", "print(1)\n")
    return root


async def _initialize(root: Path, client: dict[str, Any], early: bool) -> tuple[dict, str]:
    server = await RawServer.start({"CANON_LS_EARLY_INITIALIZE": "1" if early else "0"})
    answer = await server.initialize(root, client)
    hover = await server.request(
        "textDocument/hover",
        {
            "textDocument": {"uri": (root / "src/main.py").as_uri()},
            "position": {"line": 0, "character": 0},
        },
    )
    await server.stop()
    if "result" in answer:  # the session goes on from the early answer as from the server's
        assert "Source code." in json.dumps(hover.get("result")), hover
    return answer, server.stderr.decode(errors="replace")


@pytest.mark.parametrize("client", sorted(CLIENTS))
async def test_the_early_answer_is_the_servers_answer(tmp_path: Path, client: str) -> None:
    root = _store(tmp_path)
    early, early_log = await _initialize(root, CLIENTS[client], early=True)
    late, _ = await _initialize(root, CLIENTS[client], early=False)
    assert early == late
    assert "differs" not in early_log


def test_the_answer_comes_before_the_protocol_library_is_imported(tmp_path: Path) -> None:
    """stdout and stderr share one pipe, so the order of writes is the order seen: the answer's
    frame must precede `-X importtime`'s line for lsprotocol (pygls' own answer follows it)."""
    root = _store(tmp_path)
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "initialize",
            "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}},
        }
    ).encode()
    command = [SERVER_COMMAND[0], "-X", "importtime", *SERVER_COMMAND[1:]]
    done = subprocess.run(
        command,
        input=b"Content-Length: %d\r\n\r\n" % len(body) + body,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=SERVER_ENV,
        timeout=120,
    )
    both = done.stdout
    answer = both.find(b'"id": 7, "result"')
    imported = re.search(rb"\| +lsprotocol\.types\r?\n", both)
    assert answer != -1, both[-2000:]
    assert imported is not None, "importtime wrote nothing about lsprotocol"
    assert answer < imported.start()
    assert both.count(b'"id": 7') == 1  # the server's own answer was not sent again


def test_the_early_answer_needs_no_heavy_import(tmp_path: Path) -> None:
    code = (
        "import sys; from canon_ls.lsp.startup import first_answer; "
        "first_answer.answer(sys.stdin.buffer, sys.stdout.buffer); "
        "print(sorted(m for m in ('pygls', 'lsprotocol', 'canon_ls.core') if m in sys.modules),"
        " file=sys.stderr)"
    )
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    ).encode()
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=b"Content-Length: %d\r\n\r\n" % len(body) + body,
        capture_output=True,
        timeout=60,
    )
    assert done.stderr.strip() == b"[]"
    assert b'"positionEncoding": "utf-16"' in done.stdout


@pytest.mark.parametrize(
    "first",
    [
        b'Content-Length: 5\r\n\r\n{"a":',  # cut short, then the pipe closes
        b"Content-Length: x\r\n\r\n{}",
        b'Content-Length: 40\r\n\r\n{"jsonrpc": "2.0", "method": "exit"}    ',
        b'Content-Length: 60\r\n\r\n{"jsonrpc":"2.0","id":true,"method":"initialize","params":{}}',
    ],
)
def test_an_unusual_first_message_is_left_to_the_server(first: bytes) -> None:
    def run(early: str) -> subprocess.CompletedProcess[bytes]:
        env = {**SERVER_ENV, "CANON_LS_EARLY_INITIALIZE": early}
        return subprocess.run(
            SERVER_COMMAND, input=first, capture_output=True, env=env, timeout=120
        )

    with_early, without = run("1"), run("0")
    assert b'"result"' not in with_early.stdout
    assert (with_early.stdout, with_early.returncode) == (without.stdout, without.returncode)
