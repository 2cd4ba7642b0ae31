"""stdin read on the event loop instead of pygls' thread pool."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import stat
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import Any, BinaryIO

from canon_ls.lsp.startup.first_answer import DropRepeatedAnswer, Early
from canon_ls.lsp.wire.pygls_private import set_stop_event

log = logging.getLogger("canon_ls.lsp")

MAX_MESSAGE = 256 * 1024 * 1024  # bytes; a larger Content-Length is treated as garbage
MAX_HEADER_LINE = 64 * 1024  # bytes; a longer "header" line is skipped as garbage
MAX_UNREAD = 16 * 1024 * 1024  # bytes queued for a client that stops reading: requests wait


class LoopStdin:
    """pygls' AsyncReader (readline / readexactly) over a buffer the event loop fills."""

    def __init__(self, stream: BinaryIO, threaded: bool = False, replay: bytes = b"") -> None:
        self.stream = stream
        self.threaded = threaded
        self.replay = replay  # bytes read before the server started: they come first
        self.reader: asyncio.StreamReader | None = None
        self.writer: LoopStdout | None = None  # its backlog pauses reading (serve sets it)

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
        if self.writer is not None:
            await self.writer.drained()
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
    """The fallback's thread: blocking reads handed to the loop whole (no per-line hop)."""
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
    # Windows' proactor needs overlapped handles; stdin is not one
    return os.name == "posix" and _pipe_apart(stdin, stdout, reading=True)


def _pipe_apart(stdin: BinaryIO, stdout: BinaryIO, reading: bool) -> bool:
    """Whether stdin (`reading`) or stdout is a pipe or socket, and not the other's object."""
    try:
        into, out = os.fstat(stdin.fileno()), os.fstat(stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    mode = (into if reading else out).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return False
    return (into.st_dev, into.st_ino) != (out.st_dev, out.st_ino)


class LoopStdout:
    """pygls' writer over a non-blocking stdout pipe, drained by the event loop."""

    def __init__(self, stream: BinaryIO, answering: Callable[[], bool]) -> None:
        self.fd = stream.fileno()
        self.answering = answering
        self.answers: collections.deque[bytes] = collections.deque()
        self.others: collections.deque[bytes] = collections.deque()
        self.current = memoryview(b"")
        self.loop: asyncio.AbstractEventLoop | None = None
        self.waiting = False  # the loop calls `_pump` when the pipe has room
        self.broken = False
        self.queued = 0  # bytes in both queues
        self.room: asyncio.Event | None = None  # set when the queues fall below MAX_UNREAD
        os.set_blocking(self.fd, False)

    async def drained(self) -> None:
        """Return once the client has read enough."""
        if self.queued > MAX_UNREAD:
            log.warning("paused reading: %d bytes of answers unread by the client", self.queued)
        while self.queued > MAX_UNREAD and not self.broken:
            self.room = asyncio.Event()
            await self.room.wait()

    def write(self, data: bytes) -> None:
        if self.broken:
            return
        answer = self.answering()
        if not answer and self.queued > 4 * MAX_UNREAD:  # the answers keep their place
            return  # a notification to a client that reads nothing: dropped
        self.queued += len(data)
        (self.answers if answer else self.others).append(data)
        try:
            self.loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (never in a session): write it all now
            self.flush()
            return
        if not self.waiting:
            self._pump()

    def _pump(self) -> None:
        while self.current or self.answers or self.others:
            if not self.current:
                self.current = memoryview((self.answers or self.others).popleft())
                self.queued -= len(self.current)
                if self.room is not None and self.queued <= MAX_UNREAD:
                    self.room.set()
            try:
                written = os.write(self.fd, self.current)
            except BlockingIOError:
                written = 0
            except OSError:  # the client is gone; its end of stdin closes next
                self._drop()
                return
            self.current = self.current[written:]
            if self.current:
                self._wait(True)
                return
        self._wait(False)

    def _wait(self, on: bool) -> None:
        if self.loop is None or on == self.waiting:
            return
        if on:
            self.loop.add_writer(self.fd, self._pump)
        else:
            self.loop.remove_writer(self.fd)
        self.waiting = on

    def _drop(self) -> None:
        if not self.broken:
            log.error("the client closed the connection; shutting down")
        self.broken = True
        self.answers.clear()
        self.others.clear()
        if self.room is not None:
            self.room.set()
        self.current = memoryview(b"")
        self._wait(False)

    def flush(self) -> None:
        """Write everything still queued, blocking (the session is ending, or no loop)."""
        with contextlib.suppress(RuntimeError, ValueError):  # the loop may be closed
            self._wait(False)
        try:
            os.set_blocking(self.fd, True)
            while not self.broken and (self.current or self.answers or self.others):
                if not self.current:
                    self.current = memoryview((self.answers or self.others).popleft())
                self.current = self.current[os.write(self.fd, self.current) :]
        except OSError:
            self._drop()

    def close(self) -> None:
        self.flush()


def loop_writable(stdin: BinaryIO, stdout: BinaryIO) -> bool:
    """True when stdout can be written without blocking and without affecting stdin."""
    if os.environ.get("CANON_LS_BLOCKING_STDOUT") or os.name != "posix":
        return False
    return _pipe_apart(stdin, stdout, reading=False)


def serve(server: object, early: Early | None = None) -> None:
    """Run a pygls LanguageServer over stdio with the loop-native reader where possible."""
    from pygls.io_ import StdoutWriter, run_async
    from pygls.lsp.server import LanguageServer

    assert isinstance(server, LanguageServer)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    threaded = not loop_readable(stdin, stdout)
    # What pygls' `_start_io_async` does, with LoopStdin in place of its executor reader.
    stop = threading.Event()
    set_stop_event(server, stop)
    early = early or Early(b"")
    protocol = server.protocol
    writer: LoopStdout | StdoutWriter = StdoutWriter(stdout)
    if loop_writable(stdin, stdout):
        writer = LoopStdout(stdout, lambda: getattr(protocol, "sending_answer", False))
    protocol.set_writer(DropRepeatedAnswer(writer, early))
    reader = LoopStdin(stdin, threaded, early.consumed)
    reader.writer = writer if isinstance(writer, LoopStdout) else None
    session = run_async(
        stop_event=stop,
        reader=reader,
        protocol=server.protocol,
        logger=log,
        error_handler=server.report_server_error,
    )
    try:
        _run(_then_stop_work(session, server))
    except BrokenPipeError:
        log.error("the client closed the connection; shutting down")
    except (KeyboardInterrupt, SystemExit):  # pygls raises SystemExit on `exit`
        pass
    finally:
        server.shutdown()
        if isinstance(writer, LoopStdout):
            writer.flush()
    sys.exit(0 if getattr(server, "shutting_down", False) else 1)  # 0: ended by `shutdown`


async def _then_stop_work(session: Coroutine[Any, Any, None], server: object) -> None:
    """Run the session, then end the work it started (`stop_work`) however it ended."""
    try:
        await session
    finally:
        stop_work = getattr(server, "stop_work", None)
        if stop_work is not None:
            try:
                stop_work()
            except Exception:  # the session is over either way; say why it was not clean
                log.exception("ending the session's work failed")


def _run(main: Coroutine[Any, Any, None], grace: float = 2.0) -> None:
    """`asyncio.run`, but tasks left at exit get `grace` seconds: `exit` must end the process."""
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
