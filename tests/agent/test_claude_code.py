"""Real Claude Code (pinned from npm) driving `canon hook claude-code` and `canon mcp`.

`claude -p` runs against a scripted loopback Messages API (fake_anthropic.py) with the hooks
and MCP server written by `canon init claude-code`. The requests the fake API receives are the
ground truth of what reached the model. The npm install is cached outside the repository
($CANON_NPM_CACHE, default ~/.cache/canon-tests); when it cannot be installed the tests fail
loudly rather than skip.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropic, Recorded, text, tool_use
from hookrun import article, canon_command, make_project
from live_agents import claude_env, initialised_project, run_claude
from npm_agents import CLAUDE_CODE, checked, install

# The first run on a fresh machine downloads the agent (~100 MB) inside the fixture.
pytestmark = [pytest.mark.agent_cli, pytest.mark.timeout(1500)]

CLAUDE_VERSION = CLAUDE_CODE[1]  # research notes: the hook formats were observed on this release


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    return checked(install(*CLAUDE_CODE), CLAUDE_VERSION)


def test_generated_plugin_passes_strict_validation(claude_bin: Path, tmp_path: Path) -> None:
    """`canon init claude-plugin DIR` output is accepted by `claude plugin validate --strict`."""
    out = tmp_path / "market"
    done = subprocess.run([*canon_command(), "init", "claude-plugin", str(out)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    home = tmp_path / "home"
    home.mkdir()
    for target in (out, out / "plugins" / "canon"):
        check = subprocess.run(
            [claude_bin, "plugin", "validate", "--strict", str(target)],
            capture_output=True, text=True, timeout=120,
            env={"PATH": os.environ.get("PATH", ""), "HOME": str(home)},
        )  # fmt: skip
        assert check.returncode == 0, check.stdout + check.stderr


def test_plugin_installed_from_the_repository_surfaces_the_capsule(
    claude_bin: Path, tmp_path: Path
) -> None:
    """Issue 27 item 1: `claude plugin marketplace add <this repository>` and `claude plugin
    install canon@canon-ls` into a temporary home, then a session in a project that has a
    store but no `canon init claude-code`: the plugin's hooks run the installed `canon`, and
    the capsule of the file read reaches the model's next request."""
    repo = Path(__file__).resolve().parents[2]
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home)}
    for args in (["marketplace", "add", str(repo)], ["install", "canon@canon-ls"]):
        done = subprocess.run([claude_bin, "plugin", *args], capture_output=True, text=True,
                              timeout=300, env=env)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    project = make_project(tmp_path / "proj")
    assert not (project / ".claude").exists()
    config = project / "src/core/config.py"
    steps = [tool_use("Read", {"file_path": str(config)}, "toolu_01"), text("Read it.")]

    def script(turn: int, rec: Recorded) -> list[dict]:
        return steps[turn] if turn < len(steps) else text("Nothing left.")

    run, requests, _ = run_claude(
        claude_bin, project, tmp_path, script, "Read the config.", "--allowedTools", "Read"
    )
    assert len(requests) == 2, [r.flat()[-300:] for r in requests]
    assert CONFIG_CAPSULE not in requests[0].flat()
    assert CONFIG_CAPSULE in requests[1].flat()


CONFIG_CAPSULE = "Loads layered config; env beats file."
SRC_CAPSULE = "Source root, one module per concern."
STOP_MARK = "canon: these articles govern files you changed"


