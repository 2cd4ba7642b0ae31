"""Issue 40, SPEC §10 hover: nothing slow waits for the first hovers. The store's load, started
by the first hover, saved the journal's cache in one of its steps between hovers, and that
save computed the caches' fingerprint: YAML's import and core's sources hashed, 8-17 ms on the
event loop in the 60 ms after the first hover (hover p99 over 5 ms at 100 articles). It is now
computed at `initialized`, before the client's first hover. A `sitecustomize` records when each
process imports `yaml` (the monotonic clock is the machine's, shared by the processes)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from lsp_harness import SERVER_ENV, build_workspace, git, poll, write
from raw_rpc import RawServer

SPY = """import os, sys, time
class _Spy:
    def find_spec(self, name, path=None, target=None):
        if name == "yaml":
            with open(os.environ["CANON_TEST_IMPORTS"], "a") as f:
                f.write(f"{os.getpid()} {time.monotonic()}\\n")
sys.meta_path.insert(0, _Spy())
"""


async def test_the_first_hover_is_not_followed_by_the_caches_fingerprint(tmp_path: Path) -> None:
    root = build_workspace(tmp_path / "proj")
    for n in range(60):  # a journal long enough to be cached
        write(
            root,
            f".canon/journal/2026-02-{n % 28 + 1:02d}-e{n}.md",
            f"---\nsubject: [src/core/config]\nlogged: 2026-02-01T10:00:00.000Z\n---\nEntry {n}.\n",
        )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "journal")
    spy = tmp_path / "spy"
    spy.mkdir()
    (spy / "sitecustomize.py").write_text(SPY)
    log = tmp_path / "imports.log"
    log.touch()
    path = os.pathsep.join(p for p in (str(spy), SERVER_ENV.get("PYTHONPATH")) if p)
    server = await RawServer.start({"PYTHONPATH": path, "CANON_TEST_IMPORTS": str(log)})
    try:
        await server.initialize(root, {"workspace": {"configuration": True}})

        def asked() -> dict | None:  # `initialized` has run up to its configuration request
            found = [r for r in server.reader.requests if r["method"] == "workspace/configuration"]
            return found[0] if found else None

        request = await poll(asked, 60, lambda: "no workspace/configuration request")
        server.write({"jsonrpc": "2.0", "id": request["id"], "result": [None]})
        uri = (root / "src/core/config.ts").as_uri()
        text = (root / "src/core/config.ts").read_text(encoding="utf-8")
        server.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "typescript", "version": 1, "text": text}},
        )
        sent = time.monotonic()
        hover = await server.request(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 3}},
        )
        assert "Loads layered config" in json.dumps(hover)

        def imported() -> list[float]:
            lines = [line.split() for line in log.read_text().splitlines()]
            return [float(t) for pid, t in lines if int(pid) == server.proc.pid]

        at = await poll(imported, 30, lambda: "the server never imported yaml")
        assert at[0] < sent, "the caches' fingerprint was computed between the first hovers"
    finally:
        await server.stop()
