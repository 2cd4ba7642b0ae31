"""Whole-store work in a child process, so the server's event loop never starves (GIL).

`python -m canon_ls.lsp.background` reads `{"project", "options", "staleness"}` as JSON on
stdin, runs the one git pass and the full `check`, and writes a pickle of plain results on
stdout. The server awaits it as an asyncio subprocess: no thread of ours holds the GIL while
requests are answered. The child imports only `canon_ls.core`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import pickle
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    newest: dict[str, tuple[float, str]] = field(default_factory=dict)
    moves: dict[str, list[str]] = field(default_factory=dict)  # orphan -> renamed-asset guesses
    seconds: float = 0.0
    error: str | None = None


def compute(project: Path, options: dict[str, Any], staleness: bool) -> Snapshot:
    from canon_ls.core import assets as core_assets
    from canon_ls.core.project import open_store

    started = time.perf_counter()
    store = open_store(project, options)
    # git does the heavy lifting in its own processes; list and log while the store parses.
    box: dict[str, Any] = {}
    worker = threading.Thread(
        target=_git_side, args=(core_assets, project, store.root, staleness, box), daemon=True
    )
    worker.start()
    store.addresses()  # parse every article meanwhile
    worker.join()
    if "error" in box:
        raise box["error"]
    assets, times = box["assets"], box.get("times")
    findings = core_assets.check(store, assets, times)
    stale = core_assets.stale(store, assets, times) if times is not None else {}
    if not staleness:
        findings = [f for f in findings if f.code != "stale"]
    snapshot = Snapshot(findings=list(findings), stale=dict(stale))
    if times is not None:
        snapshot.newest = _newest(store, assets, times, core_assets.address_of_path)
    orphans = [f.address for f in findings if f.code == "orphan"]
    snapshot.moves = _move_guesses(store, assets.files(), orphans, core_assets.address_of_path)
    snapshot.seconds = time.perf_counter() - started
    return snapshot


def _git_side(core_assets: Any, project: Path, root: Path, staleness: bool, box: dict) -> None:
    try:
        box["assets"] = core_assets.Assets(project, store_root=root)
        if staleness:
            box["times"] = core_assets.ChangeTimes(project)
    except Exception as exc:  # re-raised by compute on the main thread
        box["error"] = exc


def _newest(store: Any, assets: Any, times: Any, address_of: Any) -> dict[str, tuple[float, str]]:
    """Article -> (newest change, file) over the files it governs (SPEC §9), one pass."""
    newest: dict[str, tuple[float, str]] = {}
    for path in assets.files():
        governing = store.governing(address_of(path))
        if governing is None or ":" in governing:
            continue
        ts = times.of(path)
        seen = newest.get(governing)
        if seen is None or ts > seen[0]:
            newest[governing] = (ts, path)
    return newest


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
            Path(request["project"]), request.get("options") or {}, bool(request.get("staleness"))
        )
    except Exception as exc:
        snapshot = Snapshot(error=f"{type(exc).__name__}: {exc}")
    sys.stdout.buffer.write(pickle.dumps(snapshot, protocol=pickle.HIGHEST_PROTOCOL))
    sys.stdout.buffer.flush()


async def run(project: Path, options: dict[str, Any], staleness: bool) -> Snapshot:
    """Run `compute` in a fresh child process and await its result without blocking the loop."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "canon_ls.lsp.background",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(project),
    )
    payload = json.dumps({"project": str(project), "options": options, "staleness": staleness})
    try:
        out, err = await proc.communicate(payload.encode())
    except asyncio.CancelledError:
        if proc.returncode is None:
            proc.kill()
        raise
    if proc.returncode != 0 or not out:
        message = err.decode("utf-8", "replace").strip().splitlines()
        return Snapshot(error=message[-1] if message else f"exit code {proc.returncode}")
    result = pickle.loads(out)  # our own child's output, never store content
    assert isinstance(result, Snapshot)
    return result


if __name__ == "__main__":
    # Run the imported module's main so pickled classes name `canon_ls.lsp.background`.
    from canon_ls.lsp.background import main as _main

    _main()
