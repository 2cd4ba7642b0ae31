"""workspace/symbol through the whole server, with the search worker's memory.

Starts the server (bench_lsp's client, vscode profile) on a fresh cache, repeats the first
query until BM25 answers, then times `n` queries from queries.json (p50/p99) and reports the
search worker's VmRSS/VmHWM (found among the server's children by its command line) and its
largest resident set sampled every 20 ms; then (unless `cold-only`) the same with a second
server on the cache the first one left. With `idle`, the worker's idle delay is 3 s and three
queries are timed each after the worker has exited.

    python benchmarks/bench_symbols.py REPO N [idle] [cold-only]
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_lsp import Client, pct, start_ours  # noqa: E402


def worker(server: int) -> int | None:
    kids: list[str] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{server}/task"):
            with open(f"/proc/{server}/task/{task}/children", encoding="ascii") as fh:
                kids += fh.read().split()
    for kid in kids:
        with contextlib.suppress(OSError), open(f"/proc/{kid}/cmdline", "rb") as fh:
            if b"canon_ls.lsp.helpers.searcher" in fh.read():
                return int(kid)
    return None


def status(pid: int) -> dict[str, float]:
    out: dict[str, float] = {}
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            name = line.split(":")[0]
            if name in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                out[name] = round(int(line.split()[1]) / 1024, 1)
    return out


class Sampler(threading.Thread):
    def __init__(self, server: int) -> None:
        super().__init__(daemon=True)
        self.server, self.peak, self.done = server, 0.0, threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            pid = worker(self.server)
            if pid:
                now = status(pid)
                self.peak = max(self.peak, now.get("VmRSS", 0.0), now.get("VmHWM", 0.0))
            self.done.wait(0.02)


def one(client: Client, queries: list[str], n: int, idle: bool) -> dict[str, Any]:
    t0 = client.started
    while True:
        t = time.perf_counter()
        hits = client.request("workspace/symbol", {"query": queries[0]})
        took = (time.perf_counter() - t) * 1000
        if hits and len(hits) >= 10:
            break
        time.sleep(0.05)
    fig: dict[str, Any] = {"bm25_ready_s": round(time.perf_counter() - t0, 2)}
    fig["first_ms"] = round(took, 1)
    times = []
    for i in range(n):
        t = time.perf_counter()
        client.request("workspace/symbol", {"query": queries[(i + 1) % len(queries)]})
        times.append((time.perf_counter() - t) * 1000)
    fig["p50_ms"], fig["p99_ms"] = round(pct(times, 50), 2), round(pct(times, 99), 2)
    pid = worker(client.proc.pid)
    fig["worker_now"] = status(pid) if pid else None
    if idle:
        firsts = []
        for q in queries[5:8]:
            deadline = time.time() + 60
            while worker(client.proc.pid) and time.time() < deadline:
                time.sleep(0.1)
            t = time.perf_counter()
            client.request("workspace/symbol", {"query": q})
            firsts.append(round((time.perf_counter() - t) * 1000, 1))
        fig["first_after_idle_ms"] = firsts
    return fig


def main() -> None:
    repo, n, flags = Path(sys.argv[1]).resolve(), int(sys.argv[2]), sys.argv[3:]
    idle = "idle" in flags
    labels = ("cold",) if "cold-only" in flags else ("cold", "from its file")
    queries = [q["q"] for q in json.loads((repo.parent / "queries.json").read_text())]
    if idle:
        os.environ["CANON_SEARCH_IDLE_S"] = "3"
    cache = Path(tempfile.mkdtemp(prefix="canon-bench-symbols-"))
    out = {}
    try:
        for label in labels:
            client, _ = start_ours(repo, "vscode", cache)
            sampler = Sampler(client.proc.pid)
            sampler.start()
            try:
                out[label] = one(client, queries, n, idle)
                out[label]["worker_peak_sampled_mb"] = round(sampler.peak, 1)
            finally:
                sampler.done.set()
                client.close()
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
