"""Background work goes through `CanonLanguageServer.run_task` (issue 10): the task is kept
until it ends, a failure is logged rather than lost with the task, and shutdown cancels
what still runs."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from canon_ls.lsp.server import create_server


async def test_a_failing_task_is_logged(caplog: pytest.LogCaptureFixture):
    ls = create_server()

    async def broken() -> None:
        raise RuntimeError("boom")

    with caplog.at_level(logging.ERROR, logger="canon_ls.lsp.session.state"):
        task = ls.run_task(broken(), "canon-test-broken")
        await asyncio.wait([task])
        await asyncio.sleep(0)  # done callbacks run on the next tick
    [record] = [r for r in caplog.records if "canon-test-broken" in r.getMessage()]
    assert record.exc_info is not None and "boom" in str(record.exc_info[1])


async def test_tasks_are_kept_and_cancelled_at_shutdown():
    ls = create_server()
    started = asyncio.Event()

    async def forever() -> None:
        started.set()
        await asyncio.Event().wait()

    ls.run_task(forever(), "canon-test-forever")  # no reference kept here
    gc.collect()  # asyncio holds tasks weakly: only the server's reference keeps it alive
    await asyncio.wait_for(started.wait(), 5)
    [task] = [t for t in asyncio.all_tasks() if t.get_name() == "canon-test-forever"]
    ls.cancel_tasks()
    with pytest.raises(asyncio.CancelledError):
        await task
