"""Nothing outlives the session: a client that goes away without `shutdown` (an editor
killed, a crashed plugin) closes the server's stdin; the server then ends, and so does every
process it started (the search worker, the file watcher, the whole-store check and its git).
A helper notices the end of its stdin only between two pieces of work: a search worker
building its index at 10k articles, or a check child waiting on git, went on for tens of
seconds after the editor was gone. Here the search worker is held busy (a `sitecustomize`
that never returns stands for a long index build), so only the server ending it ends it.
Real processes, read through /proc; no sleeps (conditions polled with deadlines)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from lsp_harness import build_workspace, busy_search_worker, poll
from processes import alive, cmdline, descendants, stat
from raw_rpc import RawServer

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


async def test_nothing_outlives_a_client_that_leaves_without_shutdown(tmp_path: Path) -> None:
    root = build_workspace(tmp_path / "proj")
    server = await RawServer.start(busy_search_worker(tmp_path))
    pid = server.proc.pid
    family: dict[int, str] = {}
    try:
        await server.initialize(root)
        query = {"jsonrpc": "2.0", "id": 99, "method": "workspace/symbol", "params": {"query": "x"}}
        server.write(query)  # starts the search worker (its answer never comes: it is busy)
        await server.flush()

        def worker_started() -> dict[int, str]:
            now = descendants(pid)
            return now if any("lsp.helpers.searcher" in cmdline(p) for p in now) else {}

        family = await poll(worker_started, 60, lambda: f"no search worker: {descendants(pid)}")
        family[pid] = stat(pid)[19]  # type: ignore[index]
        assert server.proc.stdin is not None
        server.proc.stdin.close()  # the client is gone: no shutdown, no exit

        def left() -> list[str]:
            return [f"{p} {cmdline(p)}" for p, started in family.items() if alive(p, started)]

        await poll(lambda: not left(), 20, lambda: f"still running: {left()}")
    finally:
        for p, started in family.items():  # a failed run leaves nothing behind either
            if p != pid and alive(p, started):
                os.kill(p, signal.SIGKILL)
        for task in server.tasks:
            task.cancel()
        if server.proc.returncode is None:
            server.proc.kill()
        await server.proc.wait()
