"""Real agents (pinned from npm) load the rule files `canon export` wrote, with no hooks.

The project only has a store and the generated files (`canon init` is not run). Each agent runs
against the scripted loopback Messages API (fake_anthropic.py): Claude Code through
ANTHROPIC_BASE_URL, the GitHub Copilot CLI through its own-provider variables with
COPILOT_OFFLINE=true (no GitHub login). What the fake API receives is what reached the model.
Both load a path-scoped rule when the agent reads a matching file, so the capsule must be
absent until the Read of a governed file and present after it, and the rule of a directory the
agent never touched must never arrive.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropic, Recorded, text, tool_use
from hookrun import canon_command
from live_agents import agent_path, run_claude
from npm_agents import CLAUDE_CODE, COPILOT_CLI, checked, install

pytestmark = [pytest.mark.agent_cli, pytest.mark.timeout(1500)]

CAPSULE = "Handlers validate input with zod; errors are JSON problem documents."
OTHER = "The worker drains the queue in batches of fifty."


def _project(root: Path, host: str) -> Path:
    for rel in ("src/api/users.ts", "src/worker/queue.ts", "README.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("export const x = 1;\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for args in (
        ("write", "src/api", "--capsule", CAPSULE, "--body", "# API\n"),
        ("write", "src/worker", "--capsule", OTHER, "--body", "# Worker\n"),
        ("export", host),
    ):
        done = subprocess.run([*canon_command(), *args], cwd=root,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    return root


def _script(read: str, project: Path) -> Callable[[int, Recorded], list[dict]]:
    steps = [
        tool_use(read, {"file_path" if read == "Read" else "path": str(project / rel)}, f"t{i}")
        for i, rel in enumerate(("README.md", "src/api/users.ts"))
    ] + [text("Done.")]
    return lambda turn, rec: steps[turn] if turn < len(steps) else text("Nothing left.")


def _assert_loaded_on_read(requests: list[Recorded]) -> None:
    assert len(requests) == 3, [r.flat()[-300:] for r in requests]
    assert CAPSULE not in requests[0].flat() and CAPSULE not in requests[1].flat()
    assert CAPSULE in requests[2].flat()  # loaded with the read of src/api/users.ts
    assert "# API" in requests[2].flat()  # the article's text, not only its capsule
    assert OTHER not in requests[2].flat()  # the worker's rule matches no file that was read


def test_claude_code_loads_the_exported_rule_on_a_matching_read(tmp_path: Path) -> None:
    claude_bin = checked(install(*CLAUDE_CODE), CLAUDE_CODE[1])
    project = _project(tmp_path / "proj", "claude-rules")
    assert (project / ".claude/rules/canon-src-api.md").is_file()
    run, requests, _trace = run_claude(
        claude_bin, project, tmp_path, _script("Read", project), "Look at the API handlers.",
        "--allowedTools", "Read",
    )  # fmt: skip
    assert not json.loads(run.stdout).get("is_error"), run.stdout
    _assert_loaded_on_read(requests)


def test_copilot_cli_loads_the_exported_instructions_on_a_matching_view(tmp_path: Path) -> None:
    copilot_bin = checked(install(*COPILOT_CLI), COPILOT_CLI[1])
    project = _project(tmp_path / "proj", "copilot")
    assert (project / ".github/instructions/canon-src-api.instructions.md").is_file()
    home = tmp_path / "home"
    home.mkdir()
    with FakeAnthropic(_script("view", project), main_tool="view") as fake:
        env = {
            "PATH": agent_path(),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_STATE_HOME": str(home / ".state"),
            "COPILOT_OFFLINE": "true",
            "COPILOT_PROVIDER_TYPE": "anthropic",
            "COPILOT_PROVIDER_BASE_URL": fake.url,
            "COPILOT_PROVIDER_API_KEY": "sk-ant-test-not-a-key",
            "COPILOT_MODEL": "claude-sonnet-4",
        }
        run = subprocess.run(
            [copilot_bin, "-p", "Look at the API handlers.", "--allow-all-tools"],
            cwd=project, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        requests = fake.main_requests()
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    _assert_loaded_on_read(requests)
