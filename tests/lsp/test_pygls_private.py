"""The pygls internals canon-ls relies on (canon_ls/lsp/wire/pygls_private.py) are still there.

pygls 2.1 has no public way to stop a `run_async` loop started with our own stdin reader, nor
to see the running requests at `shutdown`. These checks fail loudly on a pygls upgrade, before
a user meets a server that never exits or a `shutdown` that fails: then re-read pygls and
drop whatever it now offers publicly.
"""

from __future__ import annotations

import inspect
import threading
from importlib.metadata import version

from pygls.io_ import run_async

from canon_ls.lsp.server import create_server
from canon_ls.lsp.wire import pygls_private


def test_pygls_is_the_version_the_private_access_was_read_against():
    assert version("pygls") == pygls_private.PYGLS_VERSION, (
        "pygls changed: re-read canon_ls/lsp/wire/pygls_private.py against it, then update PYGLS_VERSION"  # noqa: E501
    )


def test_shutdown_stops_the_loop_through_the_stop_event():
    server = create_server()
    stop = threading.Event()
    pygls_private.set_stop_event(server, stop)
    server.shutdown()  # what pygls' `exit` handler calls
    assert stop.is_set()


def test_the_running_requests_table_is_a_dict_of_futures():
    server = create_server()
    assert isinstance(server.protocol._request_futures, dict)  # what request_futures reads
    assert pygls_private.request_futures(server.protocol) is server.protocol._request_futures


def test_run_async_takes_our_reader():
    names = list(inspect.signature(run_async).parameters)
    assert names[:3] == ["stop_event", "reader", "protocol"], names
