"""`canon hook claude-code|codex|pi`: one agent hook event in on stdin, the agent's JSON out."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

AGENTS = ("claude-code", "codex", "pi")
EVENTS = frozenset(
    {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolBatch", "Stop"}
)


def main(agent: str) -> int:
    """Entry point of `canon hook AGENT`: exit 0 for every input, 1 for an unknown agent."""
    if agent not in AGENTS:
        print(
            f"canon hook: unknown agent {agent!r}; use one of {', '.join(AGENTS)}.", file=sys.stderr
        )
        return 1
    try:
        raw = sys.stdin.buffer.read().decode("utf-8", errors="replace")
        reply = handle(agent, raw, os.environ)
    except Exception:  # a hook must never break the agent's turn
        return 0
    if reply:
        sys.stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


def handle(agent: str, raw: str, env: Any) -> dict[str, Any] | None:
    """The reply object for one raw hook input, or None for no output."""
    if not raw.strip():
        return None
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(payload, dict):
        return None
    if agent == "pi":  # the Pi extension speaks its own event objects (canon_ls.agent.pi)
        from canon_ls.agent import pi

        return pi.handle(payload, env)
    event = payload.get("hook_event_name")
    if event not in EVENTS or event == "PreToolUse":
        return None

    from canon_ls.agent.events import directory, open_session
    from canon_ls.agent.session import prune_states

    cwd = directory(payload.get("cwd")) or Path.cwd()
    start = directory(env.get("CLAUDE_PROJECT_DIR")) if agent == "claude-code" else None

    session = str(payload.get("session_id") or "default")
    reply: dict[str, Any] | None = None
    with open_session(agent, session, cwd, project=start, env=env) as hook:
        if hook is None:
            return None  # no store: do nothing, create nothing
        if event == "SessionStart":
            hook.session_start(str(payload.get("source") or ""))
            note = hook.held_back() if agent == "claude-code" else ""
            reply = {"systemMessage": f"canon: {note}"} if note else None  # shown to the person
        elif event == "UserPromptSubmit":
            prompt = payload.get("prompt")
            reply = _context(event, hook.user_prompt(prompt if isinstance(prompt, str) else ""))
        elif event in ("PostToolUse", "PostToolBatch"):
            from canon_ls.agent.batch import fit, packet

            calls = payload.get("tool_calls") if event == "PostToolBatch" else [payload]
            batch = (
                [_call(c) for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
            )
            agent_id = payload.get("agent_id")
            agent_id = agent_id if isinstance(agent_id, str) else ""  # '' for the main agent
            if event == "PostToolUse":
                text = hook.post_tool(*batch[0], agent_id)
            else:
                text = packet(hook, batch, "these calls", agent_id)[0]
            reply = _context(event, fit(hook, text, agent_id))
        elif event == "Stop":
            reason = hook.stop(payload.get("stop_hook_active") is True)
            if reason:
                reply = {"decision": "block", "reason": reason}
    if event == "SessionStart" and payload.get("source") == "startup":
        prune_states()  # state untouched for two weeks goes at a session's startup
    return reply


def _call(payload: dict[str, Any]) -> tuple[str, object, object]:
    """(tool name, input, response) of one finished call."""
    return (
        str(payload.get("tool_name") or ""),
        payload.get("tool_input"),
        payload.get("tool_response"),
    )


def _context(event: str, text: str) -> dict[str, Any] | None:
    """`hookSpecificOutput.additionalContext` (both agents), or None for nothing to say."""
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


if __name__ == "__main__":  # `python -m canon_ls.agent.hooks claude-code` (benchmarks)
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ""))
