"""`canon init claude-code|codex|claude-plugin|pi`: idempotent, preserving the user's settings.

SPEC §11.3 last item. Runs the real `canon init` as a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest
from hookrun import canon_command


def init(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*canon_command(), "init", *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file()
    }


def test_claude_code_writes_hooks_and_mcp(tmp_path: Path) -> None:
    done = init("claude-code", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    settings = json.loads((tmp_path / ".claude/settings.json").read_text())
    for event in ("SessionStart", "UserPromptSubmit", "PostToolBatch", "Stop"):
        commands = [h["command"] for g in settings["hooks"][event] for h in g["hooks"]]
        assert commands == ["canon hook claude-code"]
    # one packet per batch of parallel calls (SPEC §11.3): no per-call hook besides it
    assert "PreToolUse" not in settings["hooks"] and "PostToolUse" not in settings["hooks"]
    mcp = json.loads((tmp_path / ".mcp.json").read_text())
    assert mcp == {"mcpServers": {"canon": {"command": "canon", "args": ["mcp"]}}}
    # SPEC §11.1: the store comes too (directories and default schema.json), no entry
    assert done.stdout.splitlines()[-2:] == [
        "Created the canon store .canon/: articles/, journal/, schema.json.",
        "Commit .canon/ with the project: it is the project's memory, shared in git.",
    ]
    assert (tmp_path / ".canon/schema.json").is_file()
    assert list((tmp_path / ".canon/journal").iterdir()) == []


def test_claude_code_is_idempotent(tmp_path: Path) -> None:
    """A second run changes no byte and no mtime."""
    init("claude-code", cwd=tmp_path)
    before = snapshot(tmp_path)
    done = init("claude-code", cwd=tmp_path)
    assert done.returncode == 0 and "already" in done.stdout
    assert snapshot(tmp_path) == before


def test_claude_code_preserves_user_settings(tmp_path: Path) -> None:
    user = {
        "permissions": {"allow": ["Bash(git *)"]},
        "hooks": {
            "PostToolUse": [
                {"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier -w"}]}
            ],
            "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
        },
        "model": "opus",
    }
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude/settings.json").write_text(json.dumps(user))
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"other": {"command": "x"}, "canon": {"command": "mine"}}})
    )
    mcp_before = (tmp_path / ".mcp.json").read_bytes()
    assert init("claude-code", cwd=tmp_path).returncode == 0
    settings = json.loads((tmp_path / ".claude/settings.json").read_text())
    assert settings["permissions"] == user["permissions"] and settings["model"] == "opus"
    assert settings["hooks"]["Notification"] == user["hooks"]["Notification"]
    assert settings["hooks"]["PostToolUse"] == user["hooks"]["PostToolUse"]
    batch = settings["hooks"]["PostToolBatch"]
    assert batch == [{"hooks": [{"type": "command", "command": "canon hook claude-code",
                                 "timeout": 30}]}]  # fmt: skip
    assert (tmp_path / ".mcp.json").read_bytes() == mcp_before  # the user's canon entry wins


def test_claude_code_moves_an_earlier_per_call_hook_to_the_batch(tmp_path: Path) -> None:
    """A project set up before the batch hook: canon's PostToolUse entry gives way to
    PostToolBatch (both would deliver per call); the user's own PostToolUse hooks stay."""
    mine = {"type": "command", "command": "prettier -w"}
    ours = {"type": "command", "command": "canon hook claude-code", "timeout": 30}
    user = {"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [ours]},
                                      {"matcher": "Edit", "hooks": [mine]}]}}  # fmt: skip
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude/settings.json").write_text(json.dumps(user))
    assert init("claude-code", cwd=tmp_path).returncode == 0
    hooks = json.loads((tmp_path / ".claude/settings.json").read_text())["hooks"]
    assert hooks["PostToolUse"] == [{"matcher": "Edit", "hooks": [mine]}]
    assert hooks["PostToolBatch"] == [{"hooks": [ours]}]


