"""Workspace symbols answered while the server is still being built (SPEC §10)."""

from __future__ import annotations

import contextlib
import json
import os
import select
import sys
import traceback
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from canon_ls.lsp.startup import first_answer
from canon_ls.lsp.startup.first_answer import Early

if TYPE_CHECKING:
    from canon_ls.core.storage.store import Store

ANSWERED = "canon/symbolsAnsweredEarly"
FILE = 1  # LSP SymbolKind.File, as the server's own answer says
MAX_KEPT = 16 * 1024 * 1024  # bytes kept for the server while it is built
STDIN, STDOUT = 0, 1
DONE = b"\x00"  # ends the bytes handed back: without it the child failed half-way


def enabled() -> bool:
    return (
        hasattr(os, "fork")
        and os.environ.get("CANON_LS_EARLY_SYMBOLS", "1") != "0"
        and first_answer.enabled()
    )


class Meanwhile:
    """The parent's end of the child: its pid, the pipe that hands it stdin."""

    def __init__(self, pid: int, go: int, back: int) -> None:
        self.pid, self.go_fd, self.back_fd = pid, go, back
        self.going = False

    @classmethod
    def start(cls) -> Meanwhile | None:
        """Fork the child (None when it cannot be): it warms its imports and waits."""
        try:
            go_r, go_w = os.pipe()
            back_r, back_w = os.pipe()
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:
            for fd in (go_r, go_w, back_r, back_w):
                os.close(fd)
            return None
        if pid == 0:  # the child: never returns
            os.close(go_w)
            os.close(back_r)
            code = 0
            try:
                _child(go_r, back_w)
            except BaseException:  # noqa: BLE001 - reported, and the process ends either way
                code = 1
                with contextlib.suppress(Exception):
                    traceback.print_exc(file=sys.stderr)
            os._exit(code)
        os.close(go_r)
        os.close(back_w)
        return cls(pid, go_w, back_r)

    def go(self, early: Early) -> None:
        """Hand stdin to the child when `initialize` was answered early."""
        if early.result is None or early.params is None:
            return
        params = json.dumps(early.params).encode()
        rest = early.consumed[early.length :]
        try:
            _write_all(self.go_fd, b"%d %d\n" % (len(params), len(rest)) + params + rest)
        except OSError:  # the child is gone: the parent reads stdin itself
            return
        self.going = True

    def take(self, early: Early) -> Early:
        """Stop the child and return `early` with the bytes it read and kept."""
        os.close(self.go_fd)
        kept = bytearray()
        with contextlib.suppress(OSError):
            while chunk := os.read(self.back_fd, 65536):
                kept += chunk
        os.close(self.back_fd)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        if not self.going:
            return early
        if not kept.endswith(DONE):
            print(
                "canon-ls: the early symbol reader failed; requests it read may go unanswered",
                file=sys.stderr,
            )
        else:
            del kept[-1:]
        return replace(early, consumed=early.consumed[: early.length] + bytes(kept))


def _child(go: int, back: int) -> None:
    answers = Answers.warm()
    start = _read_go(go)
    if start is None:  # the parent reads stdin itself
        return
    params, rest = start
    reader = Reader(answers, rest)
    try:  # from here on the parent needs its bytes back, whatever happens
        answers.open(params)
        reader.run(go)
    finally:
        with contextlib.suppress(OSError):
            _write_all(back, bytes(reader.kept + reader.pending) + DONE)


