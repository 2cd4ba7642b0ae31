"""The one way canon runs git (SPEC §9, §12): read-only, and never a program the repository's
configuration names.

A repository's config (or its .gitattributes) can name programs git runs on its own:
`core.fsmonitor`, a pager, `diff.external`, textconv and diff drivers, clean/smudge/process
filters (git status hashes files whose stat changed), `gpg.program` through
`log.showSignature`, hooks. Every call here passes `--no-pager`, `-c core.fsmonitor=false`,
`-c log.showSignature=false`, hooks pointed at nothing, `--no-ext-diff --no-textconv` for
commands that can diff, every configured filter driver emptied (and not required) for commands
that hash the work tree, and runs with GIT_OPTIONAL_LOCKS=0 (no index refresh is written).

A git process that blocks opening a FIFO (a `.gitignore` or `.gitattributes` that is a named
pipe) is noticed within a fraction of a second on Linux and killed: the caller gets None, as
for any failure, and falls back to what it does without git.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

TIMEOUT = 120.0
_POLL = 0.2
_SAFE = (
    "--no-pager",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.quotePath=false",
    "-c",
    "log.showSignature=false",
    "-c",
    f"core.hooksPath={os.devnull}",
    "-c",
    "diff.external=",
    "-c",
    "core.pager=cat",
)
_DIFFING = frozenset({"log", "show", "diff", "diff-index", "diff-files", "diff-tree"})
_HASHING = frozenset({"status", "diff", "diff-index", "diff-files"})
_FIFO_WAITS = frozenset(
    {"wait_for_partner", "fifo_open", "pipe_read", "pipe_wait", "pipe_wait_readable"}
)


def environment() -> dict[str, str]:
    """The environment git runs in: no pager, no prompt, no optional index writes."""
    env = dict(os.environ)
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_PAGER="cat", PAGER="cat", GIT_TERMINAL_PROMPT="0")
    return env


def _filters(cwd: Path) -> list[str]:
    """`-c` pairs emptying every filter driver the config defines (their names come from
    `git config`, which itself runs nothing)."""
    out = _wait(
        _start(["git", *_SAFE, "config", "-z", "--name-only", "--get-regexp", r"^filter\."], cwd)
    )
    drivers: set[str] = set()
    for key in (out or b"").decode("utf-8", "surrogateescape").split("\0"):
        name, dot, _field = key.removeprefix("filter.").rpartition(".")
        if dot and key.startswith("filter.") and name:
            drivers.add(name)
    pairs: list[str] = []
    for name in sorted(drivers):
        for field, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")):
            pairs += ["-c", f"filter.{name}.{field}={value}"]
    return pairs


def command(cwd: Path, args: Sequence[str]) -> list[str]:
    """The full argv for `git [global options] <subcommand> …` with every guard in place."""
    at = 0  # the subcommand: the first argument that is no global option nor a `-c` value
    while at < len(args) and args[at].startswith("-"):
        at += 2 if args[at] == "-c" else 1
    at = min(at, len(args))
    sub = args[at] if at < len(args) else ""
    argv = ["git", *_SAFE, *args[:at]]
    if sub in _HASHING:
        argv += _filters(cwd)
    argv += list(args[at : at + 1])
    if sub in _DIFFING:
        argv += ["--no-ext-diff", "--no-textconv"]
    argv += list(args[at + 1 :])
    return argv


def run(cwd: Path, *args: str, timeout: float = TIMEOUT) -> bytes | None:
    """Run one read-only git command; its stdout, or None when git is missing, fails, times
    out, blocks on a FIFO, or this is no repository."""
    return _wait(_start(command(cwd, args), cwd), timeout)


def run_many(cwd: Path, *commands: Sequence[str]) -> list[bytes | None]:
    """Several read-only git commands at once (two cores halve the wait). Each output is read
    by its own thread: read one after the other, a command with more to say than a pipe holds
    (64 KB) would wait for the one before it to end."""
    procs = [_start(command(cwd, tuple(args)), cwd) for args in commands]
    if len(procs) < 2:
        return [_wait(proc) for proc in procs]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(procs)) as pool:
        return list(pool.map(_wait, procs))


def _start(argv: list[str], cwd: Path) -> subprocess.Popen[bytes] | None:
    try:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            env=environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None


def _wait(proc: subprocess.Popen[bytes] | None, timeout: float = TIMEOUT) -> bytes | None:
    if proc is None:
        return None
    waited = 0.0
    while True:
        try:
            data, _ = proc.communicate(timeout=_POLL)
            break
        except subprocess.TimeoutExpired:
            waited += _POLL
            if waited >= timeout or _blocked_on_fifo(proc.pid):
                proc.kill()
                proc.communicate()
                return None
    return data if proc.returncode == 0 else None


def _blocked_on_fifo(pid: int) -> bool:
    """Whether the process sleeps opening or reading a named pipe (Linux; elsewhere the
    overall timeout applies)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        with open(f"/proc/{pid}/wchan", encoding="ascii", errors="replace") as fh:
            return fh.read().strip() in _FIFO_WAITS
    except OSError:
        return False
