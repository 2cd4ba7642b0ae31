"""Background work on the loop gives way to a request's hops (canon_ls/lsp/startup/turns.py, SPEC
§10:
no start-up stalls). A request's answer takes several turns of the loop; a background step that
ran before each of them added up to 4-5 ms to a hover while the store loaded."""

from __future__ import annotations

import asyncio

import pytest

from canon_ls.lsp.startup.turns import MAX_TURNS, yield_to_requests

HOPS = 12  # turns a request's answer takes, with room to spare


async def _steps_during_a_request() -> int:
    """How many background steps run while a request makes its hops, one per turn."""
    loop = asyncio.get_running_loop()
    steps = 0
    done = loop.create_future()

    async def background() -> None:
        nonlocal steps
        while not done.done():
            steps += 1
            await yield_to_requests()

    def hop(left: int) -> None:
        if left:
            loop.call_soon(hop, left - 1)
        else:
            done.set_result(steps)

    task = asyncio.ensure_future(background())
    await asyncio.sleep(0)  # the background is under way when the request comes
    before = steps
    loop.call_soon(hop, HOPS)
    during = await done - before
    await task
    return during


def test_a_request_s_hops_wait_for_one_background_step_at_most() -> None:
    assert asyncio.run(_steps_during_a_request()) <= 1


def test_background_tasks_do_not_wait_for_each_other(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither counts the other's queued wakeup as a request: each would wait out MAX_TURNS
    turns per step."""
    turns = 0
    sleep = asyncio.sleep

    async def counted(delay: float) -> None:
        nonlocal turns
        turns += 1
        await sleep(delay)

    async def work() -> None:
        for _ in range(5):
            await yield_to_requests()

    async def both() -> None:
        await asyncio.wait_for(asyncio.gather(work(), work()), timeout=10)

    monkeypatch.setattr(asyncio, "sleep", counted)
    asyncio.run(both())
    assert 10 <= turns < 10 * 3 < MAX_TURNS
