"""How the server starts its helper processes."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

# How far a helper process steps back for the server where SCHED_IDLE is not to be had (Linux
# niceness; git, started by the helper, inherits it).
NICENESS = 10

_prefix: list[str] | None = None  # `chrt --idle 0` where it works, [] where not; tried once


def python_module(module: str, *args: str) -> list[str]:
    """argv running `module` of this installation in a child Python."""
    return [sys.executable, "-P", "-m", module, *args]


def step_back(pid: int) -> None:
    """Lower a helper (0: this process's calling thread) from the server the moment it is
    spawned: SCHED_IDLE where Linux allows it, and the niceness above."""
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
    with contextlib.suppress(AttributeError, OSError):
        if os.getpriority(os.PRIO_PROCESS, pid) < NICENESS:
            os.setpriority(os.PRIO_PROCESS, pid, NICENESS)


async def idle_prefix() -> list[str]:
    """`chrt --idle 0` (util-linux) before a helper's argv, where it works."""
    global _prefix
    if _prefix is None:
        import asyncio

        found: list[str] = []
        chrt = shutil.which("chrt") if hasattr(os, "SCHED_IDLE") else None
        if chrt is not None:
            prefix = [chrt, "--idle", "0"]
            with contextlib.suppress(OSError):
                probe = await asyncio.create_subprocess_exec(
                    *prefix,
                    chrt,
                    "--version",
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.DEVNULL,
                )
                if await probe.wait() == 0:
                    found = prefix
        _prefix = found
    return _prefix


async def spawn(module: str, *args: str, **options: Any) -> asyncio.subprocess.Process:
    """Start the helper `module` (a child Python), idle where it works, stepped back at once."""
    import asyncio

    argv = [*await idle_prefix(), *python_module(module, *args)]
    proc = await asyncio.create_subprocess_exec(*argv, **options)
    step_back(proc.pid)
    return proc
