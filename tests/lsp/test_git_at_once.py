"""Issue 40 item 3 (SPEC §10: the server's background work stays bounded): at most two git
processes run at once across the language server and every child it starts. Each git may
hold the index (~180 MB at 500k files); the limit used to be per process, so the whole-store
check child and the children of `canon.history` ran two each at the same time."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from counting_git import counting_git
from lsp_harness import SERVER_COMMAND, SERVER_ENV, Session, build_workspace, folder_params
from pytest_lsp import ClientServerConfig

AT_ONCE = 2


async def test_the_server_and_its_children_run_at_most_two_git_at_once(tmp_path: Path):
    """The check child's git pass, and two `canon.history` children started meanwhile."""
    root = build_workspace(tmp_path / "proj")
    bindir, log = counting_git(tmp_path)
    env = {
        **SERVER_ENV,
        "PATH": f"{bindir}{os.pathsep}{SERVER_ENV['PATH']}",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),  # cold: the whole history pass runs
    }
    client = await ClientServerConfig(server_command=SERVER_COMMAND, server_env=env).start(None)
    try:
        await client.initialize_session(folder_params(root))
        s = Session(client, root, "visual-studio-code", "utf-16")
        await s.until(log.exists, 30, "the check child's first git")
        answers = await asyncio.gather(
            s.command("canon.history", {"path": "src/core/config.ts"}),
            s.command("canon.history", {"path": "src/core/util.py"}),
        )
        await s.checked(60)
    finally:
        await asyncio.wait_for(client.shutdown_session(), 60)
    assert "src/core/config" in str(answers[0]) and "src/core/util" in str(answers[1])
    counts = [line.split() for line in log.read_text().splitlines()]
    assert len({parent for _, parent in counts}) >= 3, counts  # the check child, two CLIs
    assert max(int(n) for n, _ in counts) <= AT_ONCE, counts
