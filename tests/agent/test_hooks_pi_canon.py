"""SPEC §11.3 with pi-canon in the same repository: its tool (`pi_canon`, as its MCP server
`pi-canon` names it in Claude Code and Codex, and as Pi's native tool) reads and writes the same
articles, so the hooks treat a call of it as a call of ours: a read withdraws the article's
pending line, a write settles the stop reminder, a write it rejected does not. Recorded
payloads with pi-canon's tool names, through the real `canon hook` process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hookrun import Hook, context, make_project, payload

from canon_ls.agent.tokens import is_canon_tool

PI_NAMES = ["mcp__pi-canon__pi_canon", "mcp__plugin_pi-canon_pi-canon__pi_canon", "pi_canon"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


@pytest.mark.parametrize("name", PI_NAMES)
def test_pi_canons_tool_names_are_the_canon_tool(name: str) -> None:
    assert is_canon_tool(name)


@pytest.mark.parametrize("name", ["pi_canonical", "mcp__pi-canon__pi_canon_x", "xpi_canon"])
def test_near_names_are_not(name: str) -> None:
    assert not is_canon_tool(name)


def _via(agent: str, name: str, project: Path, tool: str, **tool_input: Any) -> dict:
    data = payload(agent, name, project)
    data["tool_name"] = tool
    data["tool_input"] = tool_input
    return data


@pytest.mark.parametrize(
    ("agent", "tool"),
    [("claude-code", PI_NAMES[0]), ("claude-code", PI_NAMES[1]), ("codex", PI_NAMES[0])],
)
def test_a_read_through_pi_canon_withdraws_the_capsule(
    tmp_path: Path, project: Path, agent: str, tool: str
) -> None:
    hook = Hook(agent, tmp_path / "state")
    read = _via(agent, "post_tool_use_mcp_canon_read", project, tool, action="read",
                path="src/core/config.py")  # fmt: skip
    assert hook(read) is None
    touch = "post_tool_use_read" if agent == "claude-code" else "post_tool_use_bash_read"
    said = hook(payload(agent, touch, project))
    assert said is None or "Loads layered config" not in context(said)


def _write_src(project: Path, text: str) -> dict:
    """pi-canon's write of `src`, the article governing the edited src/a.py, answered `text`
    (the store's bytes stay: whether the call counts is the hook's own judgement)."""
    data = _via("claude-code", "post_tool_use_mcp_canon_write", project, PI_NAMES[1],
                action="write", path="src", capsule="Source root.")  # fmt: skip
    data["tool_response"] = [{"type": "text", "text": text}]
    return data


def test_a_write_through_pi_canon_settles_the_reminder(tmp_path: Path, project: Path) -> None:
    hook = Hook("claude-code", tmp_path / "state")
    hook(payload("claude-code", "post_tool_use_edit", project))
    hook(_write_src(project, "src is already current: this write matches the stored article."))
    assert hook(payload("claude-code", "stop", project)) is None


def test_a_write_pi_canon_rejected_does_not_settle(tmp_path: Path, project: Path) -> None:
    hook = Hook("claude-code", tmp_path / "state")
    hook(payload("claude-code", "post_tool_use_edit", project))
    hook(_write_src(project, "Write rejected by this store's schema.json:\n- body: required"))
    reply = hook(payload("claude-code", "stop", project))
    assert reply is not None and reply["decision"] == "block"


def test_pi_native_pi_canon_read_withdraws_the_line(tmp_path: Path, project: Path) -> None:
    """Pi with pi-canon installed: its native `pi_canon` read in the same turn."""
    hook = Hook("pi", tmp_path / "state")
    calls = [
        {"tool": "read", "input": {"path": "src/core/config.py"}, "isError": False},
        {
            "tool": "pi_canon",
            "input": {"action": "read", "path": "src/core/config"},
            "isError": False,
        },
    ]
    reply = hook({"event": "turn_end", "cwd": str(project), "session": "s-1", "calls": calls})
    assert reply is None or "Loads layered config" not in str(reply.get("message"))
