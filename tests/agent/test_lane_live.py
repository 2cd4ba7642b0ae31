"""The retrieval lane (SPEC §11.4) with the real Claude Code and Codex CLIs against fake model APIs.

`retrieval = "lexical"` in canon.toml: a prompt about money rounding brings the `scope: rule`
article on money rounding (no file leads to it) into the model's next request, exactly once
over the session, although the agent then works on files. The requests the fake APIs receive
are what reached the model.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fake_anthropic import Recorded, text, tool_use
from fake_openai import Request, message, shell
from hookrun import article, canon_command, make_project
from live_agents import run_claude, run_codex
from test_claude_code import claude_bin  # noqa: F401 - the fixture is shared
from test_codex import codex_bin  # noqa: F401 - the fixture is shared

pytestmark = [pytest.mark.agent_cli, pytest.mark.timeout(1500)]

RULE = "Round money half-even to cents, only at the final step."
PROMPT = "The invoice total is off by a cent. How should money rounding work here?"


def lane_project(root: Path, agent: str) -> Path:
    """make_project with the lane on, the rule, and off-spine notes on other topics."""
    project = make_project(root)
    (project / "canon.toml").write_text('retrieval = "lexical"\n')
    article(project, "conventions/money-rounding", RULE,
            "Money rounding: round an invoice total once; never round intermediate sums.",
            scope="rule")  # fmt: skip
    for topic in ("logging", "errors", "naming", "tests"):
        article(project, f"notes/{topic}", f"How we do {topic}.", f"Our {topic} practice.")
    done = subprocess.run([*canon_command(), "init", agent], cwd=project,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return project


def lane_decisions(trace: Path) -> list[dict]:
    lines = [json.loads(x) for x in trace.read_text().splitlines()] if trace.exists() else []
    return [d for d in lines if d["decision"] in ("ranking", "ranked")]


def test_live_claude_code_a_rule_arrives_with_the_prompt_once(
    claude_bin: Path,  # noqa: F811 - the shared fixture
    tmp_path: Path,
) -> None:
    project = lane_project(tmp_path / "proj", "claude-code")
    steps = [
        tool_use("Read", {"file_path": str(project / "src/a.py")}, "toolu_01"),
        tool_use("Read", {"file_path": str(project / "src/core/config.py")}, "toolu_02"),
        text("Rounded once, at the end."),
    ]

    def script(turn: int, rec: Recorded) -> list[dict]:
        return steps[turn] if turn < len(steps) else text("Nothing left.")

    run, requests, trace = run_claude(
        claude_bin, project, tmp_path, script, PROMPT, "--allowedTools", "Read"
    )
    assert len(requests) == len(steps), [r.flat()[-300:] for r in requests]
    assert RULE in requests[0].flat()  # with the prompt, before the model's first answer
    assert requests[-1].flat().count(RULE) == 1  # and never again in the session
    sent = [d["governing"] for d in lane_decisions(trace) if d["decision"] == "ranked"]
    assert sent == ["conventions/money-rounding"]


def test_live_codex_a_rule_arrives_with_the_prompt_once(
    codex_bin: Path,  # noqa: F811 - the shared fixture
    tmp_path: Path,
) -> None:
    project = lane_project(tmp_path / "proj", "codex")
    steps = [
        shell("cat src/a.py", "call_1"),
        shell("cat src/core/config.py", "call_2"),
        message("Rounded once, at the end."),
    ]

    def script(turn: int, req: Request) -> list[dict]:
        return steps[turn] if turn < len(steps) else message("Nothing left.")

    run, requests, trace = run_codex(codex_bin, project, tmp_path, script, PROMPT)
    assert len(requests) == len(steps), run.stderr[-3000:]
    assert RULE in requests[0].flat()
    assert requests[-1].flat().count(RULE) == 1
    sent = [d["governing"] for d in lane_decisions(trace) if d["decision"] == "ranked"]
    assert sent == ["conventions/money-rounding"]
