"""The one place that touches pygls' private attributes, because pygls 2.1 offers no public way."""

from __future__ import annotations

import threading
from asyncio import Future
from typing import Any

PYGLS_VERSION = "2.1.1"  # the version these attributes were read against (pyproject pins it)


def set_stop_event(server: Any, event: threading.Event) -> None:
    """Let `server.shutdown()` (LSP `exit`) end a `run_async` loop we started ourselves."""
    server._stop_event = event


def request_futures(protocol: Any) -> dict[Any, Future[Any]]:
    """pygls' table of running requests by message id (empty if it is not there)."""
    table = getattr(protocol, "_request_futures", None)
    return table if isinstance(table, dict) else {}
