"""Surfacing decisions for agent hooks (SPEC §11.3): which articles a tool call touched."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

from canon_ls.agent.batch import REPLY_LIMITS
from canon_ls.agent.session import SessionState, state_dir
from canon_ls.agent.tokens import (
    SHELL_TOOLS,
    Token,
    canon_cli_calls,
    is_canon_tool,
    response_text,
    succeeded,
    tokens,
)
from canon_ls.core.storage import freshness, fsio, layout
from canon_ls.core.storage.address import place, within
from canon_ls.core.storage.reader import DiskReader

# Session sources that start a new compaction cycle; `resume` keeps the cycle.
NEW_CYCLE = frozenset({"startup", "clear", "compact", "fork"})
# A write the schema turned away, in our words ("Refused to write") or pi-canon's ("rejected").
_REFUSED = re.compile(r"refus|rejected", re.I)
# A path not on disk yet must look like one: a slash inside it, or an extension after a name
# (`half-up.` ending a sentence has neither).
_SHAPED = re.compile(r"[^/]/[^/]|[^./]\.[^./]+\Z")


class Hit(NamedTuple):
    """A token that names something in the project: its address and governing article."""

    token: str
    relpath: str  # project-relative and '/' separated; absolute for a file of a mount
    address: str
    governing: str | None  # None: nothing governs it
    article: bool  # the token is itself an article file of the store
    mutating: bool


class Resolver:
    """Resolves path tokens against one project's store (and mounts) by looking at the disk,
    through the store's one read side (`reader`: core/storage/reader.py, nothing loaded)."""

    def __init__(self, options: layout.Options, cwd: Path | None = None) -> None:
        self.project = os.path.normpath(str(options.project))
        self.cwd = os.path.normpath(str(cwd)) if cwd else self.project
        self.store_dir = os.path.normpath(str(options.root))
        try:
            self.mounts = options.mounts
        except layout.OptionError:
            self.mounts = {}
        self.reader = DiskReader(Path(self.project), Path(self.store_dir), self.mounts)
        self.articles_dir = self.reader.articles_dir
        key = hashlib.sha256(str(self.articles_dir).encode()).hexdigest()[:24]
        self.reader.rules_cache = state_dir() / "rules" / f"{key}.json"
        self._bases = [self.project] + [str(d) for d in self.mounts.values()]

    def active(self) -> bool:
        """Hooks act only in a project whose store has an articles folder."""
        if not self.articles_dir.is_dir():
            return False
        root = Path(self.store_dir)
        project = Path(self.project)
        inside = root == project or project in root.parents
        dirs = [self.articles_dir, self.reader.journal_dir]
        return (
            fsio.leads_outside([root, *dirs] if inside else dirs, project if inside else root)
            is None
        )

    def resolve(self, token: Token) -> Hit | None:
        """The address a token names, if it exists or its parent does (project or mount)."""
        raw = os.path.expanduser(token.text)
        full = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(self.cwd, raw))
        kind, address = place(full, Path(self.project), Path(self.store_dir), self.mounts)
        if kind == "article":
            return Hit(token.text, self._display(full), address, address, True, token.mutating)
        if kind != "asset" or not address or full in self._bases:
            return None
        if not os.path.lexists(full) and not (
            _SHAPED.search(raw) and os.path.isdir(os.path.dirname(full))
        ):
            return None
        governing = self.reader.governing(address)
        return Hit(token.text, self._display(full), address, governing, False, token.mutating)

    def _display(self, full: str) -> str:
        if within(full, self.project):
            return os.path.relpath(full, self.project).replace(os.sep, "/")
        return full

    def rules_for(self, relpath: str) -> list[str]:
        """The articles that apply to a project file beyond their address (core/reach.py)."""
        return [] if os.path.isabs(relpath) else self.reader.rules_for(relpath)

    def governing_path(self, relpath: str) -> str | None:
        """The governing article of a project-relative (or mount) path, as on disk now."""
        try:
            return self.reader.governing(self.reader.address_of(relpath, as_path=True))
        except ValueError:
            return None

    def article_stamp(self, address: str) -> list[int] | None:
        """The article file's stat key (core's one freshness rule), JSON-ready."""
        try:
            found = freshness.key_of(self.reader.file(address))
        except (OSError, ValueError):
            return None
        return list(found) if found is not None else None

    def capsule(self, address: str) -> str:
        """The capsule of one article ('' when it has none or cannot be read)."""
        article = self.reader.article(address)
        return article.capsule.strip() if article is not None else ""

    def address_of_arg(self, value: object) -> str | None:
        """The address a `canon` tool `path` argument names (a path or an address)."""
        if not isinstance(value, str) or not value.strip():
            return None
        text = value.strip()
        if os.path.isabs(text):
            full = os.path.normpath(text)
            if not any(within(full, b) for b in self._bases) or full in self._bases:
                return None
        try:
            return self.reader.address_of(text) or None
        except ValueError:
            return None


