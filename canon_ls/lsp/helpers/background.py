"""Whole-store work in a child process, so the server's event loop never starves (GIL)."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import pickle
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from canon_ls.lsp.helpers.child import spawn, step_back

# The child imports no asyncio, logging or tempfile (with ssl, about 14 MB of its memory): the
# server's side of this module imports them where it runs.


@dataclass
class Snapshot:
    """What the whole-store pass found, as small plain data."""

    findings: list[Any] = field(default_factory=list)
    stale: dict[str, str] = field(default_factory=dict)
    evidence: dict[str, Any] = field(default_factory=dict)  # stale article -> core Evidence
    newest: dict[str, tuple[float, str]] = field(default_factory=dict)
    moves: dict[str, list[str]] = field(default_factory=dict)  # orphan -> renamed-asset guesses
    dirs: list[str] = field(default_factory=list)  # asset directories ('' = the project root)
    seconds: float = 0.0
    git_seconds: float = 0.0  # the ChangeTimes pass (git log + status), running alongside
    partial: bool = False  # True: no staleness yet (stale, newest empty); the final follows
    error: str | None = None


# A snapshot's big fields go as pieces of this many items, one frame each, ahead of the rest:
# the server unpickles one between two turns of its loop (the final snapshot at 50k articles
# took tens of ms in one go).
PIECE = 100
PIECED = ("findings", "dirs", "stale", "evidence", "newest", "moves")  # Snapshot's big fields
_LISTS = ("findings", "dirs")  # the others are dicts


@dataclass
class Piece:
    """Items of the next Snapshot's field `name`: a list's items or a dict's pairs."""

    name: str
    items: list[Any]


@dataclass
class Loaded:
    """The child's store has read its articles, and written its parse cache when it writes one."""


def compute(
    project: Path,
    options: dict[str, Any],
    staleness: bool,
    partial: Callable[[Snapshot], None] | None = None,
    loaded: Callable[[], None] | None = None,
    git_first: bool = False,
    holding: contextlib.ExitStack | None = None,
) -> Snapshot:
    """core's whole-store pass (`check.run`, two phases), as Snapshots for the wire;
    `git_first`: the server loads its own store (git reads end before this one loads, then
    a git slot is held, on `holding` when given)."""
    from canon_ls.core.checking import check

    def on_partial(early: check.Pass) -> None:
        if partial is not None:
            partial(_snapshot(early))

    done = check.run(
        project, options, staleness, on_partial if partial else None, loaded, git_first, holding
    )
    return _snapshot(done)


def _snapshot(done: Any) -> Snapshot:
    """A core `Pass` (every field of it) with its stale sentences."""
    return Snapshot(stale={a: e.message() for a, e in done.evidence.items()}, **vars(done))


def main() -> None:
    step_back(0)
    request = json.loads(sys.stdin.buffer.read() or b"{}")
    with contextlib.ExitStack() as holding:  # the loaded store's slot, until the answer is sent
        try:
            snapshot = compute(
                Path(request["project"]),
                request.get("options") or {},
                bool(request.get("staleness")),
                partial=_emit_snapshot,
                loaded=lambda: _emit(Loaded()),
                git_first=bool(request.get("git_first")),
                holding=holding,
            )
        except Exception as exc:
            snapshot = Snapshot(error=f"{type(exc).__name__}: {exc}")
        _emit_snapshot(snapshot)


def _emit_snapshot(snapshot: Snapshot) -> None:
    """The snapshot's big fields in pieces, then the snapshot without them."""
    for name in PIECED:
        value = getattr(snapshot, name)
        items = value if isinstance(value, list) else list(value.items())
        for start in range(0, len(items), PIECE):
            _emit(Piece(name, items[start : start + PIECE]))
        setattr(snapshot, name, type(value)())
    _emit(snapshot)


def _emit(frame: Snapshot | Piece | Loaded) -> None:
    data = pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL)
    sys.stdout.buffer.write(len(data).to_bytes(8, "big") + data)
    sys.stdout.buffer.flush()


