"""Python logging -> `window/logMessage`, so editors show canon's log in their output panel."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

_LEVELS = (
    (logging.ERROR, types.MessageType.Error),
    (logging.WARNING, types.MessageType.Warning),
    (logging.INFO, types.MessageType.Info),
)


class ClientLogHandler(logging.Handler):
    """Forwards `canon_ls` records to the client once the session is initialized."""

    def __init__(self, server: LanguageServer) -> None:
        super().__init__(level=logging.INFO)
        self.server = server
        self.ready = False
        self.loop: asyncio.AbstractEventLoop | None = None
        self.loop_thread: int | None = None

    def attach(self) -> None:
        """Called on `initialized`, from the event loop."""
        self.loop = asyncio.get_running_loop()
        self.loop_thread = threading.get_ident()
        self.ready = True

    def emit(self, record: logging.LogRecord) -> None:
        if not self.ready or record.name.startswith("pygls"):
            return
        kind = next((t for level, t in _LEVELS if record.levelno >= level), types.MessageType.Log)
        try:
            message = self.format(record)
        except Exception:  # a bad format string must not break the caller
            message = str(record.msg)
        params = types.LogMessageParams(type=kind, message=message)
        if threading.get_ident() == self.loop_thread:
            self._send(params)
        elif self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._send, params)

    def _send(self, params: types.LogMessageParams) -> None:
        with contextlib.suppress(Exception):  # the transport may be closing; never raise
            self.server.window_log_message(params)


def configure(server: LanguageServer) -> ClientLogHandler:
    """stderr at WARNING for everything, canon_ls INFO records to the client."""
    stderr = logging.StreamHandler()  # stderr: stdout carries JSON-RPC
    stderr.setLevel(logging.WARNING)
    stderr.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(stderr)
    root.setLevel(logging.WARNING)
    logging.getLogger("pygls").setLevel(logging.WARNING)
    handler = ClientLogHandler(server)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("canon_ls")
    log.setLevel(logging.INFO)
    log.addHandler(handler)
    return handler
