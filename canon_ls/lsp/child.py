"""How the server starts its helper processes (whole-store check, search worker, watcher),
and how they give way to it.

They run with the project as working directory, so `python -m` would put the project first on
`sys.path` and a repository carrying its own `canon_ls/` package would run as code (SPEC §12).
`-P` keeps the working directory off `sys.path`; PYTHONPATH still works (the VS Code bundle).
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

# How far a helper process steps back for the server (Linux niceness; git, started by the
# helper, inherits it). On two cores the start-up check and its git pass otherwise take the
# CPU a hover needs; an idle server loses nothing, since the helper then has the machine.
NICENESS = 10


def python_module(module: str, *args: str) -> list[str]:
    """argv running `module` of this installation in a child Python."""
    return [sys.executable, "-P", "-m", module, *args]


def give_way() -> None:
    """Lower this helper process's CPU priority below the server's (best effort: not every
    OS has niceness, and a process already lower stays where it is)."""
    with contextlib.suppress(AttributeError, OSError):
        if os.getpriority(os.PRIO_PROCESS, 0) < NICENESS:
            os.setpriority(os.PRIO_PROCESS, 0, NICENESS)


def step_back(pid: int) -> None:
    """Lower a helper's CPU priority from the server the moment it is spawned: the helper's
    own `give_way` comes only after its interpreter has started and imported (0.3-0.7 s of
    CPU at the server's priority, during the very seconds of a session's first hovers)."""
    with contextlib.suppress(AttributeError, OSError):
        if os.getpriority(os.PRIO_PROCESS, pid) < NICENESS:
            os.setpriority(os.PRIO_PROCESS, pid, NICENESS)


async def spawn(module: str, *args: str, **options: Any) -> asyncio.subprocess.Process:
    """Start the helper `module` (a child Python, as `python_module` says), stepped back."""
    import asyncio

    proc = await asyncio.create_subprocess_exec(*python_module(module, *args), **options)
    step_back(proc.pid)
    return proc