class Surfacer:
    """The §11.3 decisions for one hook event, over a resolver and a session state."""

    def __init__(self, resolver: Resolver, state: SessionState, agent_id: str = "") -> None:
        self.resolver = resolver
        self.state = state
        self.agent_id = agent_id  # a subagent's calls surface into the subagent's own context
        self.trace: list[dict[str, Any]] = []  # decisions, for CANON_TRACE

    @property
    def seen(self) -> list[str]:
        """Addresses already in this context (main agent or one subagent) this cycle."""
        if self.agent_id:
            return self.state.subagents.setdefault(self.agent_id, [])
        return self.state.surfaced

    def session_start(self, source: str, resurface: bool = True) -> None:
        """startup/clear/compact/fork start a cycle: surfaced articles may surface again."""
        if source in NEW_CYCLE:
            if resurface or source != "compact":
                self.state.surfaced = []
                self.state.subagents = {}
                self.state.ranked = []
                self.state.marks = {}
            if source != "compact":
                self.state.pending = {}
            self._trace("cycle", source=source)

    def post_tool(self, tool_name: str, tool_input: object, tool_response: object) -> str:
        """The additional context for a finished tool call ('' for none)."""
        lines = self.spine(tool_name, tool_input, tool_response)
        if not lines:
            return ""
        return "canon project memory for the files this call touched:\n" + "\n".join(lines)

    def spine(self, tool_name: str, tool_input: object, tool_response: object) -> list[str]:
        """The address spine of one call: a line per article newly reached by its paths."""
        if is_canon_tool(tool_name):
            self._canon_call(tool_input, tool_response)
            return []
        ok = succeeded(tool_response)
        if tool_name in SHELL_TOOLS and isinstance(tool_input, dict):
            command = tool_input.get("command")
            for action, path in canon_cli_calls(command) if isinstance(command, str) else []:
                self._canon_call({"action": action, "path": path}, tool_response)
        lines: list[str] = []
        for token in tokens(tool_name, tool_input):
            hit = self.resolver.resolve(token)
            if hit is None:
                continue
            if hit.article:
                self._touch_article(hit.address, written=hit.mutating and ok)
                continue
            if hit.governing is None:
                self._trace("ungoverned", token=hit.token, address=hit.address)
            elif hit.mutating and ok:
                self._remember_edit(hit.governing, hit.relpath)
            reached = [(hit.governing, "governs")] if hit.governing else []
            rules = self.resolver.rules_for(hit.relpath)  # the nearest article never hides them
            reached += [(rule, "applies to") for rule in rules if rule != hit.governing]
            for address, how in reached:
                self._surface(hit._replace(governing=address), how, lines)
        return lines

    def stop(self, stop_hook_active: bool) -> str:
        """The stop hook's block reason ('' to let the agent stop)."""
        if stop_hook_active:
            self._trace("stop-quiet", reason="stop_hook_active")
            return ""
        due: dict[str, list[str]] = {}
        for address, entry in self.state.pending.items():
            if self.resolver.article_stamp(address) != entry.get("stamp"):
                continue  # written since the edit (by the tool, an editor or by hand)
            # An asset now governed by a nearer article (written since) is settled too.
            assets = [
                str(a)
                for a in entry.get("assets", [])
                if self.resolver.governing_path(str(a)) == address
            ]
            if assets:
                due[address] = assets
        pending, self.state.pending, lines, shown = self.state.pending, {}, [], []
        room = min(limit for _unit, limit in REPLY_LIMITS.values()) - 1_000  # JSON, the rest
        for address in sorted(due):
            line = f"- {address} (you changed {', '.join(sorted(set(due[address]))[:5])})"
            room -= len(line.encode()) + 1
            if room < 0:  # past every host's limit: the next stop names it
                self.state.pending[address] = pending[address]
            else:
                lines.append(line)
                shown.append(address)
        if not due:
            return ""
        if room < 0:
            lines.append(f"- ... and {len(due) - len(shown)} more; the next stop names them.")
        reason = (
            "canon: these articles govern files you changed and were not updated since:\n"
            + "\n".join(lines)
            + "\nIf what an article says no longer holds, update it with the canon tool (action "
            '"write", path "<address>"); narrative history goes to action "journal". '
            "Then finish."
        )
        self._trace("remind", governing=shown, chars=len(reason))
        return reason

    # -- helpers

    def _surface(self, hit: Hit, how: str, lines: list[str]) -> None:
        """One article the touch reached (governing, or a rule that applies), once per cycle."""
        if hit.governing in self.seen:
            self._trace("already", token=hit.token, address=hit.address, governing=hit.governing)
            return
        self.seen.append(str(hit.governing))
        line = self._line(hit, how)
        lines.append(line)
        self._trace(
            "surfaced",
            token=hit.token,
            address=hit.address,
            governing=hit.governing,
            file=hit.relpath,
            chars=len(line) + 1,
        )

    def _line(self, hit: Hit, how: str) -> str:
        governing = hit.governing or ""
        capsule = self.resolver.capsule(governing)
        name = governing if governing == hit.address else f"{governing} ({how} {hit.relpath})"
        return article_line(name, governing, capsule)

    def _remember_edit(self, governing: str, relpath: str) -> None:
        entry = self.state.pending.setdefault(governing, {"assets": []})
        if relpath not in entry["assets"]:
            entry["assets"].append(relpath)
        entry["stamp"] = self.resolver.article_stamp(governing)

    def _touch_article(self, address: str, written: bool) -> None:
        """The agent saw (or wrote) this article: withdraw it, and settle its reminder."""
        if address not in self.seen:
            self.seen.append(address)
        if written:
            self.state.pending.pop(address, None)
        self._trace("written" if written else "withdrawn", governing=address)

    def _canon_call(self, tool_input: object, tool_response: object) -> None:
        if not isinstance(tool_input, dict):
            return
        action = tool_input.get("action")
        if action not in ("read", "write"):
            return
        address = self.resolver.address_of_arg(tool_input.get("path"))
        if address is None:
            return
        if action == "read":
            governing = self.resolver.reader.governing(address)
            if governing:
                self._touch_article(governing, written=False)
        elif succeeded(tool_response) and not _REFUSED.search(response_text(tool_response)):
            self._touch_article(address, written=True)

    def _trace(self, decision: str, **fields: Any) -> None:
        self.trace.append({"decision": decision, **fields})


def article_line(name: str, address: str, capsule: str) -> str:
    """One delivered line: `- name: capsule`, or a pointer to read an article without one."""
    if capsule:
        return f"- {name}: {capsule}"
    return (
        f'- {name}: article without a capsule; read it with the canon tool (action "read", '
        f'path "{address}").'
    )
