"""Whole-store work in a child process, so the server's event loop never starves (GIL).

`python -m canon_ls.lsp.background` reads `{"project", "options", "staleness"}` as JSON on
stdin, runs the one git pass and the full `check`, and writes plain results on stdout as
length-prefixed pickles: first a partial Snapshot (everything but staleness, ready while
`git log` still runs), then the final one. The server awaits it as an asyncio subprocess: no
thread of ours holds the GIL while requests are answered. The child imports only
`canon_ls.core`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import pickle
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from canon_ls.lsp.child import python_module

log = logging.getLogger(__name__)


@dataclass
class Snapshot:
    """What the whole-store pass found, as small plain data.

    Not the `Assets`/`ChangeTimes` objects themselves: at 100k files they unpickle for ~2 s
    and hold ~60 MB, which would stall the server's loop. The server needs only, per article,
    its newest governed change (for staleness after an edit) and, per orphan, likely renames.
    """

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


def compute(
    project: Path,
    options: dict[str, Any],
    staleness: bool,
    partial: Callable[[Snapshot], None] | None = None,
) -> Snapshot:
    """The whole-store pass, with the one `git log` (the long pole: 2.5-5.6 s at 100k files)
    running from the first moment while the rest of the check, which does not need it, runs:
    the listing, the articles' parse, the lints, links, relations and orphans. Those are
    handed to `partial` (when given and staleness is on) before waiting for git."""
    from canon_ls.core import assets as core_assets
    from canon_ls.core.project import open_store

    started = time.perf_counter()
    box: dict[str, Any] = {}
    worker = None
    if staleness:  # git works in its own process; this thread mostly waits for its output
        worker = threading.Thread(target=_times, args=(core_assets, project, box), daemon=True)
        worker.start()
        _yield_cpu()
    store = open_store(project, options)
    assets = core_assets.Assets(project, store_root=store.root)
    findings = core_assets.check(store, assets, None, staleness=False)
    orphans = [f.address for f in findings if f.code == "orphan"]
    snapshot = Snapshot()
    snapshot.moves = _move_guesses(store, assets.files(), orphans, core_assets.address_of_path)
    snapshot.dirs = ["", *sorted(assets.dirs())]  # for a watcher of asset creations/deletions
    if worker is not None:
        if partial is not None:
            partial(
                Snapshot(
                    findings=list(findings),
                    moves=snapshot.moves,
                    seconds=time.perf_counter() - started,
                    partial=True,
                )
            )
        # Which article governs each file does not depend on git: map it while git runs, so
        # only the times are left for after (core's stale() walks the 100k files itself).
        mounts = store.mounts
        projects = [
            a for a in store.addresses() if not (":" in a and a.partition(":")[0] in mounts)
        ]
        articles = set(projects)
        governed = core_assets.governed_pairs(articles, assets)
        worker.join()
        if "error" in box:
            raise box["error"]
        times, snapshot.git_seconds = box["times"], box["seconds"]
        snapshot.newest = core_assets.newest_changes(governed, times)
        # the same verdicts and evidence as core's stale(), from the same pairs and times
        evidence = core_assets.stale_evidence(store, assets, times, governed, snapshot.newest)
        findings += [core_assets.stale_finding(e) for e in evidence.values()]
        snapshot.evidence = evidence
        stale = {a: e.message() for a, e in evidence.items()}
        # the order check() gives (a stable sort: stale after the others at the same place)
        order = {a: i for i, a in enumerate(store.addresses())}
        findings.sort(key=lambda f: (order.get(f.address, -1), f.line, f.start))
        snapshot.stale = stale
    snapshot.findings = list(findings)
    snapshot.seconds = time.perf_counter() - started
    return snapshot


def _yield_cpu() -> None:
    """Lower this thread's priority only (Linux niceness is per thread): git, forked from the
    worker thread, and the server answering its first hover (the in-process store load) go
    first on a 2-core machine; this work is not on the critical path while git runs."""
    with contextlib.suppress(Exception):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 5)


def _times(core_assets: Any, project: Path, box: dict[str, Any]) -> None:
    started = time.perf_counter()
    try:
        box["times"] = core_assets.ChangeTimes(project)
        box["seconds"] = time.perf_counter() - started
    except Exception as exc:  # re-raised by compute on the main thread
        box["error"] = exc


def _move_guesses(
    store: Any, files: list[str], orphans: list[str], address_of: Any, limit: int = 3
) -> dict[str, list[str]]:
    """For each orphan, assets named like it (a likely rename) that have no article yet."""
    if not orphans:
        return {}
    by_leaf: dict[str, list[str]] = {}
    for address in orphans:
        by_leaf.setdefault(address.rsplit("/", 1)[-1], []).append(address)
    out: dict[str, list[str]] = {}
    for path in files:
        name = path.rsplit("/", 1)[-1]
        leaf = name.split(".", 1)[0] if not name.startswith(".") else name
        for orphan in by_leaf.get(leaf, ()):
            candidate = address_of(path)
            guesses = out.setdefault(orphan, [])
            if (
                candidate != orphan
                and len(guesses) < limit
                and candidate not in guesses
                and not store.has(candidate)
            ):
                guesses.append(candidate)
    return {k: v for k, v in out.items() if v}


def main() -> None:
    request = json.loads(sys.stdin.buffer.read() or b"{}")
    try:
        snapshot = compute(
            Path(request["project"]),
            request.get("options") or {},
            bool(request.get("staleness")),
            partial=_emit,
        )
    except Exception as exc:
        snapshot = Snapshot(error=f"{type(exc).__name__}: {exc}")
    _emit(snapshot)


def _emit(snapshot: Snapshot) -> None:
    data = pickle.dumps(snapshot, protocol=pickle.HIGHEST_PROTOCOL)
    sys.stdout.buffer.write(len(data).to_bytes(8, "big") + data)
    sys.stdout.buffer.flush()


async def run(
    project: Path,
    options: dict[str, Any],
    staleness: bool,
    on_partial: Callable[[Snapshot], Awaitable[None]] | None = None,
) -> Snapshot:
    """Run `compute` in a fresh child process and await its result without blocking the loop.

    The partial snapshot, if the child sends one, is awaited through `on_partial` while the
    child's git pass goes on; the final snapshot is returned.
    """
    proc = await asyncio.create_subprocess_exec(
        *python_module("canon_ls.lsp.background"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(project),
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    errors = asyncio.ensure_future(proc.stderr.read())  # drained so the child never blocks
    payload = json.dumps({"project": str(project), "options": options, "staleness": staleness})
    final: Snapshot | None = None
    try:
        proc.stdin.write(payload.encode())
        await proc.stdin.drain()
        proc.stdin.close()
        while final is None:
            size = int.from_bytes(await proc.stdout.readexactly(8), "big")
            data = await proc.stdout.readexactly(size)
            # Everything alive now (the store loaded by the first request, above all) is long
            # lived: frozen, the collections the unpickling triggers scan only new objects (a
            # full collection over the 10k-article store stalled the loop ~30 ms).
            gc.freeze()
            result = pickle.loads(data)  # our own child's output
            assert isinstance(result, Snapshot)
            if not result.partial:
                final = result
            elif on_partial is not None:
                await on_partial(result)
        await proc.wait()
    except asyncio.CancelledError:
        if proc.returncode is None:
            proc.kill()
        errors.cancel()
        raise
    except (asyncio.IncompleteReadError, BrokenPipeError, ConnectionResetError):
        await proc.wait()
    err = await errors
    if final is None:
        message = err.decode("utf-8", "replace").strip().splitlines()
        return Snapshot(error=message[-1] if message else f"exit code {proc.returncode}")
    return final


if __name__ == "__main__":
    # Run the imported module's main so pickled classes name `canon_ls.lsp.background`.
    from canon_ls.lsp.background import main as _main

    _main()
