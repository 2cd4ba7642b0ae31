"""Issue 40 item 3 (SPEC §10 workspace symbols): the search worker never lives beside a git of
the server's process tree nor beside a check's loaded store (at 10k articles any of them beside
the worker crossed 150 MB). The worker starts once the heavy work running ends, and makes way
for a git that waits once nobody asks. Run in a child Python: the slots that gitrun.share()
sets never reach other tests."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from lsp_harness import build_workspace

SCRIPT = textwrap.dedent(
    """
    import asyncio, os, subprocess, sys, threading
    from pathlib import Path
    from canon_ls.core.git import gitrun
    from canon_ls.lsp.helpers import searcher

    gitrun.share()
    root = Path(sys.argv[1])
    HOLD = (
        "import sys\\n"
        "from canon_ls.core.git import gitrun\\n"
        "with gitrun.heavy():\\n"
        "    print('held', flush=True)\\n"
        "    sys.stdin.read()\\n"
    )
    PROBE = "from canon_ls.core.git import gitrun; print(gitrun._slot())"

    def free_slot() -> bool:  # what a git start of the tree finds now
        out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
        return int(out.stdout) != -1

    async def main() -> None:
        tasks = set()

        def run(coro, name):
            task = asyncio.ensure_future(coro)
            tasks.add(task)
            return task

        worker = searcher.Searcher(root, {}, run)
        # 1. a check's loaded store (another process holding a slot): the worker waits for it
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert holder.stdout.readline().strip() == "held"
        beside, real = [], searcher.spawn

        async def spawn(*args, **kwargs):
            beside.append(holder.poll() is None)
            return await real(*args, **kwargs)

        searcher.spawn = spawn
        question = asyncio.ensure_future(worker.query("resolution order", 5))
        deadline = asyncio.get_running_loop().time() + 30
        while await asyncio.to_thread(free_slot):  # the server takes the slot left free
            assert asyncio.get_running_loop().time() < deadline, "the free slot was not taken"
        holder.stdin.close()
        holder.wait()
        assert "src/core/config" in (await question or []), "no answer"
        assert beside == [False], "the worker started beside the held slot"
        # 2. a git that waits: the worker exits once nobody asks, then git runs
        pid, seen = worker.proc.pid, {}

        def git() -> None:
            seen["out"] = gitrun.run(root, "rev-parse", "HEAD")
            seen["worker_alive"] = os.path.exists(f"/proc/{pid}")

        thread = threading.Thread(target=git)
        thread.start()
        while thread.is_alive():
            await asyncio.sleep(0.05)
        assert seen["out"], "git did not run"
        assert not seen["worker_alive"], "git ran beside the worker"
        assert worker.proc is None
        assert "src/core/config" in (await worker.query("resolution order", 5) or [])
        worker.stop()
        # 3. a worker stopped while it waits for a held slot lets go of the one it took
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert (await asyncio.to_thread(holder.stdout.readline)).strip() == "held"
        waiting = searcher.Searcher(root, {}, run)
        question = asyncio.ensure_future(waiting.query("resolution order", 5))
        deadline = asyncio.get_running_loop().time() + 30
        while await asyncio.to_thread(free_slot):
            assert asyncio.get_running_loop().time() < deadline, "the free slot was not taken"
        waiting.stop()
        deadline = asyncio.get_running_loop().time() + 30
        while not await asyncio.to_thread(free_slot):
            assert asyncio.get_running_loop().time() < deadline, "the slot stayed taken"
        holder.stdin.close()
        holder.wait()
        question.cancel()

    asyncio.run(asyncio.wait_for(main(), 120))
    print("ok")
    """
)


def test_the_worker_waits_for_heavy_work_and_makes_way_for_a_waiting_git(tmp_path: Path):
    root = build_workspace(tmp_path / "proj")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    script = [sys.executable, "-c", SCRIPT, str(root)]
    done = subprocess.run(script, capture_output=True, text=True, env=env, timeout=180)
    assert done.stdout.strip().endswith("ok"), done.stdout + done.stderr
