"""Surfacing decisions for agent hooks (SPEC §11.3): which articles a tool call touched.

A hook runs as a fresh process for every tool call, so this module never loads the store's
index: a path resolves to its governing article by checking `articles/<ancestor>.md` on disk
(a few stats, SPEC §4 by construction) and only that one article's front matter is read.
Only the call's *input* is scanned, never its result or model prose.

State lives per session under `$XDG_STATE_HOME/canon/` (never inside the store): the
addresses surfaced in this compaction cycle and the reminders pending for the stop hook.
It is read and written under an exclusive lock and replaced atomically, because an agent may
run several hook processes for one session at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from canon_ls.core.address import OutsideStore, ancestors, article_file, normalise

# Tools whose path arguments are written, per agent (Codex edits through `apply_patch`).
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit", "apply_patch"})
SHELL_TOOLS = frozenset({"Bash", "shell", "local_shell", "exec_command", "container.exec"})
PATH_KEYS = frozenset({"file_path", "path", "notebook_path", "filePath", "paths", "file", "files"})
# Session sources that start a new compaction cycle; `resume` keeps the cycle.
NEW_CYCLE = frozenset({"startup", "clear", "compact", "fork"})
MAX_TOKENS = 64
MAX_COMMAND = 20_000
STATE_DAYS = 14  # session state older than this is deleted when a new session starts

_CANON_TOOL = re.compile(r"^mcp__.+__canon$")
_PATCH_HEADER = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$", re.M)
_MUTATING_COMMANDS = frozenset(
    {"rm", "mv", "cp", "touch", "mkdir", "rmdir", "tee", "truncate", "ln", "install", "rsync",
     "patch", "unlink", "dd", "apply_patch", "chmod"}
)  # fmt: skip
_MUTATING_GIT = frozenset({"mv", "rm", "checkout", "restore", "apply", "am", "reset"})
_SEGMENT_OPS = frozenset({";", "&&", "||", "|", "&", "\n", "(", ")", ";;", "|&"})
_SEPARATOR_CHARS = frozenset("();|&\n")
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_PUNCT = "\"'`,;:()[]{}<>"


# --------------------------------------------------------------------------- tool inputs


# NamedTuples and plain classes, not dataclasses: importing and building dataclasses costs
# about 10 ms, paid by every hook process.
class Token(NamedTuple):
    """A path-like string from a tool input, and whether the call writes it."""

    text: str
    mutating: bool


def is_canon_tool(tool_name: str) -> bool:
    """The MCP `canon` tool under any server prefix (`mcp__canon__canon`, plugin forms)."""
    return bool(_CANON_TOOL.match(tool_name))


def tokens(tool_name: str, tool_input: object) -> list[Token]:
    """Path-like tokens of one tool call's input: at most MAX_TOKENS, path-shaped ones first."""
    out: list[Token] = []
    if not isinstance(tool_input, dict):
        return out
    if tool_name in EDIT_TOOLS:
        for value in _strings(tool_input):
            for header in _PATCH_HEADER.findall(value):
                out.append(Token(header, True))
        for key in PATH_KEYS:
            out.extend(Token(v, True) for v in _strings(tool_input.get(key)))
    elif tool_name in SHELL_TOOLS:
        command = tool_input.get("command", tool_input.get("cmd"))
        if isinstance(command, list):  # Codex argv form, e.g. ["bash", "-lc", "script"]
            argv = [str(c) for c in command]
            script = argv[2] if len(argv) >= 3 and argv[1] in ("-c", "-lc") else shlex.join(argv)
            out.extend(shell_tokens(script))
        elif isinstance(command, str):
            out.extend(shell_tokens(command))
        out.extend(Token(v, False) for v in _strings(tool_input.get("workdir")))
    else:
        for key, item in _items(tool_input):
            for text in _strings(item):
                if key in PATH_KEYS:
                    out.append(Token(text, False))
                else:
                    out.extend(Token(w, False) for w in text.split())
    found = _dedupe(out)
    # Path-shaped tokens first, so long prose cannot push the real paths past the cap.
    found.sort(key=lambda t: not ("/" in t.text or "." in t.text))
    return found[:MAX_TOKENS]


def shell_tokens(command: str) -> list[Token]:
    """Words of a shell command; arguments of recognised mutating commands count as writes."""
    command = command[:MAX_COMMAND]  # shlex is pure Python: bound the work per call
    out = [Token(h, True) for h in _PATCH_HEADER.findall(command)]
    for segment in _segments(_words(command)):
        mutating = _mutates(segment)
        redirect_next = False
        for word in segment:
            if word in _REDIRECTS:
                redirect_next = True
                continue
            if word.startswith("-") and "=" in word:
                word = word.split("=", 1)[1]
            elif word.startswith("-"):
                continue
            out.append(Token(word, mutating or redirect_next))
            redirect_next = False
    return out


