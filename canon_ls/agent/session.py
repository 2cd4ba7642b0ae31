"""Per-session hook state and the decision trace (SPEC §11.3, §13 `canon stats`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from canon_ls.core.storage import fsio

STATE_DAYS = 14  # session state older than this is deleted when a new session starts


def state_dir() -> Path:
    """`$XDG_STATE_HOME/canon`, default `~/.local/state/canon` (never inside a store)."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local/state")
    return Path(base, "canon")


def _strings(value: object) -> list[str]:
    return [a for a in value if isinstance(a, str)] if isinstance(value, list) else []


def string_or_empty(value: object) -> str:
    return value if isinstance(value, str) else ""


def _dict(value: object) -> dict[str, Any]:
    return {k: v for k, v in value.items() if isinstance(k, str)} if isinstance(value, dict) else {}


class SessionState:
    """What one session has seen this cycle and what the stop hook still has to say."""

    def __init__(self, data: object = None) -> None:
        raw = _dict(data)
        self.project: str = string_or_empty(raw.get("project"))
        self.surfaced: list[str] = _strings(raw.get("surfaced"))
        # governing address -> {"assets": [relpath, ...], "stamp": the article stat key at the edit}
        self.pending: dict[str, dict[str, Any]] = {
            k: v for k, v in _dict(raw.get("pending")).items() if isinstance(v, dict)
        }
        # subagent id -> addresses surfaced to that subagent (its context is not the main one)
        self.subagents: dict[str, list[str]] = {
            k: _strings(v) for k, v in _dict(raw.get("subagents")).items()
        }
        # the retrieval lane (SPEC §11.4): recent prompts (newest first), this turn's calls,
        # the addresses it delivered this cycle, the intent it last ranked
        self.prompts: list[str] = _strings(raw.get("prompts"))
        self.turn: list[str] = _strings(raw.get("turn"))
        self.ranked: list[str] = _strings(raw.get("ranked"))
        self.intent: str = string_or_empty(raw.get("intent"))
        # Pi: how each delivered article is found in the provider's projection (presence.py)
        self.marks: dict[str, list[str]] = {
            k: v for k, v in _dict(raw.get("marks")).items() if _strings(v) == v and len(v) == 2
        }
        # running totals for `canon stats`
        self.stats: dict[str, Any] = _dict(raw.get("stats"))

    def to_json(self) -> dict[str, Any]:
        """Every attribute, by name: each one `__init__` reads back is saved state."""
        return dict(vars(self))


def _safe_name(agent: str, session: str) -> str:
    """`<agent>-<readable part of the id>-<hash of the whole id>`."""
    readable = re.sub(r"[^A-Za-z0-9_-]", "_", session)[:60]
    digest = hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{re.sub(r'[^a-z0-9-]', '_', agent)}-{readable}-{digest}"


@contextlib.contextmanager
def session_state(agent: str, session: str) -> Iterator[SessionState]:
    """Load, lock and atomically save one session's state around a hook's decision."""
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    name = _safe_name(agent, session)
    target = folder / f"{name}.json"
    lock_fd = os.open(folder / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        with fsio.locked(lock_fd):  # core's one lock
            try:
                state = SessionState(json.loads(fsio.read_regular(target, 1 << 24)[0]))  # no FIFO
            except (OSError, ValueError, RecursionError):
                state = SessionState()
            yield state
            # core's one atomic writer, not durable: no fsync (it costs milliseconds per tool
            # call, and losing the last decision in a power cut only repeats a capsule).
            data = json.dumps(state.to_json()).encode("utf-8")
            fsio.atomic_write(target, data, 0o600, durable=False)
    finally:
        os.close(lock_fd)


def states() -> Iterator[tuple[str, SessionState]]:
    """Every stored session state: (file stem `<agent>-<session>`, state), for `canon stats`."""
    try:
        entries = sorted(state_dir().glob("*.json"))
    except OSError:
        return
    for path in entries:
        with contextlib.suppress(OSError, ValueError, RecursionError):
            yield path.stem, SessionState(json.loads(fsio.read_regular(path, 1 << 24)[0]))


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
