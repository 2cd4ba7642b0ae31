"""Real Codex CLI (pinned from npm) driving `canon hook codex` and `canon mcp`.

`codex exec` runs against a scripted loopback Responses API (fake_openai.py), with the hooks
and MCP server written by `canon init codex`. Codex runs project hooks only in a trusted
project and after the hooks were reviewed; unattended, the test trusts the temporary project
in its own CODEX_HOME and passes `--dangerously-bypass-hook-trust` (the documented switch for
automation). The requests the fake API receives are what reached the model.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from fake_openai import Request, apply_patch, mcp_call, message, shell, tool_search
from hookrun import make_project
from live_agents import initialised_project, run_codex
from npm_agents import CODEX, checked, install

# The first run on a fresh machine downloads the agent (~100 MB) inside the fixture.
pytestmark = [pytest.mark.agent_cli, pytest.mark.timeout(1500)]

CONFIG_CAPSULE = "Loads layered config; env beats file."
SRC_CAPSULE = "Source root, one module per concern."
STOP_MARK = "canon: these articles govern files you changed"


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    return checked(install(*CODEX), CODEX[1])


def patch(path: str, old: str, new: str) -> str:
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"


def test_live_codex_session_surfaces_reminds_and_sees_tool_writes(
    codex_bin: Path, tmp_path: Path
) -> None:
    """SPEC §11.3 with the real Codex: (a) capsules reach the model once per cycle, (b) the
    Stop reminder arrives once and names the article, (c) MCP writes are seen by the hooks."""
    project = initialised_project(tmp_path / "proj", "codex")
    steps = [
        shell("cat src/core/config.py", "call_1"),
        apply_patch(patch("src/core/config.py", "x = 1", "x = 2"), "call_2"),
        shell("cat src/a.py", "call_3"),
        apply_patch(patch("src/a.py", "x = 1", "x = 3"), "call_4"),
        tool_search("canon project memory", "call_5"),
        mcp_call(
            "mcp__canon",
            "canon",
            {"action": "write", "path": "src/a.py", "capsule": "Module a holds x."},
            "call_6",
        ),  # fmt: skip
        message("Done."),
        mcp_call(
            "mcp__canon",
            "canon",
            {
                "action": "write",
                "path": "src/core/config.py",
                "capsule": "Config loader; x is now 2.",
            },
            "call_7",
        ),  # fmt: skip
        message("Updated the article."),
    ]

    def script(turn: int, req: Request) -> list[dict]:
        return steps[turn] if turn < len(steps) else message("Nothing left.")

    run, requests, trace = run_codex(
        codex_bin, project, tmp_path, script, "Bump x in config and module a."
    )
    assert len(requests) == len(steps), run.stderr[-3000:]

    # (a) capsules arrive after the call that named the file, once per cycle.
    assert CONFIG_CAPSULE not in requests[0].flat()
    assert CONFIG_CAPSULE in requests[1].flat()
    final = requests[-1].flat()
    assert final.count(CONFIG_CAPSULE) == 1
    assert SRC_CAPSULE in requests[3].flat() and final.count(SRC_CAPSULE) == 1

    # (b) one Stop reminder, naming only the article not written since.
    assert STOP_MARK not in requests[6].flat() and STOP_MARK in requests[7].flat()
    assert final.count(STOP_MARK) == 1
    assert "- src/core/config (you changed src/core/config.py)" in final
    assert "- src (you changed" not in final

    # (c) the MCP server wrote; the hooks saw both writes.
    assert (
        "Config loader; x is now 2." in (project / ".canon/articles/src/core/config.md").read_text()
    )
    assert "Module a holds x." in (project / ".canon/articles/src/a.md").read_text()
    decisions = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [d["governing"] for d in decisions if d["decision"] == "written"] == [
        "src/a",
        "src/core/config",
    ]
    assert [d["decision"] for d in decisions].count("remind") == 1
    assert (project / "src/core/config.py").read_text() == "x = 2\n"


def test_plugin_installed_from_the_repository_surfaces_the_capsule(
    codex_bin: Path, tmp_path: Path
) -> None:
    """Issue 27 item 1: `codex plugin marketplace add <this repository>` and `codex plugin add
    canon@canon-ls` into a temporary home, then a session in a project with a store but no
    `canon init codex`: the capsule of the file read reaches the model's next request."""
    repo = Path(__file__).resolve().parents[2]
    home, codex = tmp_path / "home", tmp_path / "codex-home"
    home.mkdir()
    codex.mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "CODEX_HOME": str(codex)}
    for args in (["marketplace", "add", str(repo)], ["add", "canon@canon-ls"]):
        done = subprocess.run([codex_bin, "plugin", *args], capture_output=True, text=True,
                              timeout=300, env=env, stdin=subprocess.DEVNULL)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    project = make_project(tmp_path / "proj")
    assert not (project / ".codex").exists()
    steps = [shell("cat src/core/config.py", "call_1"), message("Read it.")]

    def script(turn: int, req: Request) -> list[dict]:
        return steps[turn] if turn < len(steps) else message("Nothing left.")

    run, requests, _ = run_codex(codex_bin, project, tmp_path, script, "Read the config.")
    assert len(requests) == 2, run.stderr[-3000:]
    assert CONFIG_CAPSULE not in requests[0].flat()
    assert CONFIG_CAPSULE in requests[1].flat()


def test_live_codex_remember_prompt_is_journaled_once(codex_bin: Path, tmp_path: Path) -> None:
    """SPEC §11.5 with the real Codex: a `remember:` prompt lands exactly one journal entry
    (verbatim, source codex) before the model answers, and the model is told in one line."""
    project = initialised_project(tmp_path / "proj", "codex")
    note = "remember: src/core/config.py reads env last, so env wins"
    run, requests, _ = run_codex(
        codex_bin, project, tmp_path, lambda turn, req: message("Noted."), note, traced=False
    )
    [entry] = sorted((project / ".canon" / "journal").glob("*.md"))
    written = entry.read_text("utf-8")
    assert written.endswith("---\nsrc/core/config.py reads env last, so env wins\n")
    assert "harness: codex\n" in written and "subject: [src/core/config]\n" in written
    said = f"journaled verbatim as journal/{entry.name}; it is recorded, do not record it again."
    assert requests[0].flat().count(said) == 1
    assert len(requests) == 1