def _words(command: str) -> list[str]:
    """Shell words with operators as separate words; a newline ends a command too."""
    words: list[str] = []
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars="();<>|&\n")
        lexer.whitespace_split = True
        lexer.whitespace = " \t\r"  # newlines come back as operator words
        words = list(lexer)
    except ValueError:  # unbalanced quotes: fall back to plain words, line by line
        for line in command.splitlines():
            words.extend(line.split())
            words.append(";")
    return words


def _segments(words: list[str]) -> Iterator[list[str]]:
    segment: list[str] = []
    for word in words:
        if word in _SEGMENT_OPS or (word and set(word) <= _SEPARATOR_CHARS):
            if segment:
                yield segment
            segment = []
        else:
            segment.append(word)
    if segment:
        yield segment


def _mutates(segment: list[str]) -> bool:
    words = [w for w in segment if "=" not in w or w.startswith("-")]
    while words and words[0] in {"sudo", "env", "command", "exec", "time", "nohup"}:
        words = words[1:]
    if not words:
        return False
    head = os.path.basename(words[0])
    if head in _MUTATING_COMMANDS:
        return True
    if head in {"sed", "perl", "ruby"}:
        return any(w.startswith("-i") or w == "--in-place" for w in words[1:])
    if head == "git":
        rest = [w for w in words[1:] if not w.startswith("-")]
        return bool(rest) and rest[0] in _MUTATING_GIT
    return False


def _strings(value: object, depth: int = 0) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif depth < 4 and isinstance(value, list):
        for item in value[:MAX_TOKENS]:
            yield from _strings(item, depth + 1)
    elif depth < 4 and isinstance(value, dict):
        for item in list(value.values())[:MAX_TOKENS]:
            yield from _strings(item, depth + 1)


def _items(value: dict[str, Any], depth: int = 0) -> Iterator[tuple[str, object]]:
    for key, item in list(value.items())[:MAX_TOKENS]:
        if isinstance(item, dict) and depth < 4:
            yield from _items(item, depth + 1)
        else:
            yield str(key), item


def _dedupe(found: list[Token]) -> list[Token]:
    seen: dict[str, bool] = {}
    for tok in found:
        text = tok.text.strip().strip(_PUNCT)
        if text.startswith("file://"):
            text = text[len("file://") :]
        if not text or len(text) > 1024 or "\x00" in text or "://" in text:
            continue
        if any(c in text for c in "*?$\n"):
            continue
        seen[text] = seen.get(text, False) or tok.mutating
    return [Token(t, m) for t, m in seen.items()]


# --------------------------------------------------------------------------- resolution


class Hit(NamedTuple):
    """A token that names something in the project: its address and governing article."""

    token: str
    relpath: str  # project-relative, '/' separated
    address: str
    governing: str | None  # None: nothing governs it
    article: bool  # the token is itself an article file of the store
    mutating: bool


class Resolver:
    """Resolves path tokens against one project's store by looking at the disk only."""

    def __init__(self, project: Path, cwd: Path | None = None) -> None:
        self.project = os.path.normpath(str(project))
        self.cwd = os.path.normpath(str(cwd)) if cwd else self.project
        self.store_dir = os.path.join(self.project, ".canon")
        self.articles_dir = Path(self.store_dir, "articles")
        self._articles = str(self.articles_dir)

    def active(self) -> bool:
        """Hooks act only in a project whose store has an articles folder (SPEC §11.3)."""
        return self.articles_dir.is_dir()

    def resolve(self, token: Token) -> Hit | None:
        """The project-relative path a token names, if it exists or its parent does."""
        raw = os.path.expanduser(token.text)
        full = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(self.cwd, raw))
        if full != self.project and not full.startswith(self.project + os.sep):
            return None
        rel = os.path.relpath(full, self.project).replace(os.sep, "/")
        if rel == "." or rel == ".git" or rel.startswith(".git/"):
            return None
        if full.startswith(self._articles + os.sep) and full.endswith(".md"):
            address = _strip_md(os.path.relpath(full, self._articles).replace(os.sep, "/"))
            return Hit(token.text, rel, address, address, True, token.mutating)
        if rel == ".canon" or rel.startswith(".canon/"):
            return None
        if not os.path.lexists(full):
            shaped = "/" in raw or "." in os.path.basename(raw)
            if not (shaped and os.path.isdir(os.path.dirname(full))):
                return None
        try:
            address = normalise(rel)
        except (OutsideStore, ValueError):
            return None
        if not address:
            return None
        return Hit(token.text, rel, address, self.governing(address), False, token.mutating)

    def governing(self, address: str) -> str | None:
        """SPEC §4 by stat: the nearest ancestor address whose article file exists."""
        for candidate in ancestors(address):
            if os.path.isfile(os.path.join(self._articles, candidate + ".md")):
                return candidate
        return None

    def governing_path(self, relpath: str) -> str | None:
        """The governing article of a project-relative path, as it is on disk now."""
        try:
            address = normalise(relpath)
        except (OutsideStore, ValueError):
            return None
        return self.governing(address) if address else None

    def article_mtime(self, address: str) -> int | None:
        try:
            return os.stat(os.path.join(self._articles, address + ".md")).st_mtime_ns
        except (OSError, ValueError):
            return None

    def capsule(self, address: str) -> str:
        """The capsule of one article ('' when it has none or cannot be read)."""
        # Imported here: most hook calls surface nothing and never pay for the parser.
        from canon_ls.core.article import parse

        try:
            path = article_file(self.articles_dir, address)
            data = path.read_bytes()
        except (OSError, ValueError):
            return ""
        return parse(data, address).capsule.strip()

    def address_of_arg(self, value: object) -> str | None:
        """The governing article of a `canon` tool `path` argument (a path or an address)."""
        if not isinstance(value, str) or not value.strip():
            return None
        text = value.strip()
        if os.path.isabs(text):
            full = os.path.normpath(text)
            if not full.startswith(self.project + os.sep):
                return None
            text = os.path.relpath(full, self.project)
        try:
            address = normalise(text)
        except (OutsideStore, ValueError):
            return None
        return address or None


