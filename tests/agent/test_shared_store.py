"""SPEC §6 write and §12 with every adapter at once: the CLI, the MCP server (the real `mcp`
client over `canon mcp`) and the language server's `canon.write` command (the real `canon-ls`
driven by pytest-lsp's client) write different fields of the same articles at the same time.

A write is a read-modify-write of the fields it names, serialised per store across processes,
so a capsule-only, a body-only and a scope-only write racing on one article all land. Each
field has exactly one writer in a round, so its final value is that writer's last value: the
test counts every field of every article after every round.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from lsprotocol import types
from mcp import Client
from pytest_lsp import LanguageClient, client_capabilities

from canon_ls.core.storage.article import parse
from tests.agent.test_cli import canon_command
from tests.agent.test_mcp import server_params, text_of

TODAY = "2026-11-29"
ROUNDS = 20
ARTICLES = 4  # per round; each gets a capsule writer, a body writer and a scope writer
WRITES = 3  # successive writes of its field by each writer
FIELDS = ("capsule", "body", "scope")

Writer = Callable[[dict[str, str]], Awaitable[str]]


def _value(field: str, r: int, k: int, i: int) -> str:
    if field == "scope":
        return "rule" if i % 2 == 0 else "asset"
    if field == "capsule":
        return f"Capsule r{r} k{k} i{i}."
    return f"# race {r}/{k}\n\nBody r{r} k{k} i{i}.\n" + f"line {i}\n" * (50 + 7 * k)


def _cli_writer(project: Path) -> Writer:
    env = dict(os.environ, CANON_TODAY=TODAY)

    async def write(action: dict[str, str]) -> str:
        args = [*canon_command(), "--project", str(project), "write", action["path"]]
        for key in ("capsule", "body", "scope"):
            if key in action:
                args += [f"--{key}", action[key]]
        proc = await asyncio.create_subprocess_exec(
            *args,
            cwd=str(project),
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        return out.decode()

    return write


async def _lsp_client(project: Path) -> LanguageClient:
    client = LanguageClient()
    await client.start_io(
        sys.executable,
        "-m",
        "canon_ls.lsp",
        env=dict(os.environ, CANON_TODAY=TODAY),
        cwd=str(project),
    )
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("neovim@0.11"),
            root_uri=project.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="proj")],
        )
    )
    return client


def _lsp_writer(client: LanguageClient) -> Writer:
    async def write(action: dict[str, str]) -> str:
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="canon.write", arguments=[action])
        )
        return str(result)

    return write


def _mcp_writer(client: Client) -> Writer:
    async def write(action: dict[str, str]) -> str:
        result = await client.call_tool("canon", {"action": "write", **action})
        assert not result.is_error, text_of(result)
        return text_of(result)

    return write


async def _writer_task(write: Writer, path: str, field: str, r: int, k: int) -> None:
    for i in range(WRITES):
        text = await write({"path": path, field: _value(field, r, k, i)})
        assert text.startswith(("Wrote", f"{path[:-3]} is already up to date")), text


@pytest.mark.timeout(600)
async def test_spec_12_every_field_of_racing_writes_lands(project: Path) -> None:
    """SPEC §6 write, §12: CLI + 2 MCP servers + 2 language servers racing on the same
    articles for 20 rounds; every capsule, body and scope lands (none lost to another
    process's write of a different field)."""
    (project / "src/race").mkdir(parents=True)
    async with Client(server_params(project)) as mcp_a, Client(server_params(project)) as mcp_b:
        lsp_a = await _lsp_client(project)
        lsp_b = await _lsp_client(project)
        try:
            writers = [
                _cli_writer(project),
                _mcp_writer(mcp_a),
                _lsp_writer(lsp_a),
                _cli_writer(project),
                _mcp_writer(mcp_b),
                _lsp_writer(lsp_b),
            ]
            lost: list[str] = []
            counted = 0
            for r in range(ROUNDS):
                paths = [f"src/race/r{r}k{k}.ts" for k in range(ARTICLES)]
                for path in paths:  # a known starting state, written by one process
                    await writers[1](
                        {"path": path, "capsule": "Initial.", "body": "# start\n\nInitial.\n"}
                    )
                tasks = [
                    _writer_task(writers[(r + k + f) % len(writers)], path, field, r, k)
                    for k, path in enumerate(paths)
                    for f, field in enumerate(FIELDS)
                ]
                await asyncio.gather(*tasks)
                for k, path in enumerate(paths):
                    file = project / ".canon/articles" / (path[:-3] + ".md")
                    got = parse(file.read_bytes(), path[:-3])
                    assert not got.problems, got.problems
                    want = {f: _value(f, r, k, WRITES - 1) for f in FIELDS}
                    have = {"capsule": got.capsule, "body": got.body, "scope": got.scope}
                    for field in FIELDS:
                        counted += 1
                        if have[field] != want[field]:
                            lost.append(f"round {r} {path} {field}: {have[field][:30]!r}")
            print(f"{counted} fields counted over {ROUNDS} rounds, {len(lost)} lost")
            assert not lost, lost
            assert counted == ROUNDS * ARTICLES * len(FIELDS)
        finally:
            for client in (lsp_a, lsp_b):
                await client.shutdown_session()
