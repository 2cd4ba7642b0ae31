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
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


@dataclass
class Snapshot:
    """What the whole-store pass found; `assets`/`times` ride along when they pickle."""

    findings: list[Any] = field(default_factory=list)
    stale: dict[str, str] = field(default_factory=dict)
    assets: Any = None
    times: Any = None
    seconds: float = 0.0
    error: str | None = None


def compute(project: Path, options: dict[str, Any], staleness: bool) -> Snapshot:
    from canon_ls.core import assets as core_assets
    from canon_ls.core.project import open_store

    started = time.perf_counter()
    store = open_store(project, options)
    assets = core_assets.Assets(project)
    times = core_assets.ChangeTimes(project) if staleness else None
    findings = core_assets.check(store, assets, times)
    stale = core_assets.stale(store, assets, times) if times is not None else {}
    if not staleness:
        findings = [f for f in findings if f.code != "stale"]
    snapshot = Snapshot(findings=list(findings), stale=dict(stale))
    for name, value in (("assets", assets), ("times", times)):
        try:
            pickle.dumps(value)
            setattr(snapshot, name, value)
        except Exception:
            pass  # the server then keeps the graph findings from this pass only
    snapshot.seconds = time.perf_counter() - started
    return snapshot


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
