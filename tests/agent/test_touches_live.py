"""SPEC §11.3 with the real agents (pinned from npm, against the fake model APIs): every kind
of touch the host has surfaces the governing capsule in the next request, once. One session
per host; each touch names its own governed folder `pkg/tNN`, so the capsule that arrives
after a call can only come from that call's input. docs/AGENTS.md holds the matrix; the
payload-level test of every cell is test_hooks_touches.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import Recorded, text, tool_use
from fake_openai import Request, apply_patch, message, shell
from hookrun import article
from live_agents import initialised_project, run_claude, run_codex
from npm_agents import CLAUDE_CODE, CODEX, checked, install

pytestmark = [pytest.mark.agent_cli, pytest.mark.timeout(1500)]


def capsule(n: int) -> str:
    return f"Touch folder {n} holds the module of step {n}."


def governed(tmp_path: Path, agent: str, n: int) -> Path:
    """A project with canon initialised for `agent`, n governed folders pkg/tNN (each with
    m.py and n.ipynb) and a git history, so `git diff/show` name real paths."""
    project = initialised_project(tmp_path / "proj", agent)
    for i in range(1, n + 1):
        folder = project / f"pkg/t{i:02d}"
        folder.mkdir(parents=True)
        (folder / "m.py").write_text("x = 1\n", "utf-8")
        (folder / "n.ipynb").write_text('{"cells": [], "nbformat": 4, "nbformat_minor": 5}\n')
        article(project, f"pkg/t{i:02d}", capsule(i))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run([*git, "add", "-A"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=project, check=True)
    return project


def arrived(requests: list[Any], n: int) -> list[int]:
    """The touches whose capsule arrived in the request right after them, exactly once in
    the last request (request k follows touch k)."""
    final = requests[-1].flat()
    return [
        i
        for i in range(1, n + 1)
        if capsule(i) in requests[i].flat()
        and capsule(i) not in requests[i - 1].flat()
        and final.count(capsule(i)) == 1
    ]


CLAUDE_TOUCHES: list[tuple[str, str, dict[str, Any]]] = [
    ("read", "Read", {"file_path": "{p}/pkg/t01/m.py"}),
    ("create", "Write", {"file_path": "{p}/pkg/t02/new.py", "content": "y = 1\n"}),
    ("edit", "Edit",
     {"file_path": "{p}/pkg/t03/m.py", "old_string": "x = 1", "new_string": "x = 2"}),
    ("multi-edit", "MultiEdit", {"file_path": "{p}/pkg/t04/m.py",
                                 "edits": [{"old_string": "x = 1", "new_string": "x = 2"}]}),
    ("write-over", "Write", {"file_path": "{p}/pkg/t05/m.py", "content": "x = 5\n"}),
    ("shell cat", "Bash", {"command": "cat pkg/t06/m.py"}),
    ("shell sed -n", "Bash", {"command": "sed -n '1,2p' pkg/t07/m.py"}),
    ("shell head", "Bash", {"command": "head -n 2 pkg/t08/m.py"}),
    ("shell grep", "Bash", {"command": "grep -n x pkg/t09/m.py"}),
    ("shell git diff", "Bash", {"command": "git diff -- pkg/t10/m.py"}),
    ("shell git show", "Bash", {"command": "git show HEAD:pkg/t11/m.py"}),
    ("grep", "Grep", {"pattern": "x", "path": "{p}/pkg/t12"}),
    ("glob", "Glob", {"pattern": "*.py", "path": "{p}/pkg/t13"}),
    ("notebook edit", "NotebookEdit",
     {"notebook_path": "{p}/pkg/t14/n.ipynb", "new_source": "1", "edit_mode": "insert",
      "cell_type": "code"}),
]  # fmt: skip


def test_live_claude_code_every_touch_delivers(tmp_path: Path) -> None:
    claude_bin = checked(install(*CLAUDE_CODE), CLAUDE_CODE[1])
    n = len(CLAUDE_TOUCHES)
    project = governed(tmp_path, "claude-code", n)
    steps = [
        tool_use(tool, {k: v.replace("{p}", str(project)) if isinstance(v, str) else v
                        for k, v in args.items()}, f"toolu_{i:02d}")
        for i, (_kind, tool, args) in enumerate(CLAUDE_TOUCHES, 1)
    ]  # fmt: skip

    def script(turn: int, rec: Recorded) -> list[dict]:
        return steps[turn] if turn < len(steps) else text("Done.")

    tools = "Read,Write,Edit,MultiEdit,Bash,Grep,Glob,NotebookEdit"
    _, requests, _ = run_claude(
        claude_bin, project, tmp_path, script, "Touch each folder.", "--allowedTools", tools
    )
    assert len(requests) >= n + 1  # and the stop reminder's turn
    got = arrived(requests, n)
    missing = [CLAUDE_TOUCHES[i - 1][0] for i in range(1, n + 1) if i not in got]
    assert missing == []


CODEX_TOUCHES: list[tuple[str, list[dict]]] = [
    ("read", shell("cat pkg/t01/m.py", "c01")),
    ("create", apply_patch("*** Begin Patch\n*** Add File: pkg/t02/new.py\n+y = 1\n"
                           "*** End Patch\n", "c02")),
    ("edit", apply_patch("*** Begin Patch\n*** Update File: pkg/t03/m.py\n@@\n-x = 1\n+x = 2\n"
                         "*** End Patch\n", "c03")),
    ("write-over", shell("printf 'x = 5\\n' > pkg/t04/m.py", "c04")),
    ("shell sed -n", shell("sed -n '1,2p' pkg/t05/m.py", "c05")),
    ("shell head", shell("head -n 2 pkg/t06/m.py", "c06")),
    ("shell grep", shell("grep -n x pkg/t07/m.py", "c07")),
    ("shell git diff", shell("git diff -- pkg/t08/m.py", "c08")),
    ("shell git show", shell("git show HEAD:pkg/t09/m.py", "c09")),
    ("glob", shell("find pkg/t10 -name '*.py'", "c10")),
]  # fmt: skip


def test_live_codex_every_touch_delivers(tmp_path: Path) -> None:
    codex_bin = checked(install(*CODEX), CODEX[1])
    n = len(CODEX_TOUCHES)
    project = governed(tmp_path, "codex", n)
    steps = [items for _kind, items in CODEX_TOUCHES]

    def script(turn: int, req: Request) -> list[dict]:
        return steps[turn] if turn < len(steps) else message("Done.")

    run, requests, _ = run_codex(codex_bin, project, tmp_path, script, "Touch each folder.")
    assert len(requests) >= n + 1, run.stderr[-3000:]
    got = arrived(requests, n)
    missing = [CODEX_TOUCHES[i - 1][0] for i in range(1, n + 1) if i not in got]
    assert missing == []


PI_TOUCHES: list[tuple[str, str, dict[str, Any]]] = [
    ("read", "read", {"path": "pkg/t01/m.py"}),
    ("create", "write", {"path": "pkg/t02/new.py", "content": "y = 1\n"}),
    ("edit", "edit", {"path": "pkg/t03/m.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}),
    ("multi-edit", "edit", {"path": "pkg/t04/m.py", "edits": [
        {"oldText": "x", "newText": "y"}, {"oldText": "1", "newText": "2"}]}),
    ("write-over", "write", {"path": "pkg/t05/m.py", "content": "x = 5\n"}),
    ("shell cat", "bash", {"command": "cat pkg/t06/m.py"}),
    ("shell sed -n", "bash", {"command": "sed -n '1,2p' pkg/t07/m.py"}),
    ("shell head", "bash", {"command": "head -n 2 pkg/t08/m.py"}),
    ("shell grep", "bash", {"command": "grep -n x pkg/t09/m.py"}),
    ("shell git diff", "bash", {"command": "git diff -- pkg/t10/m.py"}),
    ("shell git show", "bash", {"command": "git show HEAD:pkg/t11/m.py"}),
    ("grep", "grep", {"pattern": "x", "path": "pkg/t12"}),
    ("glob", "find", {"pattern": "*.py", "path": "pkg/t13"}),
    ("ls", "ls", {"path": "pkg/t14"}),
]  # fmt: skip


def test_live_pi_every_touch_delivers(tmp_path: Path) -> None:
    from fake_anthropic import FakeAnthropic
    from npm_agents import pi_command
    from test_pi import pi_env

    n = len(PI_TOUCHES)
    project = governed(tmp_path, "pi", n)
    steps = [tool_use(tool, args, f"t{i:02d}") for i, (_k, tool, args) in enumerate(PI_TOUCHES, 1)]

    def script(turn: int, rec: Recorded) -> list[dict]:
        return steps[turn] if turn < len(steps) else text("Done.")

    env = pi_env(tmp_path, project, "", PYTHONPATH=os.environ.get("PYTHONPATH", ""))
    with FakeAnthropic(script, main_tool="read") as fake:
        env = pi_env(tmp_path, project, fake.url, PYTHONPATH=env["PYTHONPATH"])
        run = subprocess.run(
            [*pi_command(), "-p", "--provider", "fake", "--model", "fake-model",
             "--tools", "read,bash,edit,write,grep,find,ls", "Touch each folder."],
            cwd=project, env=env, capture_output=True, text=True, timeout=300,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        requests = fake.main_requests()
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert len(requests) >= n + 1
    got = arrived(requests, n)
    missing = [PI_TOUCHES[i - 1][0] for i in range(1, n + 1) if i not in got]
    assert missing == []
