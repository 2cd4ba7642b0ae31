"""`canon init [claude-code|codex|claude-plugin DIR|pi [--global]]`: store and agent config."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canon_ls.agent import initfiles
from canon_ls.agent.plugin import hook_groups, json_text

if TYPE_CHECKING:
    from canon_ls.core.storage.store import Store

TARGETS = ("claude-code", "codex", "claude-plugin", "pi")
MCP_SERVER = {"command": "canon", "args": ["mcp"]}


def main(target: str, project: Path, directory: Path | None, user: bool = False) -> int:
    """Write the configuration for `target`; exit 0 done, 1 unreadable file, 2 bad input."""
    if directory is not None:
        directory = Path(os.path.abspath(directory))
    try:
        if user and target != "pi":
            print("--global applies to canon init pi only.")
            return 2
        if target == "pi":
            lines = init_pi(directory or project, user)
        elif target == "claude-code":
            lines = init_claude_code(directory or project)
        elif target == "codex":
            lines = init_codex(directory or project)
        elif target == "claude-plugin":
            if directory is None:
                print("canon init claude-plugin needs a directory to write the plugin to.")
                return 2
            lines = init_claude_plugin(directory)
        else:
            print(f"Unknown init target {target!r}; use one of {', '.join(TARGETS)}.")
            return 2
    except (ConfigError, initfiles.Refused) as exc:
        print(str(exc))
        return 1
    print("\n".join(lines))
    return 0


NEXT_STEPS = """\
Next:
  canon write PATH --capsule "What it is; what must stay true."  # a first article
  canon read PATH          # what agents and editors are shown for PATH
  canon init claude-code   # let your coding agent use the store (or codex, pi)"""


def store_created(store: Store, full: bool = True) -> list[str]:
    """Create the store (core's idempotent `Store.create`) and say what was made."""
    created = store.create()
    root = _rel(store.root, store.project)
    made = ", ".join(_rel(p, store.root) + ("/" if p.is_dir() else "") for p in created)
    if store.articles_dir in created:
        lines = [
            f"Created the canon store {root}/: {made}.",
            f"Commit {root}/ with the project: it is the project's memory, shared in git.",
        ]
    elif created:
        lines = [f"Added {made} to the canon store {root}/."]
    elif full:
        store.refresh()
        count = len(store.addresses())
        articles = f"{count} article" + ("" if count == 1 else "s")
        lines = [f"The canon store {root}/ is already set up ({articles}); nothing to create."]
    else:
        lines = []
    return [*lines, NEXT_STEPS] if full else lines


class ConfigError(ValueError):
    """An existing configuration file canon will not touch (one sentence)."""


def merge_hooks(config: dict[str, Any], command: str) -> bool:
    """Add canon's hook groups to `config["hooks"]` where missing; True when it changed."""
    hooks = config.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError('The "hooks" entry is not an object; fix it by hand and run again.')
    changed = False
    old = hooks.get("PostToolUse")
    if command.endswith("claude-code") and isinstance(old, list):
        kept = [group for group in old if not _has_command(group, command)]
        if len(kept) != len(old):
            changed = True
            if kept:
                hooks["PostToolUse"] = kept
            else:
                del hooks["PostToolUse"]
    for event, groups in hook_groups(command).items():
        present = hooks.setdefault(event, [])
        if not isinstance(present, list):
            raise ConfigError(f'The "hooks.{event}" entry is not a list; fix it by hand.')
        if not any(_has_command(group, command) for group in present):
            present.extend(groups)
            changed = True
    return changed


def _has_command(group: object, command: str) -> bool:
    """A group already running canon's hook (also as `/path/to/canon hook …`)."""
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return False
    return any(
        isinstance(h, dict) and _same_hook(h.get("command"), command) for h in group["hooks"]
    )


def _same_hook(existing: object, command: str) -> bool:
    if not isinstance(existing, str):
        return False
    words, ours = existing.split(), command.split()
    if len(words) < len(ours) or words[-len(ours) + 1 :] != ours[1:]:
        return False
    return words[-len(ours)].rsplit("/", 1)[-1] in ("canon", "canon.exe")


def init_claude_code(root: Path) -> list[str]:
    """`.claude/settings.json` hooks and the `canon` server in `.mcp.json`."""
    command = "canon hook claude-code"
    settings = root / ".claude" / "settings.json"
    _check_all(root, [settings, root / ".mcp.json"])
    lines = [_update_json(settings, root, lambda c: merge_hooks(c, command), "hooks")]
    lines.append(_update_json(root / ".mcp.json", root, _merge_mcp, "MCP server canon"))
    return lines


def init_codex(root: Path) -> list[str]:
    """`.codex/hooks.json` hooks and the `[mcp_servers.canon]` table of `.codex/config.toml`."""
    command = "canon hook codex"
    hooks = root / ".codex" / "hooks.json"
    config = root / ".codex" / "config.toml"
    _check_all(root, [hooks, config])
    lines = [_update_json(hooks, root, lambda c: merge_hooks(c, command), "hooks")]
    new = merge_codex_toml(_read(config, root) or "")
    said = ("MCP server canon already configured", "wrote MCP server canon")
    return [*lines, _put(config, root, new, _rel(config, root), said)]


