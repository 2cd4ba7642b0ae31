"""Shared helpers for hook tests: a real store on disk, recorded payloads, the real `canon`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PAYLOADS = Path(__file__).parent / "payloads"


def canon_command() -> list[str]:
    """The installed `canon` console script next to this interpreter."""
    script = Path(sys.executable).parent / "canon"
    if script.exists():
        return [str(script)]
    return [
        sys.executable,
        "-c",
        "import sys; from canon_ls.agent.cli import main; sys.exit(main())",
    ]


def article(
    root: Path,
    address: str,
    capsule: str | None,
    body: str = "",
    *,
    store: str = ".canon",
    scope: str = "",
) -> Path:
    """Write an article file the way a person would (SPEC §5 format)."""
    path = root / store / "articles" / f"{address}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    front = f"capsule: {capsule}\n" if capsule is not None else ""
    front += f"scope: {scope}\n" if scope else ""
    path.write_text(f"---\n{front}updated: 2026-01-01\n---\n# {address}\n{body}\n", "utf-8")
    return path


def make_project(root: Path) -> Path:
    """A project with assets, an ancestor article, an exact article and one without capsule."""
    for rel in ("src/a.py", "src/core/config.py", "docs/guide.md", "README.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x = 1\n", "utf-8")
    article(root, "src", "Source root, one module per concern.")
    article(root, "src/core/config", "Loads layered config; env beats file.")
    article(root, "docs/guide", None, "A guide without a capsule.")
    return root


def payload(agent: str, name: str, project: Path, session: str = "s-1", **extra: Any) -> dict:
    """A recorded payload with its placeholders filled in."""
    text = (PAYLOADS / agent / f"{name}.json").read_text("utf-8")
    text = text.replace("{project}", str(project)).replace("{session}", session)
    text = text.replace("{home}", str(project.parent / "home"))
    data = json.loads(text)
    data.update(extra)
    return data


@dataclass
class Hook:
    """Runs `canon hook AGENT` as a subprocess with an isolated state directory."""

    agent: str
    state_home: Path
    trace: Path | None = None
    config_home: Path | None = None  # $XDG_CONFIG_HOME: where canon/settings.json is read

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CANON_", "CLAUDE_"))}
        env["XDG_STATE_HOME"] = str(self.state_home)
        # Never the machine's own ~/.config/canon/settings.json (a `surface = false` there
        # would silence every hook under test): an empty directory unless a test gives one.
        env["XDG_CONFIG_HOME"] = str(self.config_home or self.state_home.parent / "no-config")
        if self.trace:
            env["CANON_TRACE"] = str(self.trace)
        return env

    def run_raw(self, stdin: str | bytes, cwd: Path | None = None) -> subprocess.CompletedProcess:
        data = stdin.encode() if isinstance(stdin, str) else stdin
        return subprocess.run(
            [*canon_command(), "hook", self.agent],
            input=data,
            capture_output=True,
            env=self.env(),
            cwd=cwd,
            timeout=60,
        )

    def __call__(self, data: dict, cwd: Path | None = None) -> dict | None:
        """Run one event; assert the hook contract (exit 0, JSON or nothing); return reply."""
        done = self.run_raw(json.dumps(data), cwd=cwd)
        assert done.returncode == 0, done.stderr.decode()
        out = done.stdout.decode().strip()
        if not out:
            return None
        reply = json.loads(out)
        assert isinstance(reply, dict)
        return reply


def isolated_hook(agent: str, tmp_path: Path) -> Hook:
    """`canon hook AGENT` with its state, trace and user settings all under tmp_path."""
    return Hook(agent, tmp_path / "state", tmp_path / "trace.jsonl", tmp_path / "config")


def context(reply: dict | None) -> str:
    """The additionalContext of a PostToolUse reply ('' for none)."""
    if not reply:
        return ""
    spec = reply["hookSpecificOutput"]
    assert spec["hookEventName"] == "PostToolUse"
    return spec["additionalContext"]
