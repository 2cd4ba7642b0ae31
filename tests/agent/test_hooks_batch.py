"""Claude Code's `PostToolBatch` through the real `canon hook claude-code` (SPEC §11.3): one
reply per batch of parallel calls, carrying every capsule the batch touched. The payload shape
was recorded from the pinned Claude Code (test_claude_code.py runs the real CLI)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hookrun import Hook, article, isolated_hook, make_project, payload

HEADER = "canon project memory for the files these calls touched:"
CONFIG = "- src/core/config: Loads layered config; env beats file."
SRC = "- src (governs src/a.py): Source root, one module per concern."


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


@pytest.fixture
def claude(tmp_path: Path) -> Hook:
    return isolated_hook("claude-code", tmp_path)


def batch(project: Path, *calls: dict[str, Any], **extra: Any) -> dict[str, Any]:
    data = payload("claude-code", "post_tool_batch", project, **extra)
    if calls:
        data["tool_calls"] = list(calls)
    return data


def call(name: str, tool_input: dict[str, Any], response: object = "ok") -> dict[str, Any]:
    return {
        "tool_name": name,
        "tool_input": tool_input,
        "tool_use_id": "t",
        "tool_response": response,
    }


def said(reply: dict[str, Any] | None) -> str:
    if reply is None:
        return ""
    assert reply["hookSpecificOutput"]["hookEventName"] == "PostToolBatch"
    return str(reply["hookSpecificOutput"]["additionalContext"])


def test_one_packet_for_the_batch_each_capsule_once(claude: Hook, project: Path, tmp_path: Path):
    assert said(claude(batch(project))).splitlines() == [HEADER, CONFIG, SRC]
    assert claude(batch(project)) is None  # once per cycle
    trace = [json.loads(x) for x in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert [d["event"] for d in trace if d["decision"] == "surfaced"] == ["PostToolBatch"] * 2


def test_a_read_in_the_same_batch_withdraws_and_failed_edits_arm_nothing(
    claude: Hook, project: Path
) -> None:
    """The canon tool read the config article in the same batch: its line is withdrawn. An
    edit whose result is Claude Code's `<tool_use_error>` changed nothing: no reminder."""
    config, module = str(project / "src/core/config.py"), str(project / "src/a.py")
    calls = [
        call("Read", {"file_path": config}),
        call("mcp__canon__canon", {"action": "read", "path": "src/core/config"}),
        call("Edit", {"file_path": module, "old_string": "y", "new_string": "z"},
             "<tool_use_error>String to replace not found in file.</tool_use_error>"),
    ]  # fmt: skip
    assert said(claude(batch(project, *calls))).splitlines() == [HEADER, SRC]
    assert claude(payload("claude-code", "stop", project)) is None
    edit = call("Edit", {"file_path": module, "old_string": "x", "new_string": "y"},
                "The file has been updated successfully.")  # fmt: skip
    claude(batch(project, edit))
    reply = claude(payload("claude-code", "stop", project))
    assert reply is not None and "- src (you changed src/a.py)" in reply["reason"]


def test_the_lane_ranks_once_per_batch(claude: Hook, project: Path, tmp_path: Path) -> None:
    (project / "canon.toml").write_text('retrieval = "lexical"\n')
    rule = "Round money half-even to cents, only at the final step."
    article(project, "conventions/money-rounding", rule, "Money rounding of totals.", scope="rule")
    grep = call("Grep", {"pattern": "money rounding", "path": "src"})
    text = said(
        claude(batch(project, grep, call("Read", {"file_path": str(project / "src/a.py")})))
    )
    assert text.splitlines() == [
        HEADER,
        "- src: Source root, one module per concern.",  # the Grep's path names src itself
        "canon project memory ranked for this task (no file you touched leads to these):",
        f"- conventions/money-rounding: {rule}",
    ]
    trace = [json.loads(x) for x in (tmp_path / "trace.jsonl").read_text().splitlines()]
    rankings = [d for d in trace if d["decision"] == "ranking"]
    assert len(rankings) == 1 and rankings[0]["event"] == "PostToolBatch"


def test_a_subagents_batch_surfaces_into_the_subagent(claude: Hook, project: Path) -> None:
    assert said(claude(batch(project, agent_id="a-1"))).splitlines() == [HEADER, CONFIG, SRC]
    assert said(claude(batch(project))).splitlines() == [HEADER, CONFIG, SRC]  # main: not yet


@pytest.mark.parametrize("calls", [None, "x", [], [1, "a"], [{"tool_name": 3}]])
def test_odd_batches_say_nothing(claude: Hook, project: Path, calls: object) -> None:
    data = batch(project)
    data["tool_calls"] = calls
    assert claude(data) is None
