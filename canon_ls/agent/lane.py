"""The retrieval lane (SPEC §11.4): articles no file path reaches, ranked by what the work is about.

Opt-in (`retrieval = "lexical"`). The query is the *intent*: the user's recent prompts (newest
first, bounded, both ends of a long one kept) plus this turn's tool calls by name and first
argument; never tool results, model prose, nor canon's own delivered lines, so an article never
scores for having been shown. It ranks the corpus (agent/corpus.py: off-spine and `scope: rule`
articles) with core's BM25 and delivers through a gate:

- standout: an article rides only if it scores at least `standout` times the first competitor
  the cap would cut anyway (the 4th candidate). Scores of one query are only comparable with
  each other, so the cutoff is a ratio. SPEC words it for the best article; every rider must
  clear it here, so a decisive article does not carry two weak ones in with it.
- drained-store floor: with a cutoff in force (`standout` > 1; 1 is the measuring setting,
  no cutoff), the competitor is at least the best score this same query gives an article the
  lane already delivered, so the near-zero tail of a drained store never rides. Only a
  delivered article the newest words (the newest prompt and the arguments of this turn's
  calls) still match raises it: a new topic is not held back by what older prompts asked for;
- the newest words must call for a rider: an article only older prompts (or a tool's name)
  match does not ride (the old topic's tail stays out when a new topic lowers the floor);
- tokens (core/search.py `lane_tokens`): content words of four or more ASCII characters
  outside a fixed stopword list, and CJK bigrams; a prompt of function words ranks nothing;
- at most three ranked articles per message, best first; articles already in the context by
  address (surfaced, read or written this cycle) are not candidates and take no slot;
- each ranked article once per compaction cycle (`state.ranked`), and an intent unchanged
  since the last ranking delivers nothing;
- a retriever that raises loses that turn's ranking only: the hook still answers.

Trace (`CANON_TRACE`, one JSON line per decision; `canon stats` reads them through
agent/stats.py), besides the common `ts`, `agent`, `session`, `event` fields:

- `{"decision": "ranking", "trigger", "standout", "corpus", "matched", "candidates",
  "competitor", "floor", "threshold", "ratio", "sent", "worst_sent", "best_kept",
  "near_miss", "near_misses", "chars", "intent_chars", "index"}`: one ranking. `trigger` is
  `prompt` (the user's words), `tool` (a tool call) or `turn` (Pi's batched turn). `corpus`
  members, `matched` of them scoring above zero, `candidates` of those not yet in the context.
  `competitor` is the 4th candidate's score (0 with fewer), `floor` the drained-store floor
  (0 when none), `threshold` = `standout` x max(competitor, floor), `ratio` = best score / that
  maximum (null when it is 0). `sent` lists `{"address", "score"}` delivered, best first;
  `worst_sent` is the lowest score sent and `best_kept` the best score held back (null when
  none), `near_miss` the address held back with that score; `near_misses` are the best three
  candidates held back. `chars` counts every character the lane delivered in this reply
  (header and lines, with their newlines; 0 when nothing rode), `intent_chars` the query's
  length; `index` is `snapshot` (the persisted corpus held) or `built` (rebuilt by this hook).
  Scores are BM25, rounded to 4 decimals.
- `{"decision": "ranked", "trigger", "governing", "score", "chars"}`: one article delivered by
  rank (after its `ranking` line); `chars` is its line with the newline.
- `{"decision": "lane-unchanged", "trigger"}`: the intent had not changed; nothing ranked.
- `{"decision": "lane-error", "trigger", "error"}`: the retriever raised; nothing ranked.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from canon_ls.agent.session import SessionState
from canon_ls.agent.surfacing import article_line
from canon_ls.agent.tokens import is_canon_tool
from canon_ls.core import layout

if TYPE_CHECKING:
    from canon_ls.agent.corpus import Corpus

MAX_RANKED = 3  # ranked articles per message
PROMPTS_KEPT = 3  # the newest prompts that make up the intent
PROMPT_CHARS = 1200  # a longer prompt keeps its first and last half of this
TURN_CALLS = 12  # this turn's newest tool calls in the intent
ARG_CHARS = 240  # of each call's first argument
HEADER = "canon project memory ranked for this task (no file you touched leads to these):"


def prompt_words(prompt: str) -> str:
    """The user's words of one prompt: canon's own delivered sections left out, both ends of a
    long prompt kept (neither end alone is a reliable request)."""
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
    """One tool call in the intent: its name and first argument (never its result). Paths
    lose the project's own directory, which every call would share."""
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


def newest_intent(state: SessionState) -> str:
    """What this turn is about: the newest prompt and the arguments of this turn's calls (a
    tool's name, `Read`, says nothing about the task)."""
    calls = [call.partition(" ")[2] for call in state.turn[:TURN_CALLS]]
    return "\n".join([*state.prompts[:1], *calls]).strip()


class Lane:
    """The lane's decisions for one hook event, over the session's state."""

    def __init__(
        self, options: layout.Options, state: SessionState, trace: list[dict[str, Any]]
    ) -> None:
        self.options = options
        self.state = state
        self.trace = trace

    def prompt(self, prompt: str) -> None:
        """The user's words become the newest intent; a new turn starts."""
        words = prompt_words(prompt)
        if words and self.state.prompts[:1] != [words]:  # the same words again: no new intent
            self.state.prompts = [words, *self.state.prompts][:PROMPTS_KEPT]
        self.state.turn = []

    def call(self, tool_name: str, tool_input: object) -> None:
        """A finished tool call of the main agent extends this turn's intent (canon's own tool
        does not: reading an article is no reason to rank it)."""
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
        newest = newest_intent(self.state)
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
    from canon_ls.core.search import boosted, lane_stems, lane_tokens

    words = lane_tokens(text)
    return corpus.scores(boosted(words)) or corpus.scores(lane_stems(words))


def _round(score: float) -> float:
    return round(score, 4)
