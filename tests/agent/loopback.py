"""The HTTP plumbing the fake model APIs share: a server on 127.0.0.1 (an ephemeral port),
served from a daemon thread for the duration of a `with` block. Nothing listens elsewhere."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class LoopbackServer:
    """Mixin: call `_serve(handler)` once (e.g. in __post_init__), then use as a context."""

    _server: ThreadingHTTPServer
    _thread: threading.Thread

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
