"""Background work on the event loop gives way to requests (SPEC §10: no start-up stalls)."""

from __future__ import annotations

import asyncio
from collections.abc import Sized

MAX_TURNS = 64  # a request's answer takes a handful; past this the step goes on anyway

_giving_way = 0  # tasks inside `yield_to_requests`: each holds one queued wakeup


async def yield_to_requests() -> None:
    """One turn of the loop, then more while other callbacks wait to run."""
    global _giving_way
    # The loop's queue of callbacks ready to run (the standard loops name it `_ready`).
    queued = getattr(asyncio.get_running_loop(), "_ready", None)
    queued = queued if isinstance(queued, Sized) else None
    _giving_way += 1
    try:
        await asyncio.sleep(0)
        turns = 1
        while queued is not None and len(queued) > _giving_way - 1 and turns < MAX_TURNS:
            await asyncio.sleep(0)
            turns += 1
    finally:
        _giving_way -= 1
