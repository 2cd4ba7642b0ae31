"""The server's helper processes step back for it (issue 15: hover p99 while the start-up
check runs): the whole-store check child, the search worker and the watcher run idle (Linux
SCHED_IDLE: only CPU nothing else wants) from their first instruction, and at niceness 10,
and the git they start inherits both. Real child processes, read through /proc; no sleeps
(the niceness and the policy are polled until they show, with a deadline)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsp_harness import build_workspace
from processes import cmdline, descendants

from canon_ls.lsp.helpers import child
from canon_ls.lsp.helpers.child import NICENESS, python_module

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
linux_idle = pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="Linux SCHED_IDLE")


def _niceness(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[16])  # field 19: nice


def _policy(pid: int) -> int:
    return os.sched_getscheduler(pid) if hasattr(os, "SCHED_IDLE") else -1


def _lowered(pid: int) -> tuple[int, int]:
    """(niceness, scheduling policy) of `pid`; the policy -1 where the OS has none."""
    return _niceness(pid), _policy(pid)


LOWERED = (NICENESS, getattr(os, "SCHED_IDLE", -1))


def _until_lowered(proc: subprocess.Popen[bytes], deadline_s: float = 20.0) -> tuple[int, int]:
    end = time.monotonic() + deadline_s
    seen = _lowered(proc.pid)
    while seen != LOWERED and time.monotonic() < end:
        try:
            proc.wait(timeout=0.01)  # gone: the change can no longer show
            return seen
        except subprocess.TimeoutExpired:
            seen = _lowered(proc.pid)
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
        ("canon_ls.lsp.helpers.background", False),
        ("canon_ls.lsp.helpers.fswatch", False),
        ("canon_ls.lsp.helpers.searcher_worker", True),
    ],
)
def test_a_child_steps_back(tmp_path: Path, module: str, takes_root: bool):
    root = build_workspace(tmp_path / "proj")
    assert os.getpriority(os.PRIO_PROCESS, 0) < NICENESS  # the test itself runs above it
    assert _policy(0) != getattr(os, "SCHED_IDLE", 0)  # and is not idle
    proc = _spawn(module, root, *([str(root)] if takes_root else []))  # waits on stdin
    try:
        assert _until_lowered(proc) == LOWERED
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)


def test_the_check_thread_steps_back_relative_to_its_process():
    """Inside the child (niceness 10) the check's own thread goes five below it while git
    runs, never above it: git, the long pole, keeps the lead (core.checking.git_reads.yield_cpu)."""
    import threading

    from canon_ls.core.checking import git_reads

    seen: list[tuple[int, int]] = []

    def probe() -> None:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, NICENESS)
        git_reads.yield_cpu()
        seen.append((NICENESS, os.getpriority(os.PRIO_PROCESS, tid)))

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join(timeout=10)
    assert seen == [(NICENESS, NICENESS + 5)]


def test_the_whole_pass_gives_its_caller_back_its_priority(tmp_path: Path):
    """core.check.run steps its thread back while git runs; a caller that lives on (a test
    session, an editor) gets its priority back afterwards, where the system lets it rise again
    (as root; an unprivileged thread may only step back)."""
    from canon_ls.core.checking import check

    root = build_workspace(tmp_path / "proj")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    before = os.getpriority(os.PRIO_PROCESS, 0)
    check.run(root, {}, staleness=True)
    if os.geteuid() == 0:
        assert os.getpriority(os.PRIO_PROCESS, 0) == before


def _probe(tmp_path: Path) -> dict[str, str]:
    """A helper module printing its niceness and scheduling policy as its first line of code
    saw them, once asked on stdin (after `spawn` has returned)."""
    (tmp_path / "priority_probe.py").write_text(
        "import os, sys\n"
        "seen = os.getpriority(os.PRIO_PROCESS, 0), getattr(os, 'sched_getscheduler', len)(0)\n"
        "sys.stdin.readline()\n"
        "print(*seen)\n"
    )
    return {**os.environ, "PYTHONPATH": str(tmp_path)}


async def _spawn_probe(env: dict[str, str]) -> tuple[int, int]:
    import asyncio

    pipe = asyncio.subprocess.PIPE
    proc = await child.spawn("priority_probe", stdin=pipe, stdout=pipe, env=env)
    out, _ = await asyncio.wait_for(proc.communicate(b"go\n"), 60)  # asked once spawned
    nice, policy = out.split()
    return int(nice), int(policy)


async def test_a_helper_is_stepped_back_before_its_interpreter_starts(tmp_path: Path) -> None:
    """The helper's own step back comes after its interpreter and imports (0.3-0.7 s of CPU
    at the server's priority during the first hovers); `spawn` steps it back at once: the
    helper's very first line of code already runs lowered, and idle where Linux has it."""
    before = os.getpriority(os.PRIO_PROCESS, 0)
    nice, policy = await _spawn_probe(_probe(tmp_path))
    assert nice == max(before, NICENESS)
    if hasattr(os, "SCHED_IDLE"):
        assert policy == os.SCHED_IDLE


@linux_idle
@pytest.mark.skipif(not shutil.which("chrt"), reason="needs util-linux chrt")
async def test_a_helper_is_idle_before_the_server_gets_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Idle from its first instruction, not from the moment the server lowers it after the
    spawn (by then the child has run, 0.2 ms typically, 4 ms at worst): with the server's own
    step left out, the probe's interpreter still started idle."""
    monkeypatch.setattr(child, "step_back", lambda pid: None)
    _nice, policy = await _spawn_probe(_probe(tmp_path))
    assert policy == os.SCHED_IDLE


@linux_idle
async def test_the_servers_helpers_run_idle(tmp_path: Path) -> None:
    """Through the real server: its file watcher and search worker (and the whole-store check
    while it runs) are SCHED_IDLE."""
    from lsp_harness import poll
    from raw_rpc import RawServer

    root = build_workspace(tmp_path / "proj")
    server = await RawServer.start()
    try:
        await server.initialize(root)
        await server.request("workspace/symbol", {"query": "config"})  # the search worker

        def policies() -> dict[str, int]:
            found = {pid: cmdline(pid) for pid in descendants(server.proc.pid)}
            # a helper is `python -P -m MODULE ...` (a `chrt` on its way to it is not yet one;
            # the server's own fork answering the first symbols meanwhile is not a helper)
            helper = [sys.executable, "-P", "-m"]
            return {
                cmd.split()[3]: _policy(pid)
                for pid, cmd in found.items()
                if cmd.split()[:3] == helper
            }

        def all_idle() -> bool:
            seen = policies()
            names = " ".join(seen)
            started = "lsp.helpers.fswatch" in names and "lsp.helpers.searcher" in names
            return started and set(seen.values()) == {os.SCHED_IDLE}

        await poll(all_idle, 60, lambda: f"helpers and their policies: {policies()}")
    finally:
        assert await server.stop() == 0
