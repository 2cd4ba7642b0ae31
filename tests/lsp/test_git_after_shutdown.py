"""Issue 40, SPEC §10 (the server's helpers): a git the start-up check runs ends with the
session. The check child was killed at shutdown, but the git it had started ran on, orphaned:
at 50k articles a history pass of 200 MB went on for up to 12 s after the editor had closed or
restarted the server, beside the next server's own start. Here a `git log` that never returns
stands for that pass. Real processes, read through /proc; no sleeps (polled with deadlines)."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest
from lsp_harness import SERVER_ENV, build_workspace, poll
from processes import alive, cmdline, descendants
from raw_rpc import RawServer

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


def slow_git_log(base: Path) -> dict[str, str]:
    """PATH with a `git` whose `log` never returns (every other command is the real git)."""
    real = shutil.which("git", path=SERVER_ENV.get("PATH"))
    assert real is not None
    shim = base / "shim"
    shim.mkdir()
    git = shim / "git"
    git.write_text(
        f'#!/bin/sh\ncase " $* " in *" log "*) exec sleep 600;; esac\nexec {real} "$@"\n'
    )
    git.chmod(0o755)
    return {"PATH": f"{shim}{os.pathsep}{SERVER_ENV.get('PATH', '')}"}


async def test_the_checks_git_ends_with_the_session(tmp_path: Path) -> None:
    root = build_workspace(tmp_path / "proj")
    server = await RawServer.start(slow_git_log(tmp_path))
    family: dict[int, str] = {}
    try:
        await server.initialize(root)

        def git_log_running() -> dict[int, str]:
            now = descendants(server.proc.pid)
            return now if any(cmdline(p).startswith("sleep 600") for p in now) else {}

        family = await poll(
            git_log_running, 60, lambda: f"no git log: {descendants(server.proc.pid)}"
        )
        assert await server.stop() == 0

        def left() -> list[str]:
            return [f"{p} {cmdline(p)}" for p, started in family.items() if alive(p, started)]

        await poll(lambda: not left(), 20, lambda: f"still running after exit: {left()}")
    finally:
        for p, started in family.items():  # a failed run leaves nothing behind either
            if alive(p, started):
                os.kill(p, signal.SIGKILL)
        if server.proc.returncode is None:
            server.proc.kill()
            await server.proc.wait()
