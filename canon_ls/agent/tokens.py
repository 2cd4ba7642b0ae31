"""What an agent's tool call names (SPEC §11.3): path tokens of its input, and its outcome."""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterator
from typing import Any, NamedTuple

# Tools whose path arguments are written, per agent (Codex edits through `apply_patch`).
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit", "apply_patch"})
SHELL_TOOLS = frozenset({"Bash", "shell", "local_shell", "exec_command", "container.exec"})
PATH_KEYS = frozenset({"file_path", "path", "notebook_path", "filePath", "paths", "file", "files"})
MAX_TOKENS = 64
MAX_COMMAND = 20_000

# Ours under any MCP prefix, and pi-canon's (`pi_canon`: Pi's native tool, or its MCP server's):
# one repository may run both, and a read through either is a read of the article.
_CANON_TOOL = re.compile(r"^(?:mcp__.+__(?:pi_)?canon|pi_canon)$")
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


# NamedTuples and plain classes, not dataclasses: importing and building dataclasses costs
# about 10 ms, paid by every hook process.
class Token(NamedTuple):
    """A path-like string from a tool input, and whether the call writes it."""

    text: str
    mutating: bool


def is_canon_tool(tool_name: str) -> bool:
    """The MCP `canon` tool under any server prefix."""
    return bool(_CANON_TOOL.match(tool_name))


def tokens(tool_name: str, tool_input: object) -> list[Token]:
    """Path-like tokens of one tool call's input: at most MAX_TOKENS, path-shaped ones first."""
    out: list[Token] = []
    if not isinstance(tool_input, dict):
        return out
    if tool_name in EDIT_TOOLS:
        out += [Token(h, True) for v in _strings(tool_input) for h in _PATCH_HEADER.findall(v)]
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
            if ":" in word:  # `git show REV:path` names its path after the colon
                out.append(Token(word.partition(":")[2], False))
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
        words = [w for line in command.splitlines() for w in (*line.split(), ";")]
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
        text = tok.text.strip().strip(_PUNCT).removeprefix("file://")
        if not text or len(text) > 1024 or "://" in text or any(c in text for c in "*?$\n\x00"):
            continue
        seen[text] = seen.get(text, False) or tok.mutating
    return [Token(t, m) for t, m in seen.items()]


def canon_cli_calls(command: str) -> list[tuple[str, str]]:
    """(action, path) for each `canon read|write PATH` segment of a shell command."""
    return [
        (s[1], s[2])
        for s in _segments(_words(command))
        if len(s) >= 3 and os.path.basename(s[0]) == "canon"
        if s[1] in ("read", "write") and not s[2].startswith("-")
    ]


def succeeded(response: object) -> bool:
    """False when a tool response says the call failed (exit code, error flag)."""
    if isinstance(response, list):  # content blocks (a PostToolBatch call's result)
        texts = [b.get("text") for b in response if isinstance(b, dict)]
        response = "\n".join(t for t in texts if isinstance(t, str))
    if isinstance(response, str):  # `<tool_use_error>`: Claude Code's failed call in a batch
        match = re.match(r"Exit code:? (\d+)", response)
        failed = response.lstrip().startswith("<tool_use_error>")
        return not failed and (match is None or match.group(1) == "0")
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


def response_text(response: object) -> str:
    """A tool response as text (bounded), to look for a refusal in it."""
    return (
        response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)[:2000]
    )
