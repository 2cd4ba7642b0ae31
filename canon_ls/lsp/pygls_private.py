"""The one place that touches pygls' private attributes, because pygls 2.1 offers no public way.

- The stdio reader (`stdio.serve`) replaces pygls' thread-pool reader by calling its public
  `pygls.io_.run_async` with our own reader; `LanguageServer.shutdown()` (which `exit` calls)
  stops that loop only through `server._stop_event`, so the event is set there.
- `shutdown` in pygls 2.1 cancels running requests while iterating its table of futures,
  which a cancelled command's future leaves at once: the iteration fails. The table
  (`protocol._request_futures`) is read here so `lifecycle.on_shutdown` cancels them first.

`tests/lsp/test_pygls_private.py` fails loudly when pygls is upgraded (its version or any of
these attributes changed): re-read pygls' server.py and protocol/ then, and drop what it now
offers publicly.
"""

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
