"""The hook decisions of every agent: one call per agent event, text out (SPEC §11.3–§11.5)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from canon_ls.agent import stats
from canon_ls.agent.session import SessionState, session_state, write_trace
from canon_ls.agent.surfacing import NEW_CYCLE, Resolver, Surfacer
from canon_ls.core.storage import layout


def directory(value: object) -> Path | None:
    """A hook input's working directory: an absolute path to an existing directory, else None."""
    if isinstance(value, str) and value and os.path.isabs(value) and os.path.isdir(value):
        return Path(os.path.normpath(value))
    return None


@dataclass(eq=False)
class HookSession:
    """The decisions for one agent session, over its locked state (see `open_session`)."""

    agent: str
    session: str
    options: layout.Options
    resolver: Resolver
    state: SessionState
    traces: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)  # event, decisions

    def __post_init__(self) -> None:
        self.state.project = str(self.options.project)

    def record(self, event: str, decisions: list[dict[str, Any]]) -> None:
        """Keep an event's decisions for the trace and `canon stats`."""
        if decisions:
            self.traces.append((event, decisions))

    def _said(self, text: str) -> str:
        """A reply going into the agent's context, counted for `canon stats`."""
        stats.delivered(self.state.stats, text)
        return text

    def session_start(self, source: str) -> str:
        """startup/clear/compact/fork start a compaction cycle; resume keeps it. Says nothing."""
        surfacer = Surfacer(self.resolver, self.state)
        surfacer.session_start(source, resurface=bool(self.options["resurface"]))
        surfacer.trace += [{"decision": "settings", "problem": p} for p in self.options.problems]
        if self._lane_on() and source in NEW_CYCLE:  # files may have come and gone: rebuild
            from canon_ls.agent import corpus

            try:
                corpus.load(self.options, deep=True)
            except Exception as exc:  # the turn goes on; the next ranking reports its own failure
                error = {"decision": "lane-error", "trigger": "cycle", "error": repr(exc)[:300]}
                surfacer.trace.append(error)
        self.record("SessionStart", surfacer.trace)
        return ""

    def held_back(self) -> str:
        """The sentence for canon.toml keys ignored until `canon trust` ('' when none)."""
        issues = self.options.issues
        return next((p.sentence for p in issues if p.code == layout.UNTRUSTED_OPTION), "")

    def user_prompt(self, prompt: str) -> str:
        """The user's words (quick capture, the lane's intent): additional context, or ''."""
        parts = [self._capture(prompt), self._rank("prompt", "UserPromptSubmit", prompt)]
        return self._said("\n".join(part for part in parts if part))

    def _capture(self, prompt: str) -> str:
        from canon_ls.agent.capture import capture

        line, decision = capture(self, prompt)
        if decision is not None:
            self.record("UserPromptSubmit", [decision])
        return line

    # -- the retrieval lane (SPEC §11.4, agent/lane.py)

    def _lane_on(self) -> bool:
        """The lane ranks when it is configured and surfacing is not silenced (§11.3)."""
        return bool(self.options.lane and self.options["surface"])

    def rank(self, event: str) -> str:
        """The lane's section for a message after a batch of tool calls ('' for none)."""
        return self._said(self._rank("turn" if event == "turn_end" else "tool", event))

    def _rank(self, trigger: str, event: str, prompt: str | None = None) -> str:
        """What the lane ranks now; a `prompt` first becomes the newest intent."""
        if not self._lane_on():
            return ""
        from canon_ls.agent.lane import Lane

        trace: list[dict[str, Any]] = []
        lane = Lane(self.options, self.state, trace)
        if prompt is not None:
            lane.prompt(prompt)
        text = lane.rank(trigger)
        self.record(event, trace)
        return text

    def post_tool(
        self,
        tool_name: str,
        tool_input: object,
        tool_response: object,
        agent_id: str = "",
        *,
        rank: bool = True,
        event: str = "PostToolUse",
    ) -> str:
        """A finished call's address spine, then (lane on) what its intent newly ranks; or ''."""
        if not self.options["surface"]:
            return ""
        surfacer = Surfacer(self.resolver, self.state, agent_id)
        text = surfacer.post_tool(tool_name, tool_input, tool_response)
        self.record(event, surfacer.trace)
        if agent_id or not self._lane_on():
            return self._said(text)
        from canon_ls.agent.lane import Lane

        Lane(self.options, self.state, []).call(tool_name, tool_input)
        ranked = self._rank("tool", "PostToolUse") if rank else ""
        return self._said("\n".join(part for part in (text, ranked) if part))

    def stop(self, stop_hook_active: bool) -> str:
        """The reminder to update the articles of changed files (the block reason), or ''."""
        surfacer = Surfacer(self.resolver, self.state)
        reason = surfacer.stop(stop_hook_active) if self.options["surface"] else ""
        self.record("Stop", surfacer.trace)
        return self._said(reason)


@contextlib.contextmanager
def open_session(
    agent: str,
    session: str,
    cwd: Path,
    *,
    project: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Iterator[HookSession | None]:
    """The session's decisions under its lock, or None where the project has no store."""
    env = os.environ if env is None else env
    options = layout.resolve(layout.find_project(project or cwd), env=env)
    resolver = Resolver(options, cwd)
    if not resolver.active():
        yield None
        return
    with session_state(agent, session or "default") as state:
        hook = HookSession(agent, session or "default", options, resolver, state)
        yield hook
        for _event, decisions in hook.traces:
            stats.account(state.stats, agent, hook.session, decisions)
    for event, decisions in hook.traces:
        write_trace(env.get("CANON_TRACE", ""), agent, hook.session, event, decisions)