def test_live_session_surfaces_reminds_and_sees_tool_writes(
    claude_bin: Path, tmp_path: Path
) -> None:
    """SPEC §11.3 with the real agent: (a) each capsule reaches the model once per cycle,
    (b) the Stop reminder arrives once and names the article, (c) articles written through
    the MCP tool during the session are seen by the hooks."""
    project = initialised_project(tmp_path / "proj", "claude-code")
    config, module = project / "src/core/config.py", project / "src/a.py"
    canon_tool = "mcp__canon__canon"
    steps = [
        tool_use("Read", {"file_path": str(config)}, "toolu_01"),
        tool_use(
            "Edit",
            {"file_path": str(config), "old_string": "x = 1", "new_string": "x = 2"},
            "toolu_02",
        ),  # fmt: skip
        tool_use("Read", {"file_path": str(config)}, "toolu_03"),
        tool_use("Read", {"file_path": str(module)}, "toolu_04"),
        tool_use(
            "Edit",
            {"file_path": str(module), "old_string": "x = 1", "new_string": "x = 3"},
            "toolu_05",
        ),  # fmt: skip
        # A new article, written through MCP mid-session, now governs src/a.py.
        tool_use(
            canon_tool,
            {
                "action": "write",
                "path": "src/a.py",
                "capsule": "Module a holds x.",
                "body": "# src/a\nx is 3.",
            },
            "toolu_06",
        ),  # fmt: skip
        text("Done."),
        tool_use(
            canon_tool,
            {
                "action": "write",
                "path": "src/core/config.py",
                "capsule": "Config loader; x is now 2.",
            },
            "toolu_07",
        ),  # fmt: skip
        text("Updated the article."),
    ]

    def script(turn: int, rec: Recorded) -> list[dict]:
        return steps[turn] if turn < len(steps) else text("Nothing left.")

    run, requests, trace = run_claude(
        claude_bin, project, tmp_path, script, "Bump x in the config and in module a.",
        "--allowedTools", "Read", "Edit", canon_tool,
    )  # fmt: skip
    result = json.loads(run.stdout)
    assert not result.get("is_error"), result
    assert len(requests) == len(steps), [r.flat()[-300:] for r in requests]

    # (a) the capsule arrives right after the first Read, and once per cycle.
    assert CONFIG_CAPSULE in requests[1].flat()
    assert CONFIG_CAPSULE not in requests[0].flat()
    final = requests[-1].flat()
    assert final.count(CONFIG_CAPSULE) == 1
    assert final.count(SRC_CAPSULE) == 1 and SRC_CAPSULE in requests[4].flat()

    # (b) the Stop reminder arrives once and names the edited asset's article.
    assert STOP_MARK not in requests[6].flat()
    assert STOP_MARK in requests[7].flat()
    assert final.count("Stop hook feedback") == 1
    assert "- src/core/config (you changed src/core/config.py)" in final
    assert "- src (you changed" not in final  # settled by the new article src/a

    # (c) the MCP server really wrote, and the hooks saw both writes.
    assert (
        "Config loader; x is now 2." in (project / ".canon/articles/src/core/config.md").read_text()
    )
    assert "Module a holds x." in (project / ".canon/articles/src/a.md").read_text()
    decisions = [json.loads(line) for line in trace.read_text().splitlines()]
    written = [d["governing"] for d in decisions if d["decision"] == "written"]
    assert written == ["src/a", "src/core/config"]
    assert [d["decision"] for d in decisions].count("remind") == 1
    assert list((project / ".canon" / "journal").glob("*.md")) == []  # nothing journaled


def test_live_article_written_mid_session_surfaces(claude_bin: Path, tmp_path: Path) -> None:
    """An article created on disk during the session (by a person or another tool) is found
    by the next hook: resolution reads the disk, not a snapshot taken at session start."""
    project = make_project(tmp_path / "proj")
    subprocess.run([*canon_command(), "init", "claude-code"], cwd=project, check=True,
                   capture_output=True, timeout=60)  # fmt: skip
    (project / "lib").mkdir()
    (project / "lib/util.py").write_text("u = 1\n")

    def script(turn: int, rec: Recorded) -> list[dict]:
        if turn == 0:
            return tool_use("Bash", {"command": "ls lib", "description": "list"}, "toolu_01")
        if turn == 1:
            article(project, "lib", "Helpers shared by every module.")
            return tool_use("Read", {"file_path": str(project / "lib/util.py")}, "toolu_02")
        return text("Done.")

    _, requests, _ = run_claude(
        claude_bin, project, tmp_path, script, "Look at lib.", "--allowedTools", "Read", "Bash"
    )
    assert "Helpers shared by every module." not in requests[1].flat()
    assert "Helpers shared by every module." in requests[2].flat()


