"""stdin read on the event loop instead of pygls' thread pool.

pygls 2.1 reads each header line and each body through `run_in_executor`: three thread hops
and GIL handoffs per message, which is most of a hover's round trip and the source of its
scheduling tail on a busy machine. Here the pipe is an asyncio transport: one wakeup per chunk
of bytes, and a message already in the buffer is parsed without any hop.

Only pipes and sockets qualify, and only when stdin is not the very object stdout writes to
(a tty or one socket for both): the transport makes stdin non-blocking, which would then make
pygls' blocking stdout writes fail. Otherwise (and on Windows) one daemon thread feeds the same
buffer with blocking reads: still one hop per chunk, not per line, and a read still waiting at
`exit` never holds the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
import threading
from collections.abc import Coroutine
from typing import Any, BinaryIO

from .first_answer import DropRepeatedAnswer, Early
from .pygls_private import set_stop_event

log = logging.getLogger("canon_ls.lsp")

MAX_MESSAGE = 256 * 1024 * 1024  # bytes; a larger Content-Length is treated as garbage
MAX_HEADER_LINE = 64 * 1024  # bytes; a longer "header" line is skipped as garbage


class LoopStdin:
    """pygls' AsyncReader (readline / readexactly) over a buffer the event loop fills: from an
    asyncio pipe transport, or (`threaded`) from one daemon thread's blocking reads."""

    def __init__(self, stream: BinaryIO, threaded: bool = False, replay: bytes = b"") -> None:
        self.stream = stream
        self.threaded = threaded
        self.replay = replay  # bytes read before the server started: they come first
        self.reader: asyncio.StreamReader | None = None

    async def _connect(self) -> asyncio.StreamReader:
        if self.reader is None:
            loop = asyncio.get_running_loop()
            reader = asyncio.StreamReader(limit=MAX_HEADER_LINE, loop=loop)
            if self.replay:
                reader.feed_data(self.replay)
            if self.threaded:
                feed = threading.Thread(
                    target=_feed, args=(self.stream, reader, loop), name="stdin", daemon=True
                )
                feed.start()
            else:
                pipe = open(self.stream.fileno(), "rb", buffering=0, closefd=False)  # noqa: SIM115
                await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
            self.reader = reader
        return self.reader

    async def readline(self) -> bytes:
        reader = await self._connect()
        try:
            return await reader.readline()
        except ValueError:  # no newline within the limit: the reader dropped it; go on
            log.warning("ignored a header line longer than %d bytes", MAX_HEADER_LINE)
            return b"?\r\n"  # not blank and not a header: pygls keeps reading headers

    async def readexactly(self, n: int) -> bytes:
        if n > MAX_MESSAGE:
            # A lying header must not allocate gigabytes; one space is invalid JSON (logged and
            # skipped) and the stream stays where it is, so the next header resynchronises.
            log.warning("ignored a message claiming %d bytes (limit %d)", n, MAX_MESSAGE)
            return b" "
        reader = await self._connect()
        try:
            return await reader.readexactly(n)
        except asyncio.IncompleteReadError as exc:  # the client went away mid-message
            return exc.partial


def _feed(stream: BinaryIO, reader: asyncio.StreamReader, loop: asyncio.AbstractEventLoop) -> None:
    """The fallback's thread: blocking reads handed to the loop whole (no per-line hop).

    `os.read` on the descriptor, not the buffered stream: a daemon thread blocked inside
    `BufferedReader.read` holds its lock, and the interpreter aborts at exit when it finds it
    taken."""
    fd = stream.fileno()
    try:
        while chunk := os.read(fd, 65536):
            loop.call_soon_threadsafe(reader.feed_data, chunk)
    except RuntimeError:  # the loop is closed: the server is exiting
        return
    except (OSError, ValueError):  # stdin unusable: treated as its end
        pass
    with contextlib.suppress(RuntimeError):  # the loop may be closed already
        loop.call_soon_threadsafe(reader.feed_eof)


def loop_readable(stdin: BinaryIO, stdout: BinaryIO) -> bool:
    """True when stdin can be an asyncio pipe without affecting stdout."""
    if os.environ.get("CANON_LS_THREADED_STDIN"):  # the threaded fallback, for comparisons
        return False
    if os.name != "posix":  # Windows' proactor needs overlapped handles; stdin is not one
        return False
    try:
        into, out = os.fstat(stdin.fileno()), os.fstat(stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    if not (stat.S_ISFIFO(into.st_mode) or stat.S_ISSOCK(into.st_mode)):
        return False
    return (into.st_dev, into.st_ino) != (out.st_dev, out.st_ino)


def serve(server: object, early: Early | None = None) -> None:
    """Run a pygls LanguageServer over stdio with the loop-native reader where possible;
    `early` holds what was read (and perhaps answered) before the server existed."""
    from pygls.io_ import StdoutWriter, run_async
    from pygls.lsp.server import LanguageServer

    assert isinstance(server, LanguageServer)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    threaded = not loop_readable(stdin, stdout)
    # What pygls' `_start_io_async` does, with LoopStdin in place of its executor reader.
    stop = threading.Event()
    set_stop_event(server, stop)
    early = early or Early(b"")
    server.protocol.set_writer(DropRepeatedAnswer(StdoutWriter(stdout), early))
    try:
        _run(
            run_async(
                stop_event=stop,
                reader=LoopStdin(stdin, threaded, early.consumed),
                protocol=server.protocol,
                logger=log,
                error_handler=server.report_server_error,
            )
        )
    except BrokenPipeError:
        log.error("the client closed the connection; shutting down")
    except (KeyboardInterrupt, SystemExit):  # pygls raises SystemExit on `exit`
        pass
    finally:
        server.shutdown()
    sys.exit(_exit_code(server))


def _exit_code(server: object) -> int:
    """0 when the session ended with the `shutdown` handshake, else 1 (LSP `exit`; also a
    client that vanished without it). `shutting_down` is set by our `shutdown` handler."""
    return 0 if getattr(server, "shutting_down", False) else 1


def _run(main: Coroutine[Any, Any, None], grace: float = 2.0) -> None:
    """`asyncio.run`, except that tasks still running at exit get `grace` seconds to end
    after cancellation instead of an unbounded wait: `exit` must end the process."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(main)
    finally:
        try:
            tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in tasks:
                task.cancel()
            if tasks:
                _done, stuck = loop.run_until_complete(asyncio.wait(tasks, timeout=grace))
                for task in stuck:
                    print(
                        f"canon-ls: a task ignored cancellation at exit: {task!r}", file=sys.stderr
                    )
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()
