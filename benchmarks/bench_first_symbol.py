"""The first `workspace/symbol` of a session (issue 9 item 16), interleaved across code trees.

A fresh `canon-ls` is started and, right after `initialized`, asked a multi-word query that no
address contains (so only full text can answer). Printed per run: the first answer's latency
and hit count, and when full text first answered (counted from process start; the older code
answered at once from addresses, empty here, and full text only once its BM25 worker was
ready, so it is polled). Each code tree (`--code DIR`, put first on PYTHONPATH; the default is
the installed package) runs with an empty cache (no parse or index snapshot) and then again
with the snapshot the previous run left (warm), rounds interleaved.

    flock /tmp/canon-heavy.lock .venv/bin/python benchmarks/bench_first_symbol.py \
        --repo benchmarks/repos/m10k/repo --code /work/main --code . --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_lsp import PROFILES, Client, settle_query  # noqa: E402
from common import pct  # noqa: E402


def first_symbol(repo: Path, code: Path | None, cache: Path) -> dict[str, Any]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    if code is not None:
        env["PYTHONPATH"] = str(code)
    manifest = repo.parent / "manifest.json"
    if manifest.exists():
        env["CANON_TODAY"] = json.loads(manifest.read_text())["today"]
    client = Client([sys.executable, "-m", "canon_ls.lsp"], repo, env)
    client.handlers["window/workDoneProgress/create"] = lambda params: None
    try:
        client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": repo.as_uri(),
                "workspaceFolders": [{"uri": repo.as_uri(), "name": repo.name}],
                "capabilities": PROFILES["vscode"],
            },
        )
        client.notify("initialized", {})
        query = settle_query(repo)
        t = time.perf_counter()
        hits = client.request("workspace/symbol", {"query": query}) or []
        figures = {"first_ms": (time.perf_counter() - t) * 1000, "first_hits": len(hits)}
        while not hits:  # the older code: poll until full text answers
            time.sleep(0.05)
            hits = client.request("workspace/symbol", {"query": query}) or []
        figures["full_text_s"] = time.perf_counter() - client.started
        client.progress_end.wait(timeout=600)  # let the startup check write its snapshots
        return figures
    finally:
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--code", type=Path, action="append", help="a code tree (repeatable)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    repo = args.repo.resolve()
    trees: list[Path | None] = [c.resolve() for c in args.code] if args.code else [None]
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for _ in range(args.rounds):
        for code in trees:
            cache = Path(tempfile.mkdtemp(prefix="canon-bench-cache-"))
            try:
                for state in ("cold", "warm"):
                    run = first_symbol(repo, code, cache)
                    results.setdefault((str(code or "installed"), state), []).append(run)
                    print(f"{code or 'installed'} {state}: {run}", flush=True)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
    print(f"\n== first workspace/symbol on {repo} (query: {settle_query(repo)!r})")
    for (code, state), runs in results.items():
        first = [r["first_ms"] for r in runs]
        full = [r["full_text_s"] for r in runs]
        hits = sorted({r["first_hits"] for r in runs})
        print(
            f"{code:40} {state}: first answer p50 {pct(first, 50):8.1f} ms, hits {hits}; "
            f"full text after start p50 {pct(full, 50):.2f} s (n={len(runs)})"
        )


if __name__ == "__main__":
    main()
