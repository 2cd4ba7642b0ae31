"""`canon hook pi`: the decisions behind the Pi extension that `canon init pi` writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from canon_ls.agent.session import string_or_empty

AGENT = "pi"
# Pi's built-in tools, in the vocabulary the surfacing scan reads: edit/write name the file
# they change, bash carries a shell command, the native canon tool reads and writes articles.
TOOL_NAMES = {"edit": "Edit", "write": "Write", "bash": "Bash", "canon": "mcp__pi__canon"}
# Pi `session_start` reasons, as the session sources of SPEC §11.3 (`new` is Pi's /new).
SESSION_SOURCES = {"startup": "startup", "new": "clear", "fork": "fork", "resume": "resume"}


def handle(payload: dict[str, Any], env: Any) -> dict[str, Any] | None:
    """The reply for one decoded Pi event, or None for no output."""
    from canon_ls.agent.events import directory

    event = payload.get("event")
    cwd = directory(payload.get("cwd")) or Path.cwd()
    session = string_or_empty(payload.get("session")) or "default"
    if event == "tool":
        return run_tool(cwd, payload.get("input"), session)
    if event == "status":
        return {"text": status(cwd, payload.get("surfaced"))}
    if event not in ("session_start", "session_compact", "prompt", "turn_end", "stop"):
        return None

    from canon_ls.agent.events import open_session
    from canon_ls.agent.session import prune_states

    reply: dict[str, Any] | None = None
    with open_session(AGENT, session, cwd, env=env) as hook:
        if hook is None:
            # No store: no surfacing, no state; only the tool, whose first write creates it.
            return {"tool": tool_spec()} if event == "session_start" else None
        if event == "session_start":
            source = SESSION_SOURCES.get(string_or_empty(payload.get("reason")), "resume")
            if source == "startup" and payload.get("resumed") is True:
                source = "resume"  # `pi --continue`: the context still holds what surfaced
            hook.session_start(source)
            reply = {"active": True, "tool": tool_spec(hook.options.lane)}
            if note := hook.held_back():  # canon.toml keys waiting for `canon trust`
                reply["notice"] = f"canon: {note}"
        elif event == "session_compact":
            if payload.get("presence") is True:  # what left the context is seen in it
                hook.record("session_compact", [{"decision": "compacted"}])
            else:  # a bridge that sends no projection: the compaction cycle
                hook.session_start("compact")
        elif event == "prompt":
            before = len(hook.traces)
            text = hook.user_prompt(string_or_empty(payload.get("prompt")))
            _mark(hook, before, text)
            reply = {"message": text} if text else None
        elif event == "turn_end":
            projection = payload.get("projection")
            if projection is not None and hook.options["resurface"]:
                from canon_ls.agent.presence import observe

                hook.record("turn_end", observe(hook.state, projection))
            before = len(hook.traces)
            reply = turn_end(hook, payload.get("calls"))
            _mark(hook, before, reply["message"] if reply else "")
        else:
            reason = hook.stop(payload.get("again") is True)
            reply = {"message": reason} if reason else None
    if event == "session_start" and payload.get("reason") == "startup":
        prune_states()
    return reply


def turn_end(hook: Any, calls: object) -> dict[str, Any] | None:
    """One message for everything this turn's calls surfaced (agent/batch.py)."""
    from canon_ls.agent.batch import MAX_CALLS, fit, packet

    if not isinstance(calls, list):
        return None
    batch: list[tuple[str, object, object]] = []
    for call in calls[:MAX_CALLS]:
        if isinstance(call, dict):
            tool = string_or_empty(call.get("tool"))
            batch.append(
                (TOOL_NAMES.get(tool, tool), call.get("input"), {"isError": call.get("isError")})
            )
    text, surfaced = packet(hook, batch, "this turn", event="turn_end")
    text = fit(hook, text)
    surfaced = [a for a in surfaced if a in hook.state.surfaced or a in hook.state.ranked]
    return {"message": text, "surfaced": surfaced} if text else None


def _mark(hook: Any, before: int, message: str) -> None:
    """Record how this reply's articles are found in the projection again (presence.py)."""
    from canon_ls.agent.presence import mark_lines, mark_read

    delivered, read = [], []
    for _event, decisions in hook.traces[before:]:
        for decision in decisions:
            kind, address = decision.get("decision"), str(decision.get("governing"))
            if kind in ("surfaced", "ranked"):
                delivered.append(address)
            elif kind in ("withdrawn", "written"):
                read.append(address)
    mark_lines(hook.state, delivered, message)
    for address in read:
        mark_read(hook.state, address)


def tool_spec(lane: bool = False) -> dict[str, Any]:
    """The `canon` tool as Pi registers it: the §6 schema and the MCP server's description."""
    from canon_ls.core import tool

    return {
        "description": tool.description(lane),
        "snippet": "Read and update the project memory (.canon/ articles and journal)",
        "guidelines": [tool.GUIDELINE],
        "parameters": tool.input_schema(),
    }


def store_of(cwd: Path) -> Any:
    """The project's store with its §13 options."""
    from canon_ls.core.storage.layout import find_project
    from canon_ls.core.storage.project import open_store

    return open_store(find_project(cwd))


def run_tool(cwd: Path, arguments: object, session: str) -> dict[str, Any]:
    """The canon tool for Pi: one §6 action, journal entries marked as Pi's."""
    from canon_ls.core import tool
    from canon_ls.core.storage.project import OptionError

    try:
        store = store_of(cwd)
    except OptionError as exc:
        return {"text": str(exc), "isError": True}
    result = tool.run(store, arguments, source=AGENT, session=session)
    return {"text": result.text, "isError": result.code != 0}


def status(cwd: Path, surfaced: object) -> str:
    """`/canon`: the `canon status` line, then the articles surfaced in this session."""
    from canon_ls.agent.cli_store import missing_store, status_line
    from canon_ls.core.storage.project import OptionError

    try:
        store = store_of(cwd)
    except OptionError as exc:
        return str(exc)
    if not store.exists():
        return missing_store(store)
    line = status_line(store)
    names = [a for a in surfaced if isinstance(a, str)] if isinstance(surfaced, list) else []
    if not names:
        return line + "\nNothing surfaced in this session yet."
    return line + f"\nSurfaced in this session ({len(names)}): " + ", ".join(names)