def init_claude_plugin(directory: Path) -> list[str]:
    """The marketplaces holding the `canon` plugin for Claude Code and Codex."""
    from canon_ls.agent import plugin

    files = plugin.files(directory)
    _check_all(directory, list(files))
    said = ("up to date", "written")
    return [_put(p, directory, text, _rel(p, directory), said) for p, text in files.items()]


def pi_extension_dir(project: Path, user: bool) -> Path:
    """`.pi/extensions/canon` in the project, or in Pi's agent directory with `--global`."""
    if not user:
        return project / ".pi" / "extensions" / "canon"
    agent = os.environ.get("PI_CODING_AGENT_DIR") or os.path.join(
        os.path.expanduser("~"), ".pi/agent"
    )
    return Path(agent) / "extensions" / "canon"


def init_pi(project: Path, user: bool) -> list[str]:
    """The Pi extension (package data `pi_extension/index.ts`), a bridge to `canon hook pi`."""
    from importlib.resources import files

    text = files("canon_ls.agent").joinpath("pi_extension/index.ts").read_text("utf-8")
    target = pi_extension_dir(project, user) / "index.ts"
    root = target.parents[2] if user else project  # Pi's agent directory, or the project
    shown = str(target) if user else _rel(target, project)
    _check_all(root, [target])
    lines = [_put(target, root, text, shown, ("up to date", "wrote the canon extension for Pi"))]
    lines.append(
        "Pi loads it in every project; it stays quiet where there is no .canon/ store."
        if user
        else "Pi loads project extensions only once you trust the project: accept Pi's trust "
        "prompt when it next starts here (or run /trust in Pi)."
    )
    lines.append(
        "The extension runs `canon hook pi`: keep canon on the PATH Pi sees, or set CANON_BIN."
    )
    return lines


def _merge_mcp(config: dict[str, Any]) -> bool:
    servers = config.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError('The "mcpServers" entry of .mcp.json is not an object; fix it by hand.')
    if "canon" in servers:
        return False  # the user's own definition of the server wins
    servers["canon"] = dict(MCP_SERVER)
    return True


def _update_json(path: Path, root: Path, merge: Any, what: str) -> str:
    rel = _rel(path, root)
    text = _read(path, root)
    config: Any = {}
    if text is not None and text.strip():
        try:
            config = json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"{rel} is not valid JSON ({exc}); fix it and run again.") from None
        if not isinstance(config, dict):
            raise ConfigError(f"{rel} does not hold a JSON object; fix it and run again.")
    try:
        changed = merge(config)
    except ConfigError as exc:
        raise ConfigError(f"{rel}: {exc}") from None
    if not changed and text is not None:
        return f"{rel}: {what} already configured."
    _write(path, root, json_text(config))
    return f"{rel}: wrote {what}."


TOML_BLOCK = '[mcp_servers.canon]\ncommand = "canon"\nargs = ["mcp"]\n'
_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def merge_codex_toml(text: str) -> str:
    """Append or replace only the `[mcp_servers.canon]` table; every other line is kept."""
    lines = text.splitlines(keepends=True)
    start = None
    for i, line in enumerate(lines):
        match = _TABLE.match(line)
        if match and match.group(1).replace('"', "").replace(" ", "") == "mcp_servers.canon":
            start = i
            break
    if start is None:
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return text + sep + TOML_BLOCK
    end = start + 1
    while end < len(lines) and not _TABLE.match(lines[end]):
        end += 1
    body = lines[start:end]
    trailing: list[str] = []
    while body and not body[-1].strip():
        trailing.insert(0, body.pop())
    if "".join(body) == TOML_BLOCK:
        return text
    return "".join(lines[:start]) + TOML_BLOCK + "".join(trailing) + "".join(lines[end:])


def _check_all(root: Path, paths: list[Path]) -> None:
    """Refuse before the first write, so a refusal leaves every file as it was (SPEC §12)."""
    for path in paths:
        initfiles.check(path, root)


def _read(path: Path, root: Path) -> str | None:
    try:
        return initfiles.read(path, root)
    except OSError as exc:
        raise ConfigError(f"{_rel(path, root)} cannot be read ({exc.strerror}).") from None


def _put(path: Path, root: Path, text: str, shown: str, said: tuple[str, str]) -> str:
    """Write `text` unless the file holds it already; the line saying which (`said`)."""
    same = _read(path, root) == text
    if not same:
        _write(path, root, text)
    return f"{shown}: {said[0] if same else said[1]}."


def _write(path: Path, root: Path, text: str) -> None:
    """Atomic, never through a link (initfiles): no torn file, no redirected write."""
    try:
        initfiles.write(path, root, text)
    except OSError as exc:
        raise ConfigError(f"{_rel(path, root)} cannot be written ({exc.strerror}).") from None


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