def test_claude_code_refuses_broken_json(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude/settings.json").write_text("{ not json")
    done = init("claude-code", cwd=tmp_path)
    assert done.returncode == 1 and "not valid JSON" in done.stdout
    assert (tmp_path / ".claude/settings.json").read_text() == "{ not json"


def test_codex_writes_hooks_and_toml_block(tmp_path: Path) -> None:
    assert init("codex", cwd=tmp_path).returncode == 0
    hooks = json.loads((tmp_path / ".codex/hooks.json").read_text())["hooks"]
    assert {e for e in hooks} == {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"}
    assert hooks["Stop"][0]["hooks"][0]["command"] == "canon hook codex"
    config = tomllib.loads((tmp_path / ".codex/config.toml").read_text())
    assert config["mcp_servers"]["canon"] == {"command": "canon", "args": ["mcp"]}
    before = snapshot(tmp_path)
    assert init("codex", cwd=tmp_path).returncode == 0
    assert snapshot(tmp_path) == before


USER_TOML = """\
# my codex settings
model = "gpt-5.3-codex"   # keep this comment

[mcp_servers.other]
command = "other"

[mcp_servers.canon]
command = "/old/canon"
args = ["mcp", "--project", "."]

[mcp_servers.canon.env]
CANON_TODAY = "2026-01-01"

[profiles.fast]
model = "mini"
"""


@pytest.mark.parametrize("text", ["", USER_TOML, 'model = "x"', 'model = "x"\n\n'])
def test_codex_toml_keeps_every_other_byte(tmp_path: Path, text: str) -> None:
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex/config.toml").write_text(text)
    assert init("codex", cwd=tmp_path).returncode == 0
    new = (tmp_path / ".codex/config.toml").read_text()
    parsed = tomllib.loads(new)
    assert parsed["mcp_servers"]["canon"]["command"] == "canon"
    assert parsed["mcp_servers"]["canon"]["args"] == ["mcp"]
    block = '[mcp_servers.canon]\ncommand = "canon"\nargs = ["mcp"]\n'
    if "[mcp_servers.canon]" in text:
        start = text.index("[mcp_servers.canon]")
        end = text.index("[mcp_servers.canon.env]")
        assert new == text[:start] + block + "\n" + text[end:]
        assert parsed["mcp_servers"]["canon"]["env"] == {"CANON_TODAY": "2026-01-01"}
    else:
        assert new.startswith(text) and new.endswith(block)
    assert init("codex", cwd=tmp_path).returncode == 0
    assert (tmp_path / ".codex/config.toml").read_text() == new


def test_claude_plugin_layout(tmp_path: Path) -> None:
    out = tmp_path / "market"
    assert init("claude-plugin", str(out), cwd=tmp_path).returncode == 0
    market = json.loads((out / ".claude-plugin/marketplace.json").read_text())
    assert market["plugins"][0]["source"] == "./plugins/canon"
    plugin = out / "plugins/canon"
    assert json.loads((plugin / ".claude-plugin/plugin.json").read_text())["name"] == "canon"
    hooks = json.loads((plugin / "hooks/hooks.json").read_text())["hooks"]
    assert "exec canon hook claude-code;" in hooks["Stop"][0]["hooks"][0]["command"]
    mcp = json.loads((plugin / ".mcp.json").read_text())["mcpServers"]["canon"]
    assert "exec canon mcp;" in mcp["args"][-1]
    assert (plugin / "README.md").read_text().startswith("# canon plugin")
    before = snapshot(out)
    assert init("claude-plugin", str(out), cwd=tmp_path).returncode == 0
    assert snapshot(out) == before


def test_unknown_target_is_a_sentence(tmp_path: Path) -> None:
    done = init("emacs", cwd=tmp_path)
    assert done.returncode != 0
    assert list(tmp_path.iterdir()) == []


def test_existing_canon_hook_with_a_full_path_is_recognised(tmp_path: Path) -> None:
    """Idempotent also when the user pointed the hook at an absolute `canon`."""
    (tmp_path / ".claude").mkdir()
    handler = {"type": "command", "command": "/opt/venv/bin/canon hook claude-code"}
    events = ("SessionStart", "UserPromptSubmit", "PostToolBatch", "Stop")
    user = {"hooks": {e: [{"hooks": [handler]}] for e in events}}
    text = json.dumps(user)
    (tmp_path / ".claude/settings.json").write_text(text)
    assert init("claude-code", cwd=tmp_path).returncode == 0
    assert (tmp_path / ".claude/settings.json").read_text() == text


def test_pi_writes_the_extension_and_says_trust_is_needed(tmp_path: Path) -> None:
    """SPEC §11.6: `canon init pi` writes the bridge into .pi/extensions/canon, idempotently."""
    from importlib.resources import files

    done = init("pi", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    written = tmp_path / ".pi/extensions/canon/index.ts"
    shipped = files("canon_ls.agent").joinpath("pi_extension/index.ts").read_text("utf-8")
    assert written.read_text("utf-8") == shipped
    assert "canon hook pi" in shipped and len(shipped.splitlines()) <= 200
    assert "trust" in done.stdout and "Created the canon store .canon/" in done.stdout
    assert "no .canon/ store here yet" not in done.stdout
    before = snapshot(tmp_path)
    again = init("pi", cwd=tmp_path)
    assert again.returncode == 0 and "up to date" in again.stdout
    assert snapshot(tmp_path) == before
    assert "canon store" not in again.stdout  # already there: nothing to say
    assert (tmp_path / ".canon/articles").is_dir()


def test_pi_global_writes_to_pi_s_agent_directory(tmp_path: Path) -> None:
    agent = tmp_path / "pi-agent"
    done = subprocess.run(
        [*canon_command(), "init", "pi", "--global"], cwd=tmp_path, capture_output=True,
        text=True, timeout=60, env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (agent / "extensions/canon/index.ts").is_file()
    assert not (tmp_path / ".pi").exists()
    assert "every project" in done.stdout


def test_global_is_for_pi_only(tmp_path: Path) -> None:
    done = init("codex", "--global", cwd=tmp_path)
    assert done.returncode == 2 and "canon init pi" in done.stdout
    assert not (tmp_path / ".codex").exists()
