"""A loopback stand-in for the OpenAI Responses API that scripts Codex's model turns.

Codex (`codex exec`) reaches it through a custom model provider (`wire_api = "responses"`).
Every request body is recorded; the n-th request gets the script's n-th list of output items,
streamed as server-sent events (`response.output_item.done` …, `response.completed`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from loopback import LoopbackServer

Item = dict[str, Any]


def message(text: str) -> list[Item]:
    """An assistant message that ends the turn."""
    content = [{"type": "output_text", "text": text}]
    return [{"type": "message", "role": "assistant", "id": "msg_fake", "content": content}]


def shell(command: str, call_id: str) -> list[Item]:
    """A call of Codex's shell tool (`exec_command`; hooks see it as `Bash`)."""
    args = json.dumps({"cmd": command})
    return [{"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id,
             "name": "exec_command", "arguments": args}]  # fmt: skip


def apply_patch(patch: str, call_id: str) -> list[Item]:
    """A call of the freeform `apply_patch` tool."""
    return [{"type": "custom_tool_call", "id": f"ctc_{call_id}", "call_id": call_id,
             "name": "apply_patch", "input": patch}]  # fmt: skip


def tool_search(query: str, call_id: str) -> list[Item]:
    """Codex defers MCP tools: the model loads them with a client-side tool search first."""
    item = {"type": "tool_search_call", "id": f"tsc_{call_id}", "call_id": call_id}
    return [{**item, "execution": "client", "status": "completed", "arguments": {"query": query}}]


def mcp_call(namespace: str, name: str, arguments: dict[str, Any], call_id: str) -> list[Item]:
    """A call of an MCP tool loaded by tool_search (namespace `mcp__<server>`)."""
    return [{"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id,
             "namespace": namespace, "name": name, "arguments": json.dumps(arguments)}]  # fmt: skip


@dataclass
class Request:
    path: str
    body: dict[str, Any]

    def flat(self) -> str:
        """The whole conversation input as text (developer messages and tool outputs too)."""
        return json.dumps(self.body.get("input", []), ensure_ascii=False)


@dataclass
class FakeOpenAI(LoopbackServer):
    """Scripted Responses API. `script(turn, request)` returns the next output items."""

    script: Callable[[int, Request], list[Item]]
    requests: list[Request] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._serve(self._handler())

    @property
    def url(self) -> str:
        return self.origin + "/v1"

    def responses(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path.rstrip("/").endswith("/responses")]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, payload: bytes, ctype: str) -> None:
                self.send_response(200)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                self._send(b'{"models": [], "data": []}', "application/json")

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                req = Request(self.path, body if isinstance(body, dict) else {})
                with fake._lock:
                    fake.requests.append(req)
                    turn = len([r for r in fake.requests if r.path == req.path]) - 1
                if not req.path.rstrip("/").endswith("/responses"):
                    self._send(b"{}", "application/json")
                    return
                self._send(_sse(fake.script(turn, req), turn), "text/event-stream")

        return Handler


def _sse(items: list[Item], turn: int) -> bytes:
    rid = f"resp_{turn}"
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {"id": rid}}]
    for i, item in enumerate(items):
        events.append({"type": "response.output_item.added", "output_index": i, "item": item})
        events.append({"type": "response.output_item.done", "output_index": i, "item": item})
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    events.append({"type": "response.completed", "response": {"id": rid, "usage": usage}})
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
