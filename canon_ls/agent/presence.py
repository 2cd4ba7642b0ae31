"""Pi: an article counts as seen while its line is still in what the provider receives."""

from __future__ import annotations

import re
from typing import Any

from canon_ls.agent.session import SessionState

MARK_MIN = 24  # normalised characters: shorter lines are never expired
TAIL = 120  # normalised characters of a line's end that must still be present
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def fingerprint(text: str) -> str:
    return _NOT_ALNUM.sub(" ", text.lower()).strip()


def mark_lines(state: SessionState, addresses: list[str], message: str) -> None:
    """Remember how each delivered address's line can be found again."""
    lines = [line for line in message.split("\n") if line.startswith("- ")]
    for address in addresses:
        line = next((x for x in lines if x.startswith((f"- {address}:", f"- {address} ("))), "")
        printed = fingerprint(line)
        if len(printed) >= MARK_MIN:
            state.marks[address] = [fingerprint(address), printed[-TAIL:]]
        else:
            state.marks.pop(address, None)  # too short to test: seen for the session


def mark_read(state: SessionState, address: str) -> None:
    """The agent read or wrote the article through the tool: held to its address."""
    state.marks[address] = [fingerprint(address), ""]


def text_of(value: object) -> str:
    """Every string of a JSON value (the request's messages), in order, as one text."""
    out, stack = [], [value]
    while stack:  # a loop, not recursion: a deep projection is no RecursionError
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, (dict, list)):
            stack.extend(reversed(list(item.values()) if isinstance(item, dict) else item))
    return "\n".join(out)


def observe(state: SessionState, projection: object) -> list[dict[str, Any]]:
    """Forget every marked article no longer in the projection."""
    present = fingerprint(text_of(projection))
    departed = []
    for address, (ident, tail) in list(state.marks.items()):
        if ident in present and tail in present:
            continue
        del state.marks[address]
        state.surfaced = [a for a in state.surfaced if a != address]
        state.ranked = [a for a in state.ranked if a != address]
        departed.append({"decision": "departed", "governing": address})
    return departed
