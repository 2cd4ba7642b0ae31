"""`canon-ls` / `python -m canon_ls.lsp`: the language server over stdio (or --tcp/--ws)."""

from __future__ import annotations

import logging
import sys
from typing import BinaryIO

MAX_MESSAGE = 256 * 1024 * 1024  # bytes; a larger Content-Length is treated as garbage

log = logging.getLogger("canon_ls.lsp")


class GuardedStdin:
    """stdin for pygls' reader that refuses absurd Content-Length values.

    pygls reads a body with `read(content_length)`; a lying header of 100 GB would raise
    MemoryError and end the process. Here such a read returns one space (invalid JSON, logged
    and skipped) and leaves the stream where it is, so the next header line resynchronises.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream

    def readline(self) -> bytes:
        return self.stream.readline()

    def read(self, n: int) -> bytes:
        if n > MAX_MESSAGE:
            log.warning("ignored a message claiming %d bytes (limit %d)", n, MAX_MESSAGE)
            return b" "
        return self.stream.read(n)


def main() -> None:
    from .server import create_server

    server = create_server()
    args = sys.argv[1:]
    if args:
        from pygls.cli import start_server

        start_server(server, args)
        return
    server.start_io(stdin=GuardedStdin(sys.stdin.buffer), stdout=sys.stdout.buffer)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