def _strip_md(name: str) -> str:
    return name[: -len(".md")] if name.endswith(".md") else name


# --------------------------------------------------------------------------- session state


def state_dir() -> Path:
    """`$XDG_STATE_HOME/canon`, default `~/.local/state/canon` (never inside a store)."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local/state")
    return Path(base, "canon")


class SessionState:
    """What one session has seen this cycle and what the stop hook still has to say."""

    def __init__(
        self,
        surfaced: list[str] | None = None,
        pending: dict[str, dict[str, Any]] | None = None,
        subagents: dict[str, list[str]] | None = None,
    ) -> None:
        self.surfaced: list[str] = surfaced or []
        # governing address -> {"assets": [relpath, ...], "mtime": article mtime_ns at the edit}
        self.pending: dict[str, dict[str, Any]] = pending or {}
        # subagent id -> addresses surfaced to that subagent (its context is not the main one)
        self.subagents: dict[str, list[str]] = subagents or {}

    @classmethod
    def from_json(cls, data: object) -> SessionState:
        if not isinstance(data, dict):
            return cls()
        surfaced = [a for a in data.get("surfaced", []) if isinstance(a, str)]
        pending = {
            k: v
            for k, v in (data.get("pending") or {}).items()
            if isinstance(k, str) and isinstance(v, dict)
        }
        subagents = {
            k: [a for a in v if isinstance(a, str)]
            for k, v in (data.get("subagents") or {}).items()
            if isinstance(k, str) and isinstance(v, list)
        }
        return cls(surfaced, pending, subagents)

    def to_json(self) -> dict[str, Any]:
        return {"surfaced": self.surfaced, "pending": self.pending, "subagents": self.subagents}


def _safe_name(agent: str, session: str) -> str:
    clean = re.sub(r"[^A-Za-z0-9_.-]", "_", session)[:120].lstrip(".") or "default"
    return f"{re.sub(r'[^a-z0-9-]', '_', agent)}-{clean}"


@contextlib.contextmanager
def session_state(agent: str, session: str) -> Iterator[SessionState]:
    """Load, lock and atomically save one session's state around a hook's decision."""
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    name = _safe_name(agent, session)
    target = folder / f"{name}.json"
    lock_fd = os.open(folder / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _lock(lock_fd)
        try:
            state = SessionState.from_json(json.loads(target.read_text("utf-8")))
        except (OSError, ValueError):
            state = SessionState()
        yield state
        tmp = folder / f".{name}.{os.getpid()}.tmp"
        # Atomic, not durable: no fsync (it costs milliseconds per tool call, and losing the
        # last decision in a power cut only repeats a capsule).
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(state.to_json(), fh)
        os.replace(tmp, target)
    finally:
        os.close(lock_fd)  # closing releases the lock


def prune_states(days: int = STATE_DAYS) -> None:
    """Delete session state files not touched for `days` (best effort, never fatal)."""
    folder = state_dir()
    cutoff = time.time() - days * 86400
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        with contextlib.suppress(OSError):
            if entry.is_file() and entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: the atomic replace still holds
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


# --------------------------------------------------------------------------- decisions


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

    def session_start(self, source: str) -> None:
        """startup/clear/compact/fork start a cycle: surfaced articles may surface again."""
        if source in NEW_CYCLE:
            self.state.surfaced = []
            self.state.subagents = {}
            if source != "compact":
                self.state.pending = {}
            self._trace("cycle", source=source)

    def post_tool(self, tool_name: str, tool_input: object, tool_response: object) -> str:
        """The additional context for a finished tool call ('' for none)."""
        if is_canon_tool(tool_name):
            self._canon_call(tool_input, tool_response)
            return ""
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
                continue
            if hit.mutating and ok:
                self._remember_edit(hit.governing, hit.relpath)
            if hit.governing in self.seen:
                self._trace(
                    "already", token=hit.token, address=hit.address, governing=hit.governing
                )
                continue
            self.seen.append(hit.governing)
            lines.append(self._line(hit))
            self._trace("surfaced", token=hit.token, address=hit.address, governing=hit.governing)
        if not lines:
            return ""
        return "canon project memory for the files this call touched:\n" + "\n".join(lines)

    def stop(self, stop_hook_active: bool) -> str:
        """The stop hook's block reason ('' to let the agent stop)."""
        if stop_hook_active:
            self._trace("stop-quiet", reason="stop_hook_active")
            return ""
        due: dict[str, list[str]] = {}
        for address, entry in self.state.pending.items():
            if self.resolver.article_mtime(address) != entry.get("mtime"):
                continue  # written since the edit (by the tool, an editor or by hand)
            # An asset now governed by a nearer article (written since) is settled too.
            assets = [
                str(a)
                for a in entry.get("assets", [])
                if self.resolver.governing_path(str(a)) == address
            ]
            if assets:
                due[address] = assets
        self.state.pending = {}
        if not due:
            return ""
        self._trace("remind", governing=sorted(due))
        lines = [f"- {a} (you changed {', '.join(sorted(set(due[a]))[:5])})" for a in sorted(due)]
        return (
            "canon: these articles govern files you changed and were not updated since:\n"
            + "\n".join(lines)
            + "\nIf what an article says no longer holds, update it with the canon tool (action "
            '"write", path "<address>"); narrative history goes to action "journal". '
            "Then finish."
        )

    # -- helpers

    def _line(self, hit: Hit) -> str:
        governing = hit.governing or ""
        capsule = self.resolver.capsule(governing)
        name = governing if governing == hit.address else f"{governing} (governs {hit.relpath})"
        if capsule:
            return f"- {name}: {capsule}"
        return (
            f'- {name}: article without a capsule; read it with the canon tool (action "read", '
            f'path "{governing}").'
        )

    def _remember_edit(self, governing: str, relpath: str) -> None:
        entry = self.state.pending.setdefault(governing, {"assets": []})
        if relpath not in entry["assets"]:
            entry["assets"].append(relpath)
        entry["mtime"] = self.resolver.article_mtime(governing)

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
            governing = self.resolver.governing(address)
            if governing:
                self._touch_article(governing, written=False)
        elif succeeded(tool_response) and "refus" not in _text(tool_response).lower():
            self._touch_article(address, written=True)

    def _trace(self, decision: str, **fields: Any) -> None:
        self.trace.append({"decision": decision, **fields})


