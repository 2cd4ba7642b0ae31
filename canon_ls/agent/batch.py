"""One message for a batch of finished tool calls."""

from __future__ import annotations

import json
import os
from typing import Any

MAX_CALLS = 256  # tool calls considered per batch
# What each host shows the model of one hook reply inline (SPEC §11.3; docs/AGENTS.md holds
# the same table): (unit, limit). Past it Claude Code and Codex keep a preview and file the
# rest where the model is not told to look; Pi passes a message whole, so its own limit for
# a tool's output (50 KB) stands in.
REPLY_LIMITS = {
    "claude-code": ("json", 10_000),  # characters of the whole hook output (its JSON)
    "codex": ("bytes", 10_000),  # additionalContext: 2,500 tokens, counted as bytes / 4
    "pi": ("bytes", 51_200),
}
_ROOM = 400  # the reply's JSON around the text, and the closing line


def packet(
    hook: Any,
    calls: list[tuple[str, object, object]],
    noun: str,
    agent_id: str = "",
    event: str = "PostToolBatch",
) -> tuple[str, list[str]]:
    """(the batch's message, the addresses it delivered) for an `events.HookSession`."""
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
    """A hook reply's sections: each `canon …:` header with its `- …` lines."""
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


def fit(hook: Any, text: str, agent_id: str = "") -> str:
    """`text` cut to its host's inline limit (REPLY_LIMITS), whole lines kept in order."""
    unit, limit = REPLY_LIMITS.get(hook.agent, ("bytes", 10_000))

    def size(line: str) -> int:
        return len(json.dumps(line, ensure_ascii=False)) if unit == "json" else len(line.encode())

    if size(text) + _ROOM <= limit:
        return text
    parts: list[str] = []
    used, cut = 0, list[str]()
    for header, lines in _sections(text):
        for line in lines:
            cost = size(line) + (0 if header in parts else size(header))
            if cut or used + cost + _ROOM > limit:
                cut.append(line[2:].partition(": ")[0].partition(" (")[0])
                continue
            parts += [] if header in parts else [header]
            parts.append(line)
            used += cost
    if not cut:
        return "\n".join(parts)
    gone = set(cut)
    seen = hook.state.subagents.get(agent_id, []) if agent_id else hook.state.surfaced
    seen[:] = [a for a in seen if a not in gone]
    hook.state.ranked = [a for a in hook.state.ranked if a not in gone]
    for _event, decisions in hook.traces:
        for d in decisions:
            if d.get("governing") in gone and d.get("decision") in ("surfaced", "ranked"):
                d["decision"] = "deferred"
    where = os.path.commonpath(cut)
    listing = f'action "map", path "{where}"' if where else 'action "map"'
    parts.append(
        f"- ... and {len(cut)} more not shown here (each surfaces on your next touch of its "
        f"files); list them with the canon tool ({listing})."
    )
    fitted = "\n".join(parts)
    hook.state.stats["chars"] = hook.state.stats.get("chars", 0) + len(fitted) - len(text)
    return fitted
