"""`canon stats` (SPEC §13): what the hooks put in the agent's context, read back per project,
after real `canon hook …` runs (the totals live in the session state, not in CANON_TRACE)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hookrun import Hook, article, canon_command, make_project, payload


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


def _hook(tmp_path: Path, agent: str) -> Hook:
    return Hook(agent, tmp_path / "state", None, tmp_path / "config")  # no CANON_TRACE


def stats(hook: Hook, project: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*canon_command(), "stats", *flags], cwd=project, env=hook.env(), capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip


def _context(reply: dict[str, Any] | None) -> str:
    return reply["hookSpecificOutput"]["additionalContext"] if reply else ""


def _session(hook: Hook, project: Path, session: str) -> int:
    """A short Claude Code session; the characters its replies put in the context."""
    said = 0
    hook(payload("claude-code", "session_start_startup", project, session))
    prompt = payload("claude-code", "user_prompt_submit", project, session)
    prompt["prompt"] = "remember: config is layered, see src/core/config.py"
    said += len(_context(hook(prompt)))
    for path, tool in (("src/core/config.py", "Read"), ("src/a.py", "Read"), ("src/a.py", "Edit")):
        data = payload("claude-code", "post_tool_use_read", project, session)
        data["tool_name"], data["tool_input"] = tool, {"file_path": str(project / path)}
        said += len(_context(hook(data)))
    stop = hook(payload("claude-code", "stop", project, session))
    assert stop is not None
    return said + len(stop["reason"])


def test_stats_report_what_the_sessions_cost(tmp_path: Path, project: Path) -> None:
    hook = _hook(tmp_path, "claude-code")
    said = _session(hook, project, "s-1") + _session(hook, project, "s-2")
    other = make_project(tmp_path / "other")  # another project's session is not counted
    _session(hook, other, "s-3")

    done = stats(hook, project, "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    totals = data["totals"]
    assert totals["sessions"] == 2 and totals["chars"] == said
    assert totals["spine"] == 4 and totals["rank"] == 0
    assert totals["captures"] == 2 and totals["reminders"] == 2
    assert totals["chars_spine"] + totals["chars_capture"] + totals["chars_remind"] <= said
    assert [s["session"] for s in data["sessions"]] == ["s-1", "s-2"]
    assert {s["agent"] for s in data["sessions"]} == {"claude-code"}
    assert list(data["files"]) == ["src/a.py", "src/core/config.py"]  # most characters first
    assert data["files"]["src/core/config.py"] == 2 * len(
        "- src/core/config: Loads layered config; env beats file.\n"
    )
    assert data["by_spine"] == {"src": 2, "src/core/config": 2}
    assert data["lane"]["rankings"] == 0

    text = stats(hook, project).stdout
    assert text.startswith(f"2 agent sessions in {project} put {said:,} characters")
    assert "in the agent's context (8 replies):" in text
    assert "by address: 4 articles" in text and "captures:   2 notes" in text
    assert "src/core/config.py" in text and "claude-code s-2" in text


def test_stats_without_sessions_is_one_sentence(tmp_path: Path, project: Path) -> None:
    hook = _hook(tmp_path, "claude-code")
    done = stats(hook, project)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.count("\n") == 1 and done.stdout.startswith("No agent session")
    assert str(tmp_path / "state" / "canon") in done.stdout
    data = json.loads(stats(hook, project, "--format", "json").stdout)
    assert data["totals"]["sessions"] == 0 and data["sessions"] == []


def test_pi_sessions_count_too_and_garbage_state_is_skipped(tmp_path: Path, project: Path) -> None:
    pi = _hook(tmp_path, "pi")
    pi({"event": "session_start", "cwd": str(project), "session": "p", "reason": "startup"})
    read = {"tool": "read", "input": {"path": "src/a.py"}, "isError": False}
    reply = pi({"event": "turn_end", "cwd": str(project), "session": "p", "calls": [read]})
    assert reply is not None
    (tmp_path / "state" / "canon" / "claude-code-bad.json").write_text("{not json")
    (tmp_path / "state" / "canon" / "codex-odd.json").write_text('{"project": 3, "stats": []}')
    data = json.loads(stats(pi, project, "--format", "json").stdout)
    [session] = data["sessions"]
    assert session["agent"] == "pi" and session["spine"] == 1
    assert session["chars"] == len(reply["message"])


def test_stats_count_the_lane(tmp_path: Path, project: Path) -> None:
    """With `retrieval = "lexical"`: articles by rank, their characters, the rankings and the
    near misses (a ranking that held an article back and sent nothing)."""
    (project / "canon.toml").write_text('retrieval = "lexical"\n')
    rule = "Round money half-even to cents, only at the final step."
    article(project, "conventions/money-rounding", rule, "Money rounding: once, at the total.",
            scope="rule")  # fmt: skip
    for topic in ("logging", "errors", "naming", "tests"):
        article(project, f"notes/{topic}", f"How we do {topic}.", f"Our {topic} practice.")
    hook = _hook(tmp_path, "claude-code")
    said = 0
    for words in ("How should the invoice total handle money rounding?",
                  "What about logging errors in tests and naming?"):  # fmt: skip
        ask = payload("claude-code", "user_prompt_submit", project, "s-1", prompt=words)
        said += len(_context(hook(ask)))
    data = json.loads(stats(hook, project, "--format", "json").stdout)
    totals = data["totals"]
    assert totals["rank"] >= 1 and totals["chars"] == said
    assert data["by_rank"]["conventions/money-rounding"] == 1
    lane = data["lane"]
    assert lane["rankings"] == 2 and lane["worst_sent"] is not None
    assert [m["address"] for m in lane["near_misses"]] == ["notes/errors"]
    text = stats(hook, project).stdout
    assert "Retrieval lane: 2 rankings" in text and "conventions/money-rounding" in text
