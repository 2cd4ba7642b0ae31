"""One message for a batch of finished tool calls (SPEC §11.3 Claude Code `PostToolBatch`, §11.6
Pi's turn): every call's address spine, the retrieval lane ranked once for the batch, and a line
withdrawn when the same batch read its article through the canon tool."""

from __future__ import annotations

from typing import Any

MAX_CALLS = 256  # tool calls considered per batch


def packet(
    hook: Any,
    calls: list[tuple[str, object, object]],
    noun: str,
    agent_id: str = "",
    event: str = "PostToolBatch",
) -> tuple[str, list[str]]:
    """(the batch's message, the addresses it delivered) for an `events.HookSession`; `calls`
    are (tool name, input, response) in the model's order; `noun` names the batch in the
    spine's header ("this turn"), `event` the trace's name for the ranking. A subagent's
    batch surfaces into the subagent and ranks nothing."""
    sections: dict[str, list[str]] = {}  # header -> delivered lines, in the order they came
    surfaced: list[str] = []
    withdrawn: set[str] = set()
    for tool, tool_input, response in calls[:MAX_CALLS]:
        before = len(hook.traces)
        text = hook.post_tool(tool, tool_input, response, agent_id, rank=False, event=event)
        for decision in _decisions(hook, before):
            if decision.get("decision") == "surfaced":
                surfaced.append(str(decision.get("governing")))
            elif decision.get("decision") == "withdrawn":
                withdrawn.add(str(decision.get("governing")))
        for header, lines in _sections(text):
            sections.setdefault(header, []).extend(lines)
    before = len(hook.traces)
    for header, lines in _sections("" if agent_id else hook.rank(event)):
        sections.setdefault(header, []).extend(lines)
    surfaced += [
        str(d.get("governing")) for d in _decisions(hook, before) if d.get("decision") == "ranked"
    ]
    parts = []
    for header, lines in sections.items():
        kept = [line for line in lines if not any(_names(line, a) for a in withdrawn)]
        if kept:
            parts.append("\n".join([header.replace("this call", noun), *kept]))
    return "\n".join(parts), [a for a in surfaced if a not in withdrawn]


def _decisions(hook: Any, since: int) -> list[dict[str, Any]]:
    return [d for _event, decisions in hook.traces[since:] for d in decisions]


def _sections(text: str) -> list[tuple[str, list[str]]]:
    """A hook reply's sections: each `canon …:` header with its `- …` lines (the spine, and
    the ranked articles of the lane when it is on)."""
    out: list[tuple[str, list[str]]] = []
    for line in text.split("\n"):
        if line.startswith("canon ") and line.endswith(":"):
            out.append((line, []))
        elif out and (line.startswith("- ") or not out[-1][1]):
            out[-1][1].append(line)
        elif out:
            out[-1][1][-1] += "\n" + line  # a line that continues the one before
    return out


def _names(line: str, address: str) -> bool:
    return line.startswith((f"- {address}:", f"- {address} ("))