def _read_go(fd: int) -> tuple[dict[str, Any], bytes] | None:
    data = b""
    while b"\n" not in data:
        if not (chunk := os.read(fd, 65536)):
            return None
        data += chunk
    head, _, data = data.partition(b"\n")
    sizes = head.split()
    need = int(sizes[0]) + int(sizes[1])
    while len(data) < need:
        if not (chunk := os.read(fd, need - len(data))):
            return None
        data += chunk
    return json.loads(data[: int(sizes[0])]), data[int(sizes[0]) :]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class Reader:
    """The child's reading of stdin: frames, answered or kept."""

    def __init__(self, answers: Answers, rest: bytes) -> None:
        self.answers = answers
        self.pending = bytearray(rest)  # read, not yet a whole frame
        self.kept = bytearray()  # whole frames for the server, in order
        self.framing = True  # False after a frame it cannot read: the rest is kept as is
        self.eof = False

    def run(self, go: int) -> None:
        """Read stdin until the parent closes `go` (the server is built)."""
        self.feed(b"")
        while True:
            full = len(self.kept) + len(self.pending) > MAX_KEPT  # the rest waits in the pipe
            watched = [go] if self.eof or full else [go, STDIN]
            ready, _, _ = select.select(watched, [], [])
            if go in ready:
                return
            try:
                chunk = os.read(STDIN, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                self.eof = True
                continue
            self.feed(chunk)

    def feed(self, chunk: bytes) -> None:
        self.pending += chunk
        while self.framing and (whole := self._next_frame()) is not None:
            self.kept += self._answered(whole) or whole

    def _next_frame(self) -> bytes | None:
        end = self.pending.find(b"\r\n\r\n")
        if end < 0:
            if len(self.pending) > first_answer.MAX_HEADER:
                self.framing = False
            return None
        length = first_answer.content_length(bytes(self.pending[:end]))
        if length is None:
            self.framing = False
            return None
        size = end + 4 + length
        if len(self.pending) < size:
            return None
        whole = bytes(self.pending[:size])
        del self.pending[:size]
        return whole

    def _answered(self, whole: bytes) -> bytes | None:
        """The notification standing for `whole` once answered here; None to keep it."""
        try:
            message = json.loads(whole[whole.index(b"\r\n\r\n") + 4 :])
        except ValueError:
            return None
        if not isinstance(message, dict) or message.get("method") != "workspace/symbol":
            return None
        request_id, params = message.get("id"), message.get("params")
        if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
            return None
        query = params.get("query") if isinstance(params, dict) else None
        if not isinstance(query, str):
            return None
        try:
            symbols = self.answers.symbols(query)
        except Exception:  # noqa: BLE001 - the server answers instead
            return None
        if not symbols:
            return None
        answer = {"jsonrpc": "2.0", "id": request_id, "result": symbols}
        try:
            _write_all(STDOUT, first_answer.frame(answer))
        except OSError:  # the client is gone; the server finds out on its own
            return None
        notice = {"jsonrpc": "2.0", "method": ANSWERED, "params": {"query": query}}
        return first_answer.frame(notice)


class Answers:
    """The symbols of the workspace's stores, listed once, by name."""

    def __init__(self) -> None:
        self.stores: list[tuple[Store, list[str] | None]] = []

    @classmethod
    def warm(cls) -> Answers:
        """Import what an answer needs, while the parent still reads `initialize`."""
        from pygls import uris  # noqa: F401

        from canon_ls.core.storage import disk_view, project  # noqa: F401
        from canon_ls.lsp.session import settings  # noqa: F401
        from canon_ls.lsp.startup import early_symbols  # noqa: F401

        return cls()

    def open(self, params: dict[str, Any]) -> None:
        """Open and list each folder's store as the server will."""
        from pathlib import Path

        from pygls.uris import to_fs_path

        from canon_ls.lsp.session.settings import parse
        from canon_ls.lsp.startup import early_symbols

        settings, _ = parse(params.get("initializationOptions"))
        folders = params.get("workspaceFolders") or []
        named = [f.get("uri") for f in folders if isinstance(f, dict)]
        root_uri, root_path = params.get("rootUri"), params.get("rootPath")
        uris = first_answer.folder_uris(
            [u for u in named if isinstance(u, str)],
            root_uri if isinstance(root_uri, str) else None,
            root_path if isinstance(root_path, str) else None,
        )
        for uri in uris:
            path = to_fs_path(uri)
            if not path:
                continue
            try:
                store = settings.open_store(Path(path).resolve())
            except Exception:  # noqa: BLE001 - left out, as the server leaves it (and says why)
                continue
            if store.exists():
                self.stores.append((store, early_symbols.listed(store)))

    def symbols(self, query: str) -> list[dict[str, Any]] | None:
        """SymbolInformation for `query` as the server's early answer gives it."""
        from pygls.uris import from_fs_path

        from canon_ls.core.storage.disk_view import DiskView
        from canon_ls.lsp.startup.early_symbols import LIMIT, SMALL, by_text, rank, symbol_name

        out: list[dict[str, Any]] = []
        top = {"line": 0, "character": 0}
        for store, addresses in self.stores:
            if addresses is None:
                return None
            view = DiskView(store)
            hits = rank(query, addresses, (), LIMIT)
            if not hits and len(addresses) <= SMALL:  # words only bodies hold (a small store)
                hits = by_text(((a, view.article(a)) for a in addresses), query)
            for address in hits:
                article = view.article(address)
                if article is None:
                    continue
                out.append(
                    {
                        "name": symbol_name(address, article.capsule),
                        "kind": FILE,
                        "location": {
                            "uri": from_fs_path(store.paths.file(address)),
                            "range": {"start": top, "end": top},
                        },
                    }
                )
        return out or None
