"""`canon mcp`: the stdio MCP server with one tool, `canon` (SPEC §11.2)."""

from __future__ import annotations

import io
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from canon_ls import version
from canon_ls.core import tool
from canon_ls.core.storage.inotify import TreeTimes
from canon_ls.core.storage.project import open_store
from canon_ls.core.storage.store import Store

TOOL_NAME = "canon"

DESCRIPTION = tool.description()  # shared with the Pi extension (canon_ls.agent.pi)
INSTRUCTIONS = tool.GUIDELINE

_SESSION_KEYS = ("sessionId", "session_id", "session")


def session_of(meta: Mapping[str, Any] | None) -> str | None:
    """The client's session id from a request `_meta`, if it offers one."""
    if not meta:
        return None
    named = [v for k, v in meta.items() if "/" in k and k.rsplit("/", 1)[-1] in _SESSION_KEYS]
    for value in [*map(meta.get, _SESSION_KEYS), *named]:  # plain keys first, then prefixed
        if isinstance(value, str | int) and str(value):
            return str(value)
    return None


_KNOWN_HARNESSES = (
    ("claude-code", "claude-code"),
    ("claude code", "claude-code"),
    ("codex", "codex"),
    ("pi-coding-agent", "pi"),
)
_SUFFIXES = ("-mcp-client", "-client", "-mcp")


def harness_name(name: object) -> str:
    """SPEC §11.2: the journal `source` for a client that calls itself `name` (`clientInfo`)."""
    if not isinstance(name, str):
        return "mcp"
    low = name.strip().lower()
    for prefix, short in _KNOWN_HARNESSES:
        if low.startswith(prefix):
            return short
    word = re.sub(r"[^a-z0-9]+", "-", low).strip("-")
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) > len(suffix):
            word = word[: -len(suffix)]
    word = "-".join(word.split("-")[:3])[:24].strip("-")
    return word or "mcp"


def _text(text: str, is_error: bool) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=is_error
    )


def build_server(store: Store) -> Server[Any]:
    """The MCP server over one store; calls run one at a time (the store is not thread-safe)."""
    lock = anyio.Lock()
    schema = tool.input_schema()
    # The filing advice follows the retrieval option (SPEC §11.4): with the lane on, a rule
    # over many files is filed under its own name.
    description = tool.description(lane=store.options is not None and store.options.lane)

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name=TOOL_NAME, description=description, input_schema=schema)]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name != TOOL_NAME:
            return _text(
                f"There is no tool {params.name!r}; this server has one tool, canon.", True
            )
        arguments = params.arguments if params.arguments is not None else {}
        session = session_of(params.meta) or session_of(ctx.meta)
        session = session or os.environ.get("CLAUDE_CODE_SESSION_ID") or None  # Claude Code's
        # The harness name of the connected client (`mcp` when it gave none).
        info = getattr(getattr(ctx.session, "client_params", None), "client_info", None)
        source = harness_name(getattr(info, "name", None))
        async with lock:
            result = await anyio.to_thread.run_sync(_call, store, arguments, session, source)
        return _text(result.text, result.code != 0)

    return Server(
        "canon",
        version=version() or "0",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _call(store: Store, arguments: object, session: str | None, source: str) -> tool.ToolResult:
    if not isinstance(arguments, dict) or arguments.get("action") != "read":
        store.refresh()  # a read re-checks only the files up its address (warm: milliseconds)
    return tool.run(store, arguments, source=source, session=session)


async def serve(store: Store) -> None:
    """Serve over stdin/stdout until the client closes the pipe; every request gets an answer."""
    server = build_server(store)
    async with stdio_server(stdin=_NoLines()) as (_, write_stream):  # type: ignore[arg-type]
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_read_lines, send, write_stream)
            await server.run(receive, write_stream, server.create_initialization_options())


class _NoLines:
    """The SDK transport's stdin: nothing (the lines are read by `_read_lines`)."""

    def __aiter__(self) -> _NoLines:
        return self

    async def __anext__(self) -> str:
        raise StopAsyncIteration


async def _read_lines(out: Any, answer: Any) -> None:
    """Each stdin line to the server as a message, or answered at once when it cannot be."""
    lines = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    async with out:
        async for line in lines:
            message = _message(line)
            if isinstance(message, types.JSONRPCError):
                await answer.send(SessionMessage(message))
            else:
                await out.send(message)


def _message(line: str) -> SessionMessage | Exception | types.JSONRPCError:
    """One line parsed by Python's json (the SDK's rejects lone surrogates, deep nesting)."""
    try:
        data: Any = json.loads(line)
    except RecursionError:
        data = None
    except ValueError as exc:  # not JSON at all: no id to answer, as with the SDK's reader
        return exc
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(data, by_name=False))
    except Exception as exc:
        found = data.get("id") if isinstance(data, dict) else _ID.search(line[:4096])
        request_id = json.loads(found.group(1)) if isinstance(found, re.Match) else found
        if not isinstance(request_id, int | str) or isinstance(request_id, bool):
            return exc
        why = "nested too deeply" if data is None else "not a request canon can read"
        text = f"This request is {why}; send the action object as plain JSON."
        error = types.ErrorData(code=types.INVALID_REQUEST, message=text)
        return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


_ID = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


def main(project: Path, options: Mapping[str, Any] | None = None) -> int:
    """Entry of `canon mcp`: open the project's store (lazily; nothing is created) and serve."""
    store = open_store(project, options)
    store.newest_below = TreeTimes(str(store.project)).newest  # a read then stats no big tree
    anyio.run(serve, store)
    return 0
