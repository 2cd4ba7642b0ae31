"""The canon plugin for Claude Code and Codex, as files: a marketplace for each host."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from canon_ls import INSTALL

VERSION = "0.1.0"
NAME = "canon"  # the plugin; `canon-ls` names the marketplace (the project)
MARKETPLACE = "canon-ls"
AUTHOR = {"name": "canon-ls contributors"}
DESCRIPTION = (
    "Project memory in the repository: surfaces the article governing each file the agent "
    "touches and reminds it to update articles before it stops"
)
MISSING = (
    "canon: the canon command is not installed (or not on PATH), so the canon plugin does "
    f"nothing; install it with {INSTALL}"
)


def guarded(command: str, say: bool) -> str:
    """`command` when `canon` is on PATH; else nothing, or (`say`) how to install it."""
    head = f"command -v canon >/dev/null 2>&1 && exec {command};"
    if not say:
        return f"{head} exit 0"
    message = json.dumps({"systemMessage": MISSING})
    return f"{head} printf '%s\\n' {shlex.quote(message)}"


def hook_groups(command: str) -> dict[str, list[dict[str, Any]]]:
    """The `hooks` table canon needs, for settings.json / hooks.json of either agent."""
    handler = {"type": "command", "command": command, "timeout": 30}
    batch = command.endswith("claude-code")
    return {
        "SessionStart": [{"hooks": [dict(handler)]}],
        # the user's words: quick capture and the retrieval lane's intent
        "UserPromptSubmit": [{"hooks": [dict(handler)]}],
        **(
            {"PostToolBatch": [{"hooks": [dict(handler)]}]}
            if batch
            else {"PostToolUse": [{"matcher": "*", "hooks": [dict(handler)]}]}
        ),
        "Stop": [{"hooks": [dict(handler)]}],
    }


def plugin_hooks(agent: str) -> dict[str, Any]:
    """The hooks file of `agent`: hook_groups with each command guarded."""
    groups = hook_groups(f"canon hook {agent}")
    for event, entries in groups.items():
        for group in entries:
            for handler in group["hooks"]:
                handler["command"] = guarded(handler["command"], event == "SessionStart")
    return {
        "description": "canon: surface governing articles; remind to update them",
        **{"hooks": groups},
    }


def mcp_server() -> dict[str, Any]:
    """`canon mcp`, or a one-line reason on stderr when canon is not installed."""
    script = f"command -v canon >/dev/null 2>&1 && exec canon mcp; echo {shlex.quote(MISSING)} >&2"
    return {"command": "sh", "args": ["-c", f"{script}; exit 1"]}


def files(directory: Path) -> dict[Path, str]:
    """Every file of the two marketplaces and the plugin under `directory`, with its text."""
    plugin, codex = directory / "plugins" / NAME, directory / "plugins" / f"{NAME}-codex"
    manifest = {
        "name": NAME,
        "version": VERSION,
        "description": DESCRIPTION,
        "author": AUTHOR,
        "license": "MIT",
        "keywords": ["memory", "journal", "mcp", "canon"],
    }
    return {
        directory / ".claude-plugin" / "marketplace.json": json_text(
            {
                "$schema": "https://json.schemastore.org/claude-code-marketplace.json",
                "name": MARKETPLACE,
                "description": "canon: project memory in the repository for coding agents",
                "owner": AUTHOR,
                "plugins": [
                    {
                        "name": NAME,
                        "source": f"./plugins/{NAME}",
                        "description": DESCRIPTION,
                        "version": VERSION,
                        "category": "development",
                    }
                ],
            }
        ),
        directory / ".agents" / "plugins" / "marketplace.json": json_text(
            {
                "name": MARKETPLACE,
                "interface": {"displayName": "canon-ls"},
                "plugins": [
                    {
                        "name": NAME,
                        "source": {"source": "local", "path": f"./plugins/{NAME}-codex"},
                        "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"},
                        "category": "Productivity",
                    }
                ],
            }
        ),
        plugin / ".claude-plugin" / "plugin.json": json_text(manifest),
        plugin / "hooks" / "hooks.json": json_text(plugin_hooks("claude-code")),
        plugin / ".mcp.json": json_text({"mcpServers": {"canon": mcp_server()}}),
        plugin / "README.md": README.replace("{install}", INSTALL),
        codex / ".codex-plugin" / "plugin.json": json_text(
            {
                **manifest,
                "mcpServers": {"canon": mcp_server()},
                "interface": {
                    "displayName": "canon",
                    "shortDescription": "Project memory in the repository for coding agents.",
                    "developerName": AUTHOR["name"],
                    "category": "Productivity",
                    "capabilities": ["MCP", "Hooks"],
                },
            }
        ),
        codex / "hooks" / "hooks.json": json_text(plugin_hooks("codex")),
        codex / "README.md": README.replace("{install}", INSTALL),
    }


def json_text(value: object) -> str:
    """A JSON file as canon writes its configuration: indented, UTF-8 as is, a final newline."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


README = """\
# canon plugin for Claude Code and Codex

canon keeps a project memory inside the repository: one Markdown article per asset under
`.canon/articles/`, plus an append-only journal under `.canon/journal/`. This plugin wires it
into Claude Code and Codex:

- after each tool call (Claude Code: each batch of calls) a hook shows the capsule of the
  article governing each file the calls name, once per compaction cycle;
- a `UserPromptSubmit` hook journals `remember:` notes and, with `retrieval = "lexical"` in
  `canon.toml`, brings in the articles no file path reaches when the request calls for them;
- a `Stop` hook reminds the agent, once, to update the articles of files it changed;
- the MCP server `canon` (tool `canon`: read, write, journal, map, search).

The hooks and the server run the installed `canon` command: install it first
(`{install}`) so that `canon` is on the PATH the agent sees; until then the plugin says so once
when a session starts and does nothing else. Projects without a `.canon/articles` folder are
left alone.

Claude Code: `claude plugin marketplace add <this repository or its path>`, then
`claude plugin install canon@canon-ls`. Codex: `codex plugin marketplace add <the same>`, then
`codex plugin add canon@canon-ls`.
"""
