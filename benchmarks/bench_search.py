"""The workspace-symbol search worker alone: its memory, its start and its query latency.

Starts `python -m canon_ls.lsp.helpers.searcher_worker REPO` twice with one cache directory
(cold: the index is built and its file written; then from that file), asks each `--n` queries
taken in turn from the generated repo's queries.json, and prints, per start: seconds until the
worker is ready, the first query's latency, p50/p99 of the rest, and the worker's VmHWM / VmRSS
(and the anonymous and file-backed parts of the latter) at the end, and the largest resident
set sampled (every 10 ms) while it started: VmHWM starts again when the worker re-executes
itself after a build, the sample does not.

    python benchmarks/bench_search.py --repo /path/m10k/repo --n 500
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))] if ordered else 0.0


def status(pid: int) -> dict[str, float]:
    out = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            name = line.split(":", 1)[0]
            if name in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
                out[name] = round(int(line.split()[1]) / 1024, 1)
    return out


def worker_args(repo: Path, cache: Path) -> list[str]:
    """What the server passes (`--spec`), when this canon_ls has it; else the project."""
    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        from canon_ls.core.retrieval.search_corpus import spec_of
        from canon_ls.core.storage.project import open_store
    except ImportError:
        return [str(repo), "{}"]
    return ["--spec", json.dumps(spec_of(open_store(repo, {})))]


WORKER = "canon_ls.lsp.helpers.searcher_worker"


def one_start(repo: Path, cache: Path, queries: list[str], n: int) -> dict[str, Any]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        # -P as the server starts it: the working directory's canon_ls never shadows PYTHONPATH
        [sys.executable, "-P", "-m", WORKER, *worker_args(repo, cache)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    peak = [0.0]  # the largest VmRSS/VmHWM seen while starting (VmHWM resets at a re-exec)
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            with contextlib.suppress(OSError):
                now = status(proc.pid)
                peak[0] = max(peak[0], now.get("VmRSS", 0.0), now.get("VmHWM", 0.0))
            done.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    ready = json.loads(proc.stdout.readline()).get("ready")
    ready_s = time.perf_counter() - t0
    done.set()
    sampler.join()
    times, hits = [], 0
    for i in range(n):
        q = queries[i % len(queries)]
        t = time.perf_counter()
        proc.stdin.write(json.dumps({"query": q, "limit": 50, "changed": []}) + "\n")
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        times.append((time.perf_counter() - t) * 1000)
        hits += len(reply.get("hits", []))
    mem = status(proc.pid)
    proc.stdin.close()
    proc.wait(timeout=60)
    return {
        "ready": ready,
        "ready_s": round(ready_s, 3),
        "first_query_ms": round(times[0], 2),
        "p50_ms": round(pct(times[1:], 50), 2),
        "p99_ms": round(pct(times[1:], 99), 2),
        "hits_mean": round(hits / max(1, n), 1),
        "start_peak_sampled": round(peak[0], 1),
        **mem,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--n", type=int, default=500)
    args = parser.parse_args()
    repo = args.repo.resolve()
    queries_file = repo.parent / "queries.json"
    queries = (
        [q["q"] for q in json.loads(queries_file.read_text())] if queries_file.exists() else []
    )
    queries = queries or ["config", "cache retry", "load"]
    with tempfile.TemporaryDirectory(prefix="canon-search-bench-") as tmp:
        for label in ("cold", "from its file"):
            print(label, json.dumps(one_start(repo, Path(tmp), queries, args.n)), flush=True)


if __name__ == "__main__":
    main()
