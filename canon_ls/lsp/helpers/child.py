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


def give_way() -> None:
    """Put this helper below the server."""
    _idle(0)
    _nice(0)


def step_back(pid: int) -> None:
    """Lower a helper from the server the moment it is spawned."""
    _idle(pid)
    _nice(pid)


def _idle(pid: int) -> None:
    """SCHED_IDLE for `pid` (0: this process's calling thread), where Linux allows it."""
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))


def _nice(pid: int) -> None:
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
