"""SPEC §11.3: every way an agent touches a file delivers the governing capsule, once per
cycle, from the call's input: read, create (a file not there yet: its nearest ancestor's
article), edit, multi-edit, write-over, apply_patch, shell reads, grep/glob calls naming a
path, a notebook edit. One real `canon hook` process per cell over a real store, in each
host's own event shape (Claude Code `PostToolBatch`, Codex `PostToolUse`, Pi `turn_end`).
docs/AGENTS.md carries the matrix; the cells a host has no tool for are named there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hookrun import Hook, isolated_hook, make_project, payload

CONFIG = "- src/core/config: Loads layered config; env beats file."
NEW = "- src (governs src/core/new_mod.py): Source root, one module per concern."
NOTEBOOK = "- src (governs src/nb.ipynb): Source root, one module per concern."
SRC = "- src (governs src/core): Source root, one module per concern."
FILE = "src/core/config.py"
PATCH = "*** Begin Patch\n*** {verb} File: {path}\n@@\n-x = 1\n+x = 2\n*** End Patch\n"

SHELL_READS = {
    "cat": f"cat {FILE}",
    "sed -n": f"sed -n '1,5p' {FILE}",
    "head": f"head -n 20 {FILE}",
    "rg": f"rg -n 'load' {FILE}",
    "grep": f"grep -n load {FILE}",
    "git diff": f"git diff -- {FILE}",
    "git show": f"git show HEAD:{FILE}",
}

# (touch kind, tool name, tool input, expected line) per host; {p} is the project.
CLAUDE: list[tuple[str, str, dict[str, Any], str]] = [
    ("read", "Read", {"file_path": "{p}/" + FILE}, CONFIG),
    ("create", "Write", {"file_path": "{p}/src/core/new_mod.py", "content": "y = 2\n"}, NEW),
    ("edit", "Edit", {"file_path": "{p}/" + FILE, "old_string": "x", "new_string": "y"}, CONFIG),
    ("multi-edit", "MultiEdit",
     {"file_path": "{p}/" + FILE, "edits": [{"old_string": "x", "new_string": "y"}]}, CONFIG),
    ("write-over", "Write", {"file_path": "{p}/" + FILE, "content": "x = 3\n"}, CONFIG),
    *((f"shell {k}", "Bash", {"command": c}, CONFIG) for k, c in SHELL_READS.items()),
    ("grep", "Grep", {"pattern": "load", "path": "{p}/" + FILE}, CONFIG),
    ("glob", "Glob", {"pattern": "*.py", "path": "{p}/src/core"}, SRC),
    ("notebook edit", "NotebookEdit", {"notebook_path": "{p}/src/nb.ipynb", "new_source": "1"},
     NOTEBOOK),
]  # fmt: skip
CODEX: list[tuple[str, str, dict[str, Any], str]] = [
    ("read", "Bash", {"command": f"cat {FILE}"}, CONFIG),
    ("create", "apply_patch",
     {"command": PATCH.format(verb="Add", path="src/core/new_mod.py")}, NEW),
    ("edit", "apply_patch", {"command": PATCH.format(verb="Update", path=FILE)}, CONFIG),
    ("write-over", "Bash", {"command": f"printf 'x = 3\\n' > {FILE}"}, CONFIG),
    ("apply_patch", "apply_patch", {"command": PATCH.format(verb="Update", path=FILE)}, CONFIG),
    *((f"shell {k}", "Bash", {"command": c}, CONFIG) for k, c in SHELL_READS.items()),
    ("grep", "Bash", {"command": "rg -n load src/core"}, SRC),
    ("glob", "Bash", {"command": "find src/core -name '*.py'"}, SRC),
]  # fmt: skip
PI: list[tuple[str, str, dict[str, Any], str]] = [
    ("read", "read", {"path": FILE}, CONFIG),
    ("create", "write", {"path": "src/core/new_mod.py", "content": "y = 2\n"}, NEW),
    ("edit", "edit", {"path": FILE, "oldText": "x", "newText": "y"}, CONFIG),
    ("multi-edit", "edit", {"path": FILE, "edits": [{"oldText": "x", "newText": "y"}]}, CONFIG),
    ("write-over", "write", {"path": FILE, "content": "x = 3\n"}, CONFIG),
    *((f"shell {k}", "bash", {"command": c}, CONFIG) for k, c in SHELL_READS.items()),
    ("grep", "grep", {"pattern": "load", "path": FILE}, CONFIG),
    ("glob", "find", {"pattern": "*.py", "path": "src/core"}, SRC),
    ("ls", "ls", {"path": "src/core"}, SRC),
]  # fmt: skip
CELLS = [("claude-code", *c) for c in CLAUDE] + [("codex", *c) for c in CODEX]
CELLS += [("pi", *c) for c in PI]


def fill(value: Any, project: Path) -> Any:
    if isinstance(value, str):
        return value.replace("{p}", str(project))
    if isinstance(value, list):
        return [fill(v, project) for v in value]
    return {k: fill(v, project) for k, v in value.items()} if isinstance(value, dict) else value


def touch(hook: Hook, agent: str, project: Path, tool: str, tool_input: dict[str, Any]) -> str:
    """The context one call's hook puts before the model ('' for none)."""
    if agent == "pi":
        calls = [{"tool": tool, "input": tool_input, "isError": False}]
        reply = hook({"event": "turn_end", "cwd": str(project), "session": "s", "calls": calls})
        return str(reply["message"]) if reply else ""
    if agent == "codex":
        data = payload("codex", "post_tool_use_bash_read", project)
        data.update(tool_name=tool, tool_input=tool_input, tool_response="Exit code: 0\n")
    else:
        data = payload("claude-code", "post_tool_batch", project)
        call = {"tool_name": tool, "tool_input": tool_input, "tool_response": "ok"}
        data["tool_calls"] = [{**call, "tool_use_id": "t"}]
    reply = hook(data)
    return str(reply["hookSpecificOutput"]["additionalContext"]) if reply else ""


@pytest.mark.parametrize(
    ("agent", "kind", "tool", "tool_input", "line"),
    CELLS,
    ids=[f"{c[0]}-{c[1]}" for c in CELLS],
)
def test_spec_11_3_every_touch_delivers_once(
    tmp_path: Path, agent: str, kind: str, tool: str, tool_input: dict[str, Any], line: str
) -> None:
    project = make_project(tmp_path / "proj")
    (project / "src/nb.ipynb").write_text("{}", "utf-8")
    if kind == "create" and agent != "claude-code":  # the file is there once the call is in
        (project / "src/core/new_mod.py").write_text("y = 2\n", "utf-8")
    hook = isolated_hook(agent, tmp_path) if agent != "pi" else Hook("pi", tmp_path / "state")
    tool_input = fill(tool_input, project)
    assert line in touch(hook, agent, project, tool, tool_input).splitlines()
    assert line not in touch(hook, agent, project, tool, tool_input)  # once per cycle
