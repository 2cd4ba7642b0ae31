"""The retrieval lane (SPEC §11.4)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from canon_ls.agent.session import SessionState
from canon_ls.agent.surfacing import article_line
from canon_ls.agent.tokens import is_canon_tool
from canon_ls.core.storage import layout

if TYPE_CHECKING:
    from canon_ls.agent.corpus import Corpus

MAX_RANKED = 3  # ranked articles per message
PROMPTS_KEPT = 3  # the newest prompts that make up the intent
PROMPT_CHARS = 1200  # a longer prompt keeps its first and last half of this
TURN_CALLS = 12  # this turn's newest tool calls in the intent
ARG_CHARS = 240  # of each call's first argument
HEADER = "canon project memory ranked for this task (no file you touched leads to these):"


def prompt_words(prompt: str) -> str:
    """The user's words of one prompt."""
    lines: list[str] = []
    inside = False
    for line in prompt.split("\n"):
        if line.startswith("canon ") and line.rstrip().endswith(":"):
            inside = True  # one of canon's headers: it and its `- ` lines are not the user's
            continue
        if inside and line.startswith("- "):
            continue
        inside = False
        lines.append(line)
    text = "\n".join(lines).strip()
    if len(text) > PROMPT_CHARS:
        half = PROMPT_CHARS // 2
        text = text[:half] + "\n" + text[-half:]
    return text


def call_words(tool_name: str, tool_input: object, project: str) -> str:
    """One tool call in the intent: its name and first argument (never its result)."""
    first: object = tool_input
    if isinstance(tool_input, dict):
        first = next(iter(tool_input.values()), "")
    if isinstance(first, list):
        first = " ".join(str(item) for item in first[:16])
    elif not isinstance(first, str):
        first = json.dumps(first, ensure_ascii=False, default=str)[:ARG_CHARS]
    first = first.replace(project.rstrip("/") + "/", "")[:ARG_CHARS]
    return f"{tool_name} {first}".strip()


def intent(state: SessionState) -> str:
    """The query: the newest prompts, then this turn's calls (newest first)."""
    return "\n".join([*state.prompts[:PROMPTS_KEPT], *state.turn[:TURN_CALLS]]).strip()


@dataclass(eq=False)
class Lane:
    """The lane's decisions for one hook event, over the session's state."""

    options: layout.Options
    state: SessionState
    trace: list[dict[str, Any]]

    def prompt(self, prompt: str) -> None:
        """The user's words become the newest intent; a new turn starts."""
        words = prompt_words(prompt)
        if words and self.state.prompts[:1] != [words]:  # the same words again: no new intent
            self.state.prompts = [words, *self.state.prompts][:PROMPTS_KEPT]
        self.state.turn = []

    def call(self, tool_name: str, tool_input: object) -> None:
        """A finished tool call of the main agent extends this turn's intent."""
        if not tool_name or is_canon_tool(tool_name):
            return
        words = call_words(tool_name, tool_input, str(self.options.project))
        self.state.turn = [words, *self.state.turn][:TURN_CALLS]

    def rank(self, trigger: str) -> str:
        """The ranked section for this message ('' for none)."""
        query = intent(self.state)
        if not query:
            return ""
        if query == self.state.intent:
            self.trace.append({"decision": "lane-unchanged", "trigger": trigger})
            return ""
        try:
            lines, decision = self._rank(query)
        except Exception as exc:  # a raising retriever loses this turn's ranking, nothing else
            error = f"{type(exc).__name__}: {exc}"[:300]
            self.trace.append({"decision": "lane-error", "trigger": trigger, "error": error})
            return ""
        self.state.intent = query
        text = "\n".join([HEADER, *lines]) if lines else ""
        decision["chars"] = len(text) + 1 if text else 0
        self.trace.append({"decision": "ranking", "trigger": trigger, **decision})
        for hit, line in zip(decision["sent"], lines, strict=True):
            self.trace.append(
                {"decision": "ranked", "trigger": trigger, "governing": hit["address"],
                 "score": hit["score"], "chars": len(line) + 1}
            )  # fmt: skip
        return text

    def _rank(self, query: str) -> tuple[list[str], dict[str, Any]]:
        from canon_ls.agent import corpus as lane_corpus

        corpus = lane_corpus.load(self.options)
        scores = _scores(corpus, query)
        standout = float(self.options["standout"])
        delivered = self.state.ranked
        in_context = set(delivered) | set(self.state.surfaced)
        candidates = sorted(
            ((a, s) for a, s in scores.items() if s > 0 and a not in in_context),
            key=lambda hit: (-hit[1], hit[0]),
        )
        # A member that gained a file at its address since the build is on the spine now.
        checked = 0
        while checked < min(len(candidates), MAX_RANKED + 1):
            address = candidates[checked][0]
            if not corpus.rule(address) and not corpus.off_spine(address):
                del candidates[checked]
                continue
            checked += 1
        competitor = candidates[MAX_RANKED][1] if len(candidates) > MAX_RANKED else 0.0
        # What this turn is about: the newest prompt and the arguments of this turn's calls.
        calls = [call.partition(" ")[2] for call in self.state.turn[:TURN_CALLS]]
        newest = "\n".join([*self.state.prompts[:1], *calls]).strip()
        fresh = scores if newest == query else _scores(corpus, newest)
        floor = 0.0
        if standout > 1:  # raised only by a delivered article the newest words still match
            floor = max((scores.get(a, 0.0) for a in delivered if a in fresh), default=0.0)
        bar = max(competitor, floor)
        threshold = standout * bar
        sent = [(a, s) for a, s in candidates[:MAX_RANKED] if s >= threshold and a in fresh]
        kept = [hit for hit in candidates if hit not in sent]
        lines = [article_line(a, a, corpus.capsule(a)) for a, _ in sent]
        for address, _ in sent:
            delivered.append(address)
            if address not in self.state.surfaced:
                self.state.surfaced.append(address)  # in the context now: the spine skips it
        decision: dict[str, Any] = {
            "standout": standout,
            "corpus": len(corpus),
            "matched": len(scores),
            "candidates": len(candidates),
            "competitor": _round(competitor),
            "floor": _round(floor),
            "threshold": _round(threshold),
            "ratio": _round(candidates[0][1] / bar) if candidates and bar > 0 else None,
            "sent": [{"address": a, "score": _round(s)} for a, s in sent],
            "worst_sent": _round(sent[-1][1]) if sent else None,
            "best_kept": _round(kept[0][1]) if kept else None,
            "near_miss": kept[0][0] if kept else None,
            "near_misses": [{"address": a, "score": _round(s)} for a, s in kept[:MAX_RANKED]],
            "intent_chars": len(query),
            "index": corpus.source,
        }
        return lines, decision


def _scores(corpus: Corpus, text: str) -> dict[str, float]:
    """BM25 of the words as written; by their stems only when no article holds any of them."""
    from canon_ls.core.retrieval.search import boosted, lane_stems, lane_tokens

    words = lane_tokens(text)
    return corpus.scores(boosted(words)) or corpus.scores(lane_stems(words))


def _round(score: float) -> float:
    return round(score, 4)