def test_live_resume_keeps_the_cycle_and_a_new_session_starts_one(
    claude_bin: Path, tmp_path: Path
) -> None:
    """SPEC §11.3: `--resume` (SessionStart source=resume, same session id) does not show the
    capsule again; a fresh session (source=startup) does."""
    project = make_project(tmp_path / "proj")
    subprocess.run([*canon_command(), "init", "claude-code"], cwd=project, check=True,
                   capture_output=True, timeout=60)  # fmt: skip
    config = str(project / "src/core/config.py")

    def script(turn: int, rec: Recorded) -> list[dict]:
        if turn % 2 == 0:
            return tool_use("Read", {"file_path": config}, f"toolu_{turn:02d}")
        return text("Read it.")

    home, state, trace = tmp_path / "home", tmp_path / "state", tmp_path / "trace.jsonl"
    home.mkdir()
    with FakeAnthropic(script) as fake:
        env = claude_env(home, fake.url, state, trace)

        def claude(*extra: str) -> dict:
            run = subprocess.run(
                [claude_bin, "-p", "Read the config.", "--output-format", "json",
                 "--allowedTools", "Read", *extra],
                cwd=project, env=env, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
            return json.loads(run.stdout)

        first = claude()
        claude("--resume", first["session_id"])
        claude()
        requests = fake.main_requests()
    assert len(requests) == 6
    assert requests[1].flat().count(CONFIG_CAPSULE) == 1  # first session: shown
    assert requests[3].flat().count(CONFIG_CAPSULE) == 1  # resumed: only the old one
    assert requests[5].flat().count(CONFIG_CAPSULE) == 1  # new session: shown afresh
    assert CONFIG_CAPSULE not in requests[4].flat()
    decisions = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [d["decision"] for d in decisions if d["decision"] in ("surfaced", "already")] == [
        "surfaced",
        "already",
        "surfaced",
    ]
    assert [d["source"] for d in decisions if d["decision"] == "cycle"] == ["startup", "startup"]


def test_live_remember_prompt_is_journaled_once(claude_bin: Path, tmp_path: Path) -> None:
    """SPEC §11.5 with the real Claude Code: a `remember:` prompt lands exactly one journal
    entry (verbatim, source claude-code, the file it names as subject) before the model
    answers; the model's first request carries the one line saying it is recorded."""
    project = initialised_project(tmp_path / "proj", "claude-code")
    note = "remember: src/core/config.py reads env last, so env wins"
    _, requests, _ = run_claude(
        claude_bin, project, tmp_path, lambda turn, rec: text("Noted."), note
    )
    [entry] = sorted((project / ".canon" / "journal").glob("*.md"))
    written = entry.read_text("utf-8")
    assert written.endswith("---\nsrc/core/config.py reads env last, so env wins\n")
    assert "harness: claude-code\n" in written and "subject: [src/core/config]\n" in written
    said = f"journaled verbatim as journal/{entry.name}; it is recorded, do not record it again."
    assert requests[0].flat().count(said) == 1
    assert len(requests) == 1


def test_live_a_parallel_batch_is_one_packet(claude_bin: Path, tmp_path: Path) -> None:
    """SPEC §11.3: two reads in one parallel batch (one assistant turn) reach the model as one
    PostToolBatch message carrying both capsules, in the next request; `canon init
    claude-code` configured the batch hook (no per-call hook)."""
    project = initialised_project(tmp_path / "proj", "claude-code")
    config, module = project / "src/core/config.py", project / "src/a.py"
    both = tool_use("Read", {"file_path": str(config)}, "toolu_01") + tool_use(
        "Read", {"file_path": str(module)}, "toolu_02"
    )

    def script(turn: int, rec: Recorded) -> list[dict]:
        return both if turn == 0 else text("Read both.")

    _, requests, trace = run_claude(
        claude_bin, project, tmp_path, script, "Read the config and module a.",
        "--allowedTools", "Read",
    )  # fmt: skip
    assert len(requests) == 2
    packet = (
        "canon project memory for the files these calls touched:\\n"
        f"- src/core/config: {CONFIG_CAPSULE}\\n"
        f"- src (governs src/a.py): {SRC_CAPSULE}"
    )
    after = requests[1].flat()
    assert after.count(packet) == 1, after[-2000:]
    assert after.count(CONFIG_CAPSULE) == 1 and after.count(SRC_CAPSULE) == 1
    decisions = [json.loads(line) for line in trace.read_text().splitlines()]
    assert {d["event"] for d in decisions if d["decision"] == "surfaced"} == {"PostToolBatch"}
