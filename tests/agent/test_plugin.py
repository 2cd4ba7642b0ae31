"""The canon plugin for Claude Code and Codex as this repository ships it (issue 27 item 1):
the files at the repository's root are exactly what `canon init claude-plugin` writes (one
source, agent/plugin.py, over the hook list `canon init claude-code|codex` writes), and
without an installed `canon` the plugin says once how to install it and does nothing else.
The hosts' own CLIs install it in tests/agent/test_claude_code.py and test_codex.py."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from hookrun import canon_command

from canon_ls import INSTALL
from canon_ls.agent import plugin
from canon_ls.agent.init import hook_groups

REPO = Path(__file__).resolve().parents[2]


def test_the_repository_ships_what_canon_init_writes(tmp_path: Path) -> None:
    done = subprocess.run([*canon_command(), "init", "claude-plugin", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    written = sorted(p.relative_to(tmp_path / "out") for p in (tmp_path / "out").rglob("*")
                     if p.is_file())  # fmt: skip
    assert written, done.stdout
    for rel in written:
        assert (REPO / rel).read_text("utf-8") == (tmp_path / "out" / rel).read_text("utf-8"), (
            f"{rel} differs from `canon init claude-plugin`: run it at the repository's root"
        )


def test_each_host_gets_the_hook_list_canon_init_writes() -> None:
    for folder, agent in (("canon", "claude-code"), ("canon-codex", "codex")):
        hooks = json.loads((REPO / "plugins" / folder / "hooks/hooks.json").read_text("utf-8"))
        assert list(hooks["hooks"]) == list(hook_groups(f"canon hook {agent}"))
        for entries in hooks["hooks"].values():
            for group in entries:
                for handler in group["hooks"]:
                    assert f"exec canon hook {agent};" in handler["command"]


def shell(command: str, path: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", "-c", command], input="{}", capture_output=True, text=True,
                          timeout=30, env={"PATH": path, "HOME": os.devnull})  # fmt: skip


def test_without_canon_it_says_once_how_to_install_it(tmp_path: Path) -> None:
    """PATH without canon: the session's start tells the user (systemMessage) how to install
    it; every other event and the MCP server's start stay silent or fail with that sentence."""
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("sh", "printf", "echo"):
        found = subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True, text=True)
        if found.stdout.startswith("/"):
            (bare / tool).symlink_to(found.stdout.strip())
    said = []
    for event, entries in plugin.plugin_hooks("claude-code")["hooks"].items():
        run = shell(entries[0]["hooks"][0]["command"], str(bare))
        assert run.returncode == 0, (event, run.stderr)
        if run.stdout.strip():
            said.append((event, json.loads(run.stdout)["systemMessage"]))
    assert said == [("SessionStart", plugin.MISSING)] and INSTALL in plugin.MISSING
    server = plugin.mcp_server()
    run = subprocess.run([server["command"], *server["args"]], capture_output=True, text=True,
                         timeout=30, env={"PATH": str(bare)})  # fmt: skip
    assert run.returncode == 1 and run.stderr.strip() == plugin.MISSING


def test_with_canon_the_hook_runs_it(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "canon"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho "ran canon $*"\n', encoding="utf-8")
    fake.chmod(0o755)
    command = plugin.plugin_hooks("codex")["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    run = shell(command, f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    assert run.stdout.strip() == "ran canon hook codex"
