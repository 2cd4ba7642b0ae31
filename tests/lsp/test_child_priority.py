"""The server's helper processes step back for it (issue 15: hover p99 while the start-up
check runs): the whole-store check child and the search worker lower their own CPU priority
before any work, and the git they start inherits it. Real child processes, read through
/proc; no sleeps (the niceness is polled until it shows, with a deadline)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsp_harness import build_workspace

from canon_ls.lsp.child import NICENESS, python_module

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


def _niceness(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[16])  # field 19: nice


def _until_nice(proc: subprocess.Popen[bytes], deadline_s: float = 20.0) -> int:
    end = time.monotonic() + deadline_s
    seen = _niceness(proc.pid)
    while seen != NICENESS and time.monotonic() < end:
        try:
            proc.wait(timeout=0.01)  # gone: the niceness can no longer show
            return seen
        except subprocess.TimeoutExpired:
            seen = _niceness(proc.pid)
    return seen


def _spawn(module: str, cwd: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        python_module(module, *args),
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


@pytest.mark.parametrize(
    ("module", "takes_root"),
    # the check child before it reads its request; the watcher, whose start walks every
    # watched tree, before it is told what to watch; the search worker: none of them ahead
    # of the server's answers
    [
        ("canon_ls.lsp.background", False),
        ("canon_ls.lsp.fswatch", False),
        ("canon_ls.lsp.searcher", True),
    ],
)
def test_a_child_steps_back(tmp_path: Path, module: str, takes_root: bool):
    root = build_workspace(tmp_path / "proj")
    assert os.getpriority(os.PRIO_PROCESS, 0) < NICENESS  # the test itself runs above it
    proc = _spawn(module, root, *([str(root)] if takes_root else []))  # waits on stdin
    try:
        assert _until_nice(proc) == NICENESS
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)


def test_the_check_thread_steps_back_relative_to_its_process():
    """Inside the child (niceness 10) the check's own thread goes five below it while git
    runs, never above it: git, the long pole, keeps the lead (core.check._yield_cpu)."""
    import threading

    from canon_ls.core import check

    seen: list[tuple[int, int]] = []

    def probe() -> None:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, NICENESS)
        check._yield_cpu()
        seen.append((NICENESS, os.getpriority(os.PRIO_PROCESS, tid)))

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join(timeout=10)
    assert seen == [(NICENESS, NICENESS + 5)]


def test_the_whole_pass_gives_its_caller_back_its_priority(tmp_path: Path):
    """core.check.run steps its thread back while git runs; a caller that lives on (a test
    session, an editor) gets its priority back afterwards, where the system lets it rise again
    (as root; an unprivileged thread may only step back)."""
    from canon_ls.core import check

    root = build_workspace(tmp_path / "proj")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    before = os.getpriority(os.PRIO_PROCESS, 0)
    check.run(root, {}, staleness=True)
    if os.geteuid() == 0:
        assert os.getpriority(os.PRIO_PROCESS, 0) == before


async def test_a_helper_is_stepped_back_before_its_interpreter_starts(tmp_path: Path) -> None:
    """The helper's own step back comes after its interpreter and imports (0.3-0.7 s of CPU
    at the server's priority during the first hovers); `spawn` steps it back at once: the
    helper's very first line of code already runs lowered."""
    import asyncio

    from canon_ls.lsp.child import spawn

    (tmp_path / "niceness_probe.py").write_text(
        "import os, sys\nsys.stdin.readline()\nprint(os.getpriority(os.PRIO_PROCESS, 0))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    before = os.getpriority(os.PRIO_PROCESS, 0)
    pipe = asyncio.subprocess.PIPE
    proc = await spawn("niceness_probe", stdin=pipe, stdout=pipe, env=env)
    out, _ = await asyncio.wait_for(proc.communicate(b"go\n"), 60)  # asked once spawned
    assert int(out) == max(before, NICENESS)
