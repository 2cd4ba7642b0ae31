"""A loopback stand-in for the Anthropic Messages API that scripts a model's turns.

Claude Code (`claude -p`) talks to it through ANTHROPIC_BASE_URL. Every request body is
recorded, so a test can assert what the hooks injected into the conversation. Requests
that carry the agent's tool list are the main loop: the n-th such request gets the script's n-th
turn (Claude Code merges consecutive assistant messages, so counting them is unreliable).
Side requests (titles, summaries, quota probes) get a short text answer.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from loopback import LoopbackServer

Block = dict[str, Any]


def text(value: str) -> list[Block]:
    """One assistant turn that ends the loop with plain text."""
    return [{"type": "text", "text": value}]


def tool_use(name: str, arguments: dict[str, Any], ident: str) -> list[Block]:
    """One assistant turn that calls a tool."""
    return [{"type": "tool_use", "id": ident, "name": name, "input": arguments}]


@dataclass
class Recorded:
    path: str
    body: dict[str, Any]
    main_tool: str = "Read"  # a request declaring this tool is the agent's main loop

    @property
    def is_main(self) -> bool:
        names = {t.get("name") for t in self.body.get("tools") or [] if isinstance(t, dict)}
        return self.main_tool in names

    def flat(self) -> str:
        """All message text of the request (tool results and system reminders included)."""
        return json.dumps(self.body.get("messages", []), ensure_ascii=False)


@dataclass
class FakeAnthropic(LoopbackServer):
    """Scripted Messages API. `script(turn, request)` returns the next assistant blocks."""

    script: Callable[[int, Recorded], list[Block]]
    main_tool: str = "Read"  # Claude Code's file reader; Pi's is "read"
    requests: list[Recorded] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._serve(self._handler())

    @property
    def url(self) -> str:
        return self.origin

    def main_requests(self) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.is_main]

    def _reply(self, rec: Recorded) -> list[Block]:
        if not rec.is_main:
            return text("ok")
        with self._lock:
            turn = sum(1 for r in self.requests if r.is_main) - 1
        return self.script(turn, rec)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def _send(self, code: int, payload: bytes, ctype: str) -> None:
                self.send_response(code)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(payload)))
                self.send_header("request-id", "req_fake")
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                self._send(200, b'{"data": [], "has_more": false}', "application/json")

            def do_HEAD(self) -> None:  # noqa: N802
                self._send(200, b"", "application/json")

            def do_POST(self) -> None:  # noqa: N802
                size = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(size)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                rec = Recorded(self.path, body if isinstance(body, dict) else {}, fake.main_tool)
                with fake._lock:
                    fake.requests.append(rec)
                if "count_tokens" in self.path:
                    self._send(200, b'{"input_tokens": 100}', "application/json")
                    return
                blocks = fake._reply(rec)
                model = str(rec.body.get("model", "claude-fake"))
                if rec.body.get("stream"):
                    self._send(200, _sse(blocks, model), "text/event-stream")
                else:
                    self._send(
                        200, json.dumps(_message(blocks, model)).encode(), "application/json"
                    )

        return Handler


def _stop_reason(blocks: list[Block]) -> str:
    return "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"


def _message(blocks: list[Block], model: str) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": _stop_reason(blocks),
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _sse(blocks: list[Block], model: str) -> bytes:
    events: list[tuple[str, dict[str, Any]]] = []
    start = _message([], model)
    start["stop_reason"] = None
    events.append(("message_start", {"type": "message_start", "message": start}))
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            head: Block = {"type": "text", "text": ""}
            delta: Block = {"type": "text_delta", "text": block["text"]}
        else:
            head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": head},
            )
        )
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta})
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": _stop_reason(blocks), "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    out = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
    return out.encode()
