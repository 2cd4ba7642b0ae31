"""How the server starts its helper processes (whole-store check, search worker, watcher),
and how they give way to it.

They run with the project as working directory, so `python -m` would put the project first on
`sys.path` and a repository carrying its own `canon_ls/` package would run as code (SPEC §12).
`-P` keeps the working directory off `sys.path`; PYTHONPATH still works (the VS Code bundle).

On Linux a helper runs under SCHED_IDLE: it gets the CPU only when nothing else wants it. On
two cores, niceness 10 alone still let a helper's interpreter start and imports take CPU from
the first hovers (hover p99 in the start-up window 5.2 ms at 1k articles, 5.4 ms at 10k; a
stall up to 26-36 ms); idle from its first instruction, 3.6 and 4.1 ms, ~21 ms at worst. The
cost: on a machine other programs keep busy, the start-up check and the search index finish
later; an idle machine gives them everything. Niceness 10 stays as well (the fallback where
SCHED_IDLE is missing or refused; git, started by a helper, inherits both).
"""

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
    """Put this helper below the server: idle scheduling where the OS has it, niceness 10 in
    any case (best effort; a process already lower stays where it is). A helper `spawn`
    started is there already; this covers one started another way (by hand, a test)."""
    _idle(0)
    _nice(0)


def step_back(pid: int) -> None:
    """Lower a helper from the server the moment it is spawned. Without `chrt` this is what
    makes it idle: the child has had 0.2 ms of CPU by then (4 ms at worst, measured), not the
    0.3-0.7 s of its interpreter start and imports, which its own `give_way` comes after."""
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
    """`chrt --idle 0` (util-linux) before a helper's argv, where it works: the helper is then
    idle from its first instruction, before its interpreter starts. Not `preexec_fn`: that
    forks the whole server instead of `vfork`, on the event loop (8 ms at 50 MB, 24 ms at
    400 MB, measured), and runs Python in the child of a threaded process. Tried once with
    chrt itself: a chrt without `--idle` or a system refusing it would stop every helper."""
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
    """Start the helper `module` (a child Python, as `python_module` says), already idle where
    `idle_prefix` works, and stepped back at once in any case."""
    import asyncio

    argv = [*await idle_prefix(), *python_module(module, *args)]
    proc = await asyncio.create_subprocess_exec(*argv, **options)
    step_back(proc.pid)
    return proc
