"""Real Claude Code (pinned from npm) loads the rule file `canon export claude-rules` wrote.

No hooks are installed (`canon init` is not run): the project only has a store and the
generated `.claude/rules/canon-*.md`. `claude -p` runs against the scripted loopback Messages
API (fake_anthropic.py); what the fake API receives is what reached the model. Claude Code
loads a rule with `paths:` when the agent reads a file that matches, so the capsule must be
absent from the first request and present after the Read of a governed file.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fake_anthropic import Recorded, text, tool_use
from hookrun import canon_command
from live_agents import run_claude
from npm_agents import CLAUDE_CODE, checked, install

pytestmark = [pytest.mark.agent_cli, pytest.mark.timeout(1500)]

CAPSULE = "Handlers validate input with zod; errors are JSON problem documents."
OTHER = "The worker drains the queue in batches of fifty."


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    return checked(install(*CLAUDE_CODE), CLAUDE_CODE[1])


def _canon(project: Path, *args: str) -> None:
    done = subprocess.run([*canon_command(), *args], cwd=project,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_exported_rule_reaches_the_model_when_a_governed_file_is_read(
    claude_bin: Path, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    for rel in ("src/api/users.ts", "src/worker/queue.ts", "README.md"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text("export const x = 1;\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    _canon(project, "write", "src/api", "--capsule", CAPSULE, "--body", "# API\n")
    _canon(project, "write", "src/worker", "--capsule", OTHER, "--body", "# Worker\n")
    _canon(project, "export", "claude-rules")
    assert (project / ".claude/rules/canon-src-api.md").is_file()

    steps = [
        tool_use("Read", {"file_path": str(project / "README.md")}, "toolu_01"),
        tool_use("Read", {"file_path": str(project / "src/api/users.ts")}, "toolu_02"),
        text("Done."),
    ]

    def script(turn: int, rec: Recorded) -> list[dict]:
        return steps[turn] if turn < len(steps) else text("Nothing left.")

    run, requests, _trace = run_claude(
        claude_bin, project, tmp_path, script, "Look at the API handlers.",
        "--allowedTools", "Read",
    )  # fmt: skip
    assert not json.loads(run.stdout).get("is_error"), run.stdout
    assert len(requests) == len(steps), [r.flat()[-300:] for r in requests]
    assert CAPSULE not in requests[0].flat() and CAPSULE not in requests[1].flat()
    assert CAPSULE in requests[2].flat()  # loaded with the Read of src/api/users.ts
    assert ".canon/articles/src/api.md" in requests[2].flat()
    assert OTHER not in requests[2].flat()  # the worker's rule matches no file that was read