# glibc's allocator for the child (a user's own setting wins): a fixed mmap threshold hands
# every freed big buffer (git's output, the listing, the parse cache's records) back to the
# system at once instead of raising the threshold and keeping them in the heap, and two arenas
# are plenty for its two threads (docs/BENCHMARKS.md, "the check child").
CHILD_MALLOC = {"MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_ARENA_MAX": "2"}


def child_env() -> dict[str, str]:
    """The environment of the check child: ours plus CHILD_MALLOC where not set."""
    return {**CHILD_MALLOC, **os.environ}


async def run(
    project: Path,
    options: dict[str, Any],
    staleness: bool,
    on_partial: Callable[[Snapshot], Awaitable[None]] | None = None,
    on_loaded: Callable[[], None] | None = None,
) -> Snapshot:
    """Run `compute` in a fresh child process and await its result without blocking the loop."""
    import asyncio
    import tempfile

    with tempfile.TemporaryFile() as errors:  # the child's stderr: never a full pipe
        proc = await spawn(
            "canon_ls.lsp.helpers.background",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=errors,
            cwd=str(project),
            env=child_env(),
            start_new_session=True,  # its own process group: the git it runs ends with it (POSIX)
        )
        assert proc.stdin is not None and proc.stdout is not None
        # Nobody waits for the child's parse cache: its git reads end before its store loads
        payload = json.dumps(
            {
                "project": str(project),
                "options": options,
                "staleness": staleness,
                "git_first": on_loaded is None,
            }
        )
        final: Snapshot | None = None
        try:
            proc.stdin.write(payload.encode())
            await proc.stdin.drain()
            proc.stdin.close()
            while final is None:
                result = await _next_snapshot(proc.stdout, on_loaded)
                if not result.partial:
                    final = result
                elif on_partial is not None:
                    await on_partial(result)
            await proc.wait()
        except asyncio.CancelledError:
            if proc.returncode is None:  # with its git (a history pass ran on 12 s, orphaned)
                with contextlib.suppress(ProcessLookupError):
                    if sys.platform == "win32":
                        proc.kill()
                    else:
                        os.killpg(proc.pid, signal.SIGKILL)
            raise
        except (asyncio.IncompleteReadError, BrokenPipeError, ConnectionResetError):
            await proc.wait()
        if final is None:
            errors.seek(0)
            message = errors.read().decode("utf-8", "replace").strip().splitlines()
            return Snapshot(error=message[-1] if message else f"exit code {proc.returncode}")
        return final


async def _next_snapshot(stdout: Any, on_loaded: Callable[[], None] | None) -> Snapshot:
    """Read frames up to the next Snapshot, its pieces put back in place."""
    from canon_ls.lsp.startup.turns import (
        yield_to_requests,  # the server's side: asyncio, not the child
    )

    pieces: dict[str, Any] = {}
    while True:
        size = int.from_bytes(await stdout.readexactly(8), "big")
        data = await stdout.readexactly(size)
        # Everything alive now (the store loaded by the first request, above all) is long
        # lived: frozen, the collections the unpickling triggers scan only new objects (a
        # full collection over the 10k-article store stalled the loop ~30 ms).
        gc.freeze()
        result = pickle.loads(data)  # our own child's output
        if isinstance(result, Piece):
            if result.name in _LISTS:
                pieces.setdefault(result.name, []).extend(result.items)
            else:
                pieces.setdefault(result.name, {}).update(result.items)
            await yield_to_requests()
        elif isinstance(result, Loaded):
            if on_loaded is not None:
                on_loaded()
        else:
            assert isinstance(result, Snapshot)
            for name, value in pieces.items():
                setattr(result, name, value)
            return result


if __name__ == "__main__":
    # Run the imported module's main so pickled classes name `canon_ls.lsp.helpers.background`.
    from canon_ls.lsp.helpers.background import main as _main

    _main()