def canon_cli_calls(command: str) -> list[tuple[str, str]]:
    """(action, path) for each `canon read|write PATH` segment of a shell command."""
    calls = []
    for segment in _segments(_words(command)):
        if (
            len(segment) >= 3
            and os.path.basename(segment[0]) == "canon"
            and segment[1] in ("read", "write")
            and not segment[2].startswith("-")
        ):
            calls.append((segment[1], segment[2]))
    return calls


def succeeded(response: object) -> bool:
    """False when a tool response says the call failed (exit code, error flag).

    Claude Code reports failures as PostToolUseFailure, so its PostToolUse means success
    (Bash may still say `interrupted`). Codex prefixes apply_patch results with `Exit code: N`
    but gives a shell call only its output, so a failed Codex shell command still counts.
    """
    if isinstance(response, str):
        match = re.match(r"Exit code: (\d+)", response)
        return match is None or match.group(1) == "0"
    if isinstance(response, dict):
        if response.get("is_error") is True or response.get("isError") is True:
            return False
        if response.get("success") is False or response.get("interrupted") is True:
            return False
        for key in ("exit_code", "exitCode", "returncode"):
            code = response.get(key)
            if isinstance(code, int) and code != 0:
                return False
    return True


def _text(response: object) -> str:
    if isinstance(response, str):
        return response
    return json.dumps(response, ensure_ascii=False)[:2000]


def write_trace(path: str, agent: str, session: str, event: str, entries: list[dict]) -> None:
    """CANON_TRACE: one JSON line per surfacing decision, appended (never fatal)."""
    if not path or not entries:
        return
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    lines = "".join(
        json.dumps({"ts": stamp, "agent": agent, "session": session, "event": event, **e}) + "\n"
        for e in entries
    )
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, lines.encode("utf-8"))
        finally:
            os.close(fd)
