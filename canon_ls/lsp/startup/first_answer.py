"""Answer `initialize` before the server's heavy imports (SPEC §10: the editor first)."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from typing import Any, BinaryIO

from canon_ls import version
from canon_ls.lsp.capabilities import DIAGNOSTICS, PROVIDERS, WILL_RENAME

log = logging.getLogger("canon_ls.lsp")

MAX_HEADER = 64 * 1024  # bytes before the blank line; more is not an LSP frame
MAX_BODY = 4 * 1024 * 1024  # an `initialize` is a few kB; a larger one is left to the server
ENCODINGS = ("utf-8", "utf-16", "utf-32")  # what the server converts columns with


@dataclass
class Early:
    """What was read from stdin before the server started, and the answer already sent."""

    consumed: bytes
    request_id: int | str | None = None
    result: dict[str, Any] | None = None  # None: nothing was answered early
    params: dict[str, Any] | None = None  # the params of the `initialize` answered early
    length: int = 0  # bytes of `consumed` that frame that `initialize`; the rest came after


def enabled() -> bool:
    return os.environ.get("CANON_LS_EARLY_INITIALIZE", "1") != "0"


def answer(stdin: BinaryIO, stdout: BinaryIO) -> Early:
    """Read the first message; when it is an ordinary `initialize`, answer it on stdout."""
    consumed, message, length = read_first(stdin.fileno())
    early = Early(consumed)
    if message is None or message.get("method") != "initialize":
        return early
    request_id = message.get("id")
    params = message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        return early
    result = initialize_result(params)
    if result is None:
        return early
    stdout.write(frame({"jsonrpc": "2.0", "id": request_id, "result": result}))
    stdout.flush()
    return Early(consumed, request_id, result, params, length)


def read_first(fd: int) -> tuple[bytes, dict[str, Any] | None, int]:
    """Every byte read (all replayed), the first frame's JSON object if well formed, its length."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > MAX_HEADER or not (chunk := _read(fd)):
            return data, None, 0
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = content_length(head)
    if length is None or length > MAX_BODY:
        return data, None, 0
    while len(rest) < length:
        if not (chunk := _read(fd)):
            return data, None, 0
        data += chunk
        rest += chunk
    try:
        message = json.loads(rest[:length])
    except ValueError:
        return data, None, 0
    if not isinstance(message, dict):
        return data, None, 0
    return data, message, len(head) + 4 + length


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:
        return b""


def content_length(head: bytes) -> int | None:
    """The Content-Length of a frame's header (without its blank line)."""
    for line in head.split(b"\r\n"):
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return None
            return length if length >= 0 else None
    return None


def initialize_result(params: Any) -> dict[str, Any] | None:
    """The server's `InitializeResult` for these params, or None when unusual ones."""
    if not isinstance(params, dict) or not isinstance(params.get("capabilities"), dict):
        return None
    client = params["capabilities"]
    encoding = _encoding(client)
    pulls = _pulls_diagnostics(client)
    sync = _will_save(client)
    renames = _file_operations(client)
    if encoding is None or pulls is None or sync is None or renames is None:
        return None
    capabilities: dict[str, Any] = {
        "positionEncoding": encoding,
        "textDocumentSync": {"openClose": True, "change": 2, **sync, "save": True},
        **dict(PROVIDERS.values()),
    }
    if pulls:
        capabilities["diagnosticProvider"] = DIAGNOSTICS
    capabilities["workspace"] = {
        "workspaceFolders": {"supported": True, "changeNotifications": True},
        "fileOperations": renames,
    }
    return {
        "capabilities": capabilities,
        "serverInfo": {"name": "canon-ls", "version": version() or "0"},
    }


def _encoding(client: dict[str, Any]) -> str | None:
    """The client's first encoding the server knows, else utf-16 (the protocol's default)."""
    general = _section(client, "general")
    offered = None if general is None else general.get("positionEncodings")
    if general is None or not isinstance(offered, list | None):
        return None
    if not all(isinstance(e, str) for e in offered or ()):
        return None
    return next((e for e in offered or () if e in ENCODINGS), "utf-16")


def _section(client: dict[str, Any], *keys: str) -> dict[str, Any] | None:
    """A nested object of the capabilities ({} when absent); None when one is no object."""
    here: Any = client
    for key in keys:
        here = here.get(key)
        if here is None:
            return {}
        if not isinstance(here, dict):
            return None
    return here


def _will_save(client: dict[str, Any]) -> dict[str, bool] | None:
    """The server handles neither willSave nor willSaveWaitUntil."""
    sync = _section(client, "textDocument", "synchronization")
    if sync is None:
        return None
    given = [key for key in ("willSave", "willSaveWaitUntil") if sync.get(key) is not None]
    if not all(isinstance(sync[key], bool) for key in given):
        return None
    return dict.fromkeys(given, False)


def _file_operations(client: dict[str, Any]) -> dict[str, Any] | None:
    """`willRename` (a renamed asset's article follows it) for a client that sends it."""
    operations = _section(client, "workspace", "fileOperations")
    if operations is None:
        return None
    value = operations.get("willRename")
    if value is not None and not isinstance(value, bool):
        return None
    return {"willRename": WILL_RENAME} if value else {}


def _pulls_diagnostics(client: dict[str, Any]) -> bool | None:
    """Pull diagnostics are offered to a client that asks for them and can be told to refresh."""
    document = _section(client, "textDocument")
    diagnostics = _section(client, "workspace", "diagnostics")
    if document is None or diagnostics is None:
        return None
    diagnostic, refresh = document.get("diagnostic"), diagnostics.get("refreshSupport")
    if not isinstance(diagnostic, dict | None) or not isinstance(refresh, bool | None):
        return None
    return diagnostic is not None and bool(refresh)


def folder_uris(named: list[str], root_uri: str | None, root_path: str | None) -> list[str]:
    """The folders a client's `initialize` names."""
    if named:
        return named
    if root_uri:
        return [root_uri]
    if root_path:
        from pygls.uris import from_fs_path

        uri = from_fs_path(root_path)
        return [uri] if uri else []
    return []


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class DropRepeatedAnswer:
    """The server's writer, minus its own answer to the `initialize` answered early."""

    def __init__(self, writer: Any, early: Early) -> None:
        self.writer = writer
        self.early = early

    def close(self) -> None:
        self.writer.close()

    def write(self, data: bytes) -> Any:
        if self.early.result is not None and self._is_repeat(data):
            self.early = Early(b"")
            return None
        return self.writer.write(data)

    def _is_repeat(self, data: bytes) -> bool:
        _, _, body = data.partition(b"\r\n\r\n")
        try:
            message = json.loads(body)
        except ValueError:
            return False
        if not isinstance(message, dict) or "method" in message:
            return False
        if message.get("id") != self.early.request_id:
            return False
        if "error" in message:
            log.error("the client's initialize was answered early, then failed: %s", message)
        elif message.get("result") != self.early.result:
            log.warning(
                "the early initialize answer differs from the server's: %s != %s",
                self.early.result,
                message.get("result"),
            )
        return True
