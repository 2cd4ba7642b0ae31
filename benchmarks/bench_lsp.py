"""Drive the real `canon-ls` over stdio on a generated repository and print figures.

Measured (SPEC §10, targets in docs/BENCHMARKS.md "LSP"):
- process start -> first hover answer;
- hover and inlay p50/p99 over N requests while the startup whole-store check runs, and idle;
- an external article write -> hover shows it (with the client's file event, and without);
- full-store diagnostics cold (startup check, push) and incremental (one article);
- memory: every process's peak (VmHWM) in the server's tree (the server, the whole-store
  check child and its git, the search worker), summed, and the largest total at one moment;
- an asset deleted / created outside the editor -> its article's orphan diagnostic appears /
  goes (the file-event path: the server's watcher or the client's event, then the re-check);
- against vscode-markdown-languageserver (npm) on the same articles folder: workspace symbols
  and references, first and warm, with ratios.

`--first-answers` runs the editor's first answers instead (bench_first_answers.py: start,
first symbol, first references, the start-up window with five opened documents, peak memory
of the server's tree with git, in interleaved rounds beside the peer; its own options follow):

    .venv/bin/python benchmarks/bench_lsp.py --first-answers --repo $REPOS/m10k/repo --rounds 2

The client is a raw blocking JSON-RPC client (no pygls on this side), answering the server's
requests (progress, configuration, registration, refresh) like an editor would.

    .venv/bin/python benchmarks/bench_lsp.py --repo benchmarks/repos/m10k/repo \
        --peer-repo benchmarks/repos/m5k/repo
    # the monorepo size (gen_repo.py --articles 50000 --files 500000 --commits 2000):
    .venv/bin/python benchmarks/bench_lsp.py --repo $REPOS/m50k/repo --n 2000 \
        --peer-repo $REPOS/m50k/repo --peer-limit 1800
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from common import pct  # noqa: E402
from memory import TreeMemory, describe  # noqa: E402

PROFILES: dict[str, dict[str, Any]] = {
    # A modern VS Code: watches files for us, pulls nothing here (push keeps the figure simple).
    "vscode": {
        "window": {"workDoneProgress": True},
        "workspace": {
            "configuration": True,
            "workspaceFolders": True,
            "didChangeWatchedFiles": {"dynamicRegistration": True},
            "inlayHint": {"refreshSupport": True},
        },
        "textDocument": {"inlayHint": {}, "publishDiagnostics": {}},
        "general": {"positionEncodings": ["utf-16"]},
    },
    # Neovim 0.11: utf-8, no dynamic watcher registration -> the server polls.
    "neovim": {
        "window": {"workDoneProgress": True},
        "workspace": {"configuration": True, "workspaceFolders": True},
        "textDocument": {"inlayHint": {}, "publishDiagnostics": {}},
        "general": {"positionEncodings": ["utf-8", "utf-16"]},
    },
}


class Client:
    """Blocking JSON-RPC over a subprocess' stdio; a reader thread files every message."""

    def __init__(self, cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None if os.environ.get("CANON_BENCH_STDERR") else subprocess.DEVNULL,
        )
        self.lock = threading.Lock()
        self.next_id = 0
        self.waiting: dict[int, queue.Queue[dict[str, Any]]] = {}
        self.notes: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self.handlers: dict[str, Any] = {}
        self.progress_end = threading.Event()  # the whole-store check's progress
        self.progress_begin = threading.Event()
        self.indexing = threading.Event()  # the symbols' "indexing" progress began / ended
        self.indexed = threading.Event()
        self.initialize_ms = 0.0  # process start -> initialize answered
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while True:
                line = out.readline()
                if not line:
                    return
                if line.startswith(b"Content-Length:"):
                    length = int(line.split(b":")[1])
                elif line in (b"\r\n", b"\n"):
                    break
            msg = json.loads(out.read(length))
            if "method" in msg and "id" in msg:
                self._answer(msg)
            elif msg.get("method") == "window/logMessage" and os.environ.get("CANON_BENCH_STDERR"):
                print("LOG", msg["params"]["message"][:300], file=sys.stderr)
            elif "method" in msg:
                if msg["method"] == "$/progress":
                    kind = (msg["params"].get("value") or {}).get("kind")
                    index = str(msg["params"].get("token", "")).startswith("canon-index-")
                    if kind == "begin":
                        (self.indexing if index else self.progress_begin).set()
                    elif kind == "end":
                        (self.indexed if index else self.progress_end).set()
                self.notes.put((time.perf_counter(), msg))
            else:
                box = self.waiting.pop(msg.get("id"), None)
                if box is not None:
                    box.put(msg)

    def _answer(self, msg: dict[str, Any]) -> None:
        method = msg["method"]
        result: Any = None
        if method == "workspace/configuration":
            result = [None for _ in msg["params"]["items"]]
        elif method in self.handlers:
            result = self.handlers[method](msg["params"])
        self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    def _send(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg).encode()
        with self.lock:
            assert self.proc.stdin is not None
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def request(self, method: str, params: Any, timeout: float = 600) -> Any:
        with self.lock:
            self.next_id += 1
            msg_id = self.next_id
        box: queue.Queue[dict[str, Any]] = queue.Queue()
        self.waiting[msg_id] = box
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        reply = box.get(timeout=timeout)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def rss_mb(self) -> tuple[float, float]:
        """(current, peak) resident set of the server process in MB."""
        values = {}
        with open(f"/proc/{self.proc.pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    values[line[:5]] = int(line.split()[1]) / 1024
        return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)

    def workers_rss_mb(self) -> float:
        """Resident set of the server's child processes (the BM25 worker once it is up)."""
        total = 0.0
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{self.proc.pid}/task"):
                with open(f"/proc/{self.proc.pid}/task/{task}/children", encoding="ascii") as f:
                    for child in f.read().split():
                        with contextlib.suppress(OSError), open(f"/proc/{child}/status") as st:
                            for line in st:
                                if line.startswith("VmRSS:"):
                                    total += int(line.split()[1]) / 1024
        return total

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=30)
            self.notify("exit", None)
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()


# -- ours ------------------------------------------------------------------------------------
def pick_governed_file(repo: Path) -> tuple[str, str]:
    """A file with its own article, and that article's address (the hover target)."""
    articles = repo / ".canon" / "articles"
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True
    ).stdout.decode()
    for rel in out.split("\0"):
        if not rel or rel.startswith(".canon/") or "." not in rel.rsplit("/", 1)[-1]:
            continue
        address = rel.rsplit(".", 1)[0]
        if (articles / f"{address}.md").exists():
            return rel, address
    raise SystemExit("no governed file found")


def start_ours(repo: Path, profile: str, cache: Path) -> tuple[Client, float]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    manifest = repo.parent / "manifest.json"
    if manifest.exists():
        env["CANON_TODAY"] = json.loads(manifest.read_text())["today"]
    client = Client([sys.executable, "-m", "canon_ls.lsp"], repo, env)
    client.handlers["window/workDoneProgress/create"] = lambda params: None
    client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": repo.as_uri(),
            "workspaceFolders": [{"uri": repo.as_uri(), "name": repo.name}],
            "capabilities": PROFILES[profile],
        },
    )
    client.initialize_ms = (time.perf_counter() - client.started) * 1000
    client.notify("initialized", {})
    return client, client.started


def hover_params(uri: str, line: int = 0, character: int = 1) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


def inlay_params(uri: str) -> dict[str, Any]:
    return {
        "textDocument": {"uri": uri},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 40, "character": 0}},
    }


def timings(
    client: Client, method: str, params: Any, n: int, until: threading.Event | None = None
) -> list[float]:
    out = []
    for _ in range(n):
        if until is not None and until.is_set():
            break
        t = time.perf_counter()
        client.request(method, params)
        out.append((time.perf_counter() - t) * 1000)
    return out


def ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    return (
        f"p50 {pct(values, 50):.2f} ms, p99 {pct(values, 99):.2f} ms, max {max(values):.1f} ms"
        f" (n={len(values)})"
    )


def bench_ours(repo: Path, n: int, profile: str) -> dict[str, Any]:
    figures: dict[str, Any] = {"profile": profile}
    rel, address = pick_governed_file(repo)
    uri = (repo / rel).as_uri()
    article = repo / ".canon" / "articles" / f"{address}.md"
    text = (repo / rel).read_text(encoding="utf-8", errors="replace")
    # Cold diagnostics as a user meets them: an empty cache and a client that only waits.
    quiet_cache = Path(tempfile.mkdtemp(prefix="canon-bench-cache-"))
    try:
        quiet, tq = start_ours(repo, profile, quiet_cache)
        quiet_memory = TreeMemory(quiet.proc.pid).start()
        quiet.progress_end.wait(timeout=1800)
        figures["diagnostics_cold_s"] = _last_progress_end(quiet) - tq
        figures["published"] = _count_published(quiet)
        figures["memory_quiet"] = quiet_memory.stop()
        quiet.close()
    finally:
        shutil.rmtree(quiet_cache, ignore_errors=True)
    cache = Path(tempfile.mkdtemp(prefix="canon-bench-cache-"))  # cold: no ChangeTimes cache
    client, t0 = start_ours(repo, profile, cache)
    memory = TreeMemory(client.proc.pid).start()
    try:
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "plaintext", "version": 1, "text": text}},
        )
        result = client.request("textDocument/hover", hover_params(uri))
        figures["first_hover_s"] = time.perf_counter() - t0
        assert result and address in json.dumps(result), f"first hover missed {address}: {result}"

        # The start-up window, from the first answer to the end of the start-up check (git
        # pass + full check in the child process): hover and inlay in turns the whole time
        # (not just n requests), so the store's load, the children's start, the child's
        # parse, the git pass and the landing of both snapshots all fall inside.
        during_hover, during_inlay = [], []
        while not client.progress_end.is_set() and len(during_hover) < 100_000:
            during_hover += timings(client, "textDocument/hover", hover_params(uri), 1)
            during_inlay += timings(client, "textDocument/inlayHint", inlay_params(uri), 1)
        client.progress_end.wait(timeout=600)
        # the same cold start, while this client sent requests back to back throughout
        figures["diagnostics_cold_loaded_s"] = _last_progress_end(client) - t0
        figures["hover_during"] = during_hover
        figures["inlay_during"] = during_inlay

        # Idle: the searcher child has built its BM25 index and the link index is warm.
        figures["settled_s"] = wait_settled(client, repo) - t0
        idle_hover = timings(client, "textDocument/hover", hover_params(uri), n)
        idle_inlay = timings(client, "textDocument/inlayHint", inlay_params(uri), n)
        figures["hover_idle"], figures["inlay_idle"] = idle_hover, idle_inlay

        figures["write_to_hover_ms"] = external_write(client, article, uri, profile)
        figures["incremental_diag_ms"] = incremental_diagnostics(client, article, profile)
        figures["typed_diag_ms"] = typed_diagnostics(client, article)
        figures["rss_mb"], figures["peak_rss_mb"] = client.rss_mb()
        figures["workers_rss_mb"] = client.workers_rss_mb()
        figures["memory"] = memory.stop()
    finally:
        memory.stop()
        client.close()
        subprocess.run(["git", "checkout", "--", ".canon"], cwd=repo, capture_output=True)
    try:  # a second start with the caches the first one left (ChangeTimes by HEAD, parse)
        again, t1 = start_ours(repo, profile, cache)
        again.progress_end.wait(timeout=600)
        figures["diagnostics_warm_s"] = _last_progress_end(again) - t1
        again.close()
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return figures


def wait_settled(client: Client, repo: Path, timeout: float = 600) -> float:
    """Until workspace/symbol answers from BM25 (the last startup job); returns the time.

    Until the BM25 child is ready, queries are answered from what the server holds, under an
    "indexing" progress (begun just after the first such answer): once it ended, or when none
    began, the answers are BM25's. The query has a space: a multi-word query from the repo.
    """
    query = settle_query(repo)
    client.request("workspace/symbol", {"query": query})
    client.indexing.wait(timeout=1.0)  # sent right after an early answer, if there was one
    if client.indexing.is_set():
        client.indexed.wait(timeout=timeout)
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        hits = client.request("workspace/symbol", {"query": query})
        if hits:
            break
        time.sleep(0.05)
    return time.perf_counter()


def settle_query(repo: Path) -> str:
    """A multi-word query from the generated repo's queries.json (addresses have no spaces)."""
    with contextlib.suppress(OSError, ValueError, KeyError):
        for item in json.loads((repo.parent / "queries.json").read_text(encoding="utf-8")):
            if " " in item["q"].strip():
                return str(item["q"])
    return "the and"


def _last_progress_end(client: Client) -> float:
    last = 0.0
    for stamp, msg in list(client.notes.queue):
        if (
            msg["method"] == "$/progress"
            and (msg["params"].get("value") or {}).get("kind") == "end"
        ):
            last = stamp
    return last


def _count_published(client: Client) -> int:
    """Distinct documents with diagnostics (the partial push and the stale pass may both
    publish one article; the figure's time is the progress end, after the last of them)."""
    return len(
        {
            m["params"]["uri"]
            for _, m in list(client.notes.queue)
            if m["method"] == "textDocument/publishDiagnostics" and m["params"]["diagnostics"]
        }
    )


def _rewrite(article: Path, marker: str, extra: str = "") -> float:
    """Atomically rewrite an article's capsule (as `canon tool write` does); return the time."""
    text = article.read_text(encoding="utf-8")
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("capsule:"):
            lines[i] = f"capsule: {marker}"
            break
    body = "\n".join(lines) + extra
    tmp = article.with_name(article.name + ".tmp")
    tmp.write_text(body, encoding="utf-8")
    os.replace(tmp, article)
    return time.perf_counter()


def external_write(client: Client, article: Path, uri: str, profile: str) -> list[float]:
    """Write -> hover shows the new capsule; the VS Code profile also sends the file event."""
    out = []
    for round_ in range(20):
        marker = f"bench marker {round_} {time.time_ns()}"
        t = _rewrite(article, marker)
        if profile == "vscode":
            client.notify(
                "workspace/didChangeWatchedFiles",
                {"changes": [{"uri": article.as_uri(), "type": 2}]},
            )
        while marker not in json.dumps(client.request("textDocument/hover", hover_params(uri))):
            pass
        out.append((time.perf_counter() - t) * 1000)
    return out


def _published(
    client: Client, target: str, timeout: float, match: Callable[[dict], bool]
) -> float | None:
    """The time the first publishDiagnostics for `target` whose params match came, or None."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        try:
            stamp, msg = client.notes.get(timeout=deadline - time.perf_counter())
        except queue.Empty:
            break
        params = msg.get("params") or {}
        if (
            msg["method"] == "textDocument/publishDiagnostics"
            and params.get("uri") == target
            and match(params)
        ):
            return stamp
    return None


def _wait_published(client: Client, target: str, want_orphan: bool, timeout: float = 120) -> float:
    """The time the first publishDiagnostics for `target` with (or without) an orphan came."""

    def orphan_as_wanted(params: dict) -> bool:
        orphan = any(d.get("code") == "orphan" for d in params.get("diagnostics") or [])
        return orphan == want_orphan

    stamp = _published(client, target, timeout, orphan_as_wanted)
    if stamp is None:
        raise SystemExit(f"no {'orphan' if want_orphan else 'healed'} diagnostic for {target}")
    return stamp


def asset_events(client: Client, repo: Path, rel: str, article: Path, profile: str) -> dict:
    """Delete an asset outside the editor -> its article's orphan diagnostic is pushed; put it
    back -> the orphan goes (the vscode profile also sends the client's file event)."""
    asset = repo / rel
    data = asset.read_bytes()
    target = article.as_uri()
    out: dict[str, list[float]] = {"delete_to_orphan_ms": [], "create_to_healed_ms": []}
    for _ in range(5):
        for kind, key, want in (
            (3, "delete_to_orphan_ms", True),
            (1, "create_to_healed_ms", False),
        ):
            while not client.notes.empty():
                client.notes.get_nowait()
            t = time.perf_counter()
            if kind == 3:
                asset.unlink()
            else:
                asset.write_bytes(data)
            if profile == "vscode":
                client.notify(
                    "workspace/didChangeWatchedFiles",
                    {"changes": [{"uri": asset.as_uri(), "type": kind}]},
                )
            out[key].append((_wait_published(client, target, want) - t) * 1000)
    return out


def bench_events(repo: Path, profile: str) -> dict[str, Any]:
    """Only the file-event path, after the startup check: external write -> hover, one
    article's incremental diagnostics, asset deleted / created -> orphan diagnostic."""
    figures: dict[str, Any] = {"profile": profile}
    rel, address = pick_governed_file(repo)
    uri = (repo / rel).as_uri()
    article = repo / ".canon" / "articles" / f"{address}.md"
    cache = Path(tempfile.mkdtemp(prefix="canon-bench-cache-"))
    client, _t0 = start_ours(repo, profile, cache)
    try:
        client.progress_end.wait(timeout=600)
        wait_settled(client, repo)
        figures["write_to_hover_ms"] = external_write(client, article, uri, profile)
        figures["incremental_diag_ms"] = incremental_diagnostics(client, article, profile)
        figures.update(asset_events(client, repo, rel, article, profile))
        figures["rss_mb"], figures["peak_rss_mb"] = client.rss_mb()
        figures["workers_rss_mb"] = client.workers_rss_mb()
    finally:
        client.close()
        subprocess.run(["git", "checkout", "--", "."], cwd=repo, capture_output=True)
        shutil.rmtree(cache, ignore_errors=True)
    return figures


def report_events(ours: dict[str, Any]) -> None:
    print(f"\n== canon-ls file events ({ours['profile']} profile)")
    print(f"external write -> hover shows it       {ms(ours['write_to_hover_ms'])}")
    print(f"incremental diagnostics (one article)  {ms(ours['incremental_diag_ms'])}")
    print(f"asset deleted -> orphan diagnostic     {ms(ours['delete_to_orphan_ms'])}")
    print(f"asset created -> orphan gone           {ms(ours['create_to_healed_ms'])}")
    print(
        f"server RSS (current / peak)            {ours['rss_mb']:.0f} / "
        f"{ours['peak_rss_mb']:.0f} MB; workers {ours.get('workers_rss_mb', 0):.0f} MB"
    )


def incremental_diagnostics(client: Client, article: Path, profile: str) -> list[float]:
    """Write a broken link into one article -> its publishDiagnostics arrives (push)."""
    out = []
    target = article.as_uri()
    for round_ in range(10):
        while not client.notes.empty():
            client.notes.get_nowait()
        marker = f"broken-{round_}-{time.time_ns()}"
        t = _rewrite(article, f"diag round {round_}", f"\n[[nowhere/{marker}]]\n")
        if profile == "vscode":
            client.notify(
                "workspace/didChangeWatchedFiles", {"changes": [{"uri": target, "type": 2}]}
            )
        stamp = _published(client, target, 30, lambda p, m=marker: m in json.dumps(p))
        if stamp is not None:
            out.append((stamp - t) * 1000)
    return out


def typed_diagnostics(client: Client, article: Path) -> list[float]:
    """Type a broken link into an open article, unsaved (didChange) -> its publishDiagnostics
    arrives (the server waits 100 ms after the last change before it checks the text)."""
    out = []
    target = article.as_uri()
    saved = article.read_text(encoding="utf-8")
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": target, "languageId": "markdown", "version": 1, "text": saved}},
    )
    for round_ in range(10):
        while not client.notes.empty():
            client.notes.get_nowait()
        marker = f"typed-{round_}-{time.time_ns()}"
        t = time.perf_counter()
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": target, "version": round_ + 2},
                "contentChanges": [{"text": saved + f"\n[[nowhere/{marker}]]\n"}],
            },
        )
        stamp = _published(client, target, 30, lambda p, m=marker: m in json.dumps(p))
        if stamp is not None:
            out.append((stamp - t) * 1000)
    client.notify("textDocument/didClose", {"textDocument": {"uri": target}})
    return out


def bench_ours_queries(repo: Path, queries: list[str], target: Path) -> dict[str, Any]:
    """Workspace symbols and references on our server (for the peer comparison)."""
    cache = Path(tempfile.mkdtemp(prefix="canon-bench-cache-"))
    client, t0 = start_ours(repo, "vscode", cache)
    try:
        figures: dict[str, Any] = {}
        params = {
            "textDocument": {"uri": target.as_uri()},
            "position": {"line": 0, "character": 0},
            "context": {"includeDeclaration": False},
        }
        figures["initialize_ms"] = client.initialize_ms
        # The first query, sent at once: answered from what the server holds (addresses,
        # titles, capsules, tags) while the store loads and the BM25 worker builds its index,
        # which an "indexing" progress covers; BM25 answers once it ends.
        t = time.perf_counter()
        hits = client.request("workspace/symbol", {"query": queries[0]})
        figures["symbol_first_ms"] = (time.perf_counter() - t) * 1000
        figures["symbol_first_from_start_ms"] = (time.perf_counter() - t0) * 1000
        figures["symbol_first_results"] = len(hits or [])
        # An answer given while the server was still being built is followed by the progress
        # once the server runs (a second or so later): wait for it to begin, then to end.
        client.indexing.wait(timeout=10)
        if client.indexing.is_set():
            client.indexed.wait(timeout=1800)
        figures["bm25_ready_s"] = time.perf_counter() - t0
        figures["symbol_warm"] = [
            _timed_ms(client, "workspace/symbol", {"query": q}) for q in queries[1:]
        ]
        typed, sizes = [], []
        for q in typed_queries(queries):
            t = time.perf_counter()
            sizes.append(len(client.request("workspace/symbol", {"query": q}) or []))
            typed.append((time.perf_counter() - t) * 1000)
        figures["symbol_typed"], figures["symbol_typed_results"] = typed, sizes
        t = time.perf_counter()
        refs = client.request("textDocument/references", params)
        figures["refs_first_ms"] = (time.perf_counter() - t) * 1000
        figures["refs_count"] = len(refs or [])
        figures["refs_warm"] = [
            _timed_ms(client, "textDocument/references", params) for _ in range(20)
        ]
        figures["rss_mb"] = client.rss_mb()[0]
    finally:
        client.close()
        shutil.rmtree(cache, ignore_errors=True)
    figures["symbol_after_hover_ms"], figures["symbol_after_hover_results"] = (
        first_symbol_after_hover(repo, queries[0])
    )
    return figures


def first_symbol_after_hover(repo: Path, query: str) -> tuple[float, int]:
    """A cold start where the editor opens a file and hovers first (the server is built and
    its store starts loading), then the symbol picker's first query: answered from what the
    server holds while the store loads and BM25 builds."""
    cache = Path(tempfile.mkdtemp(prefix="canon-bench-cache-"))
    client, _ = start_ours(repo, "vscode", cache)
    try:
        rel, _address = pick_governed_file(repo)
        client.request("textDocument/hover", hover_params((repo / rel).as_uri()))
        t = time.perf_counter()
        hits = client.request("workspace/symbol", {"query": query})
        return (time.perf_counter() - t) * 1000, len(hits or [])
    finally:
        client.close()
        shutil.rmtree(cache, ignore_errors=True)


def typed_queries(queries: list[str], words: int = 8) -> list[str]:
    """What an editor sends while a word is typed into the symbol picker: every prefix."""
    seen: list[str] = []
    for query in queries:
        for word in query.split():
            if word not in seen:
                seen.append(word)
    return [word[:i] for word in seen[:words] for i in range(1, len(word) + 1)]


def _timed_ms(client: Client, method: str, params: Any) -> float:
    t = time.perf_counter()
    client.request(method, params)
    return (time.perf_counter() - t) * 1000


# -- the peer --------------------------------------------------------------------------------
PEER_CLIENT = r"""
// Answers vscode-markdown-languageserver's client-side requests (markdown/parse with
// markdown-it, markdown/fs/*, findMarkdownFilesInWorkspace) like VS Code's client does, and
// times workspace symbols and references. Written by bench_lsp.py; argv: vault server queries.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import MarkdownIt from 'markdown-it';

const [vault, serverJs, queriesFile, targetFile] = process.argv.slice(2);
const { queries, typed } = JSON.parse(fs.readFileSync(queriesFile, 'utf8'));
const md = MarkdownIt({ html: true });
const spawned = Number(process.hrtime.bigint()) / 1e6;
const server = spawn('node', [serverJs, '--stdio'], { stdio: ['pipe', 'pipe', 'ignore'] });
let buf = Buffer.alloc(0), nextId = 0;
const waiting = new Map();

function send(msg) {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...msg }));
  server.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
  server.stdin.write(body);
}
function request(method, params) {
  const id = ++nextId;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    send({ id, method, params });
  });
}
function files(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...files(p)); else if (e.name.endsWith('.md')) out.push(p);
  }
  return out;
}
function tokens(text) {
  let offset = 0;
  const m = /^---\r?\n[\s\S]*?\r?\n---\r?\n/.exec(text);
  if (m) { offset = m[0].split('\n').length - 1; text = text.slice(m[0].length); }
  const toks = md.parse(text, {});
  if (offset) for (const t of toks) if (t.map) t.map = [t.map[0] + offset, t.map[1] + offset];
  return toks;
}
const handlers = {
  'markdown/parse': (p) => tokens(p.text ?? fs.readFileSync(fileURLToPath(p.uri), 'utf8')),
  'markdown/fs/readFile': (p) => Array.from(fs.readFileSync(fileURLToPath(p.uri))),
  'markdown/fs/stat': (p) => {
    try { return { isDirectory: fs.statSync(fileURLToPath(p.uri)).isDirectory() }; }
    catch { return undefined; }
  },
  'markdown/fs/readDirectory': (p) => fs.readdirSync(fileURLToPath(p.uri), { withFileTypes: true })
    .map((e) => [e.name, { isDirectory: e.isDirectory() }]),
  'markdown/findMarkdownFilesInWorkspace': () => files(vault).map((f) => pathToFileURL(f).href),
  'markdown/fs/watcher/create': () => null,
  'markdown/fs/watcher/delete': () => null,
  'workspace/configuration': (p) => p.items.map(() => null),
  'client/registerCapability': () => null,
  'window/workDoneProgress/create': () => null,
};
server.stdout.on('data', (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  for (;;) {
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const len = Number(/Content-Length: (\d+)/.exec(buf.slice(0, end).toString())[1]);
    if (buf.length < end + 4 + len) return;
    const msg = JSON.parse(buf.slice(end + 4, end + 4 + len).toString());
    buf = buf.slice(end + 4 + len);
    if (msg.method && msg.id !== undefined) {
      let result = null;
      try { result = handlers[msg.method] ? handlers[msg.method](msg.params) : null; }
      catch (e) { result = null; }
      send({ id: msg.id, result: result === undefined ? null : result });
    } else if (msg.id !== undefined && waiting.has(msg.id)) {
      const w = waiting.get(msg.id); waiting.delete(msg.id);
      msg.error ? w.reject(new Error(JSON.stringify(msg.error))) : w.resolve(msg.result);
    }
  }
});
function rss(key = 'VmRSS') {
  try {
    const s = fs.readFileSync(`/proc/${server.pid}/status`, 'utf8');
    return Number(new RegExp(key + ':\\s+(\\d+)').exec(s)[1]) / 1024;
  } catch { return 0; }
}
const now = () => Number(process.hrtime.bigint()) / 1e6;
const root = pathToFileURL(vault).href;
const initialize = request('initialize', { processId: process.pid, rootUri: root,
  workspaceFolders: [{ uri: root, name: 'vault' }],
  capabilities: { workspace: { configuration: true, workspaceFolders: true },
                  textDocument: { references: {}, documentSymbol: {} } } });
await initialize;
const initializeMs = now() - spawned;
send({ method: 'initialized', params: {} });
send({ method: 'workspace/didChangeConfiguration', params: { settings: { markdown: {
  validate: { enabled: false }, suggest: { paths: { enabled: true } } } } } });
let t = now();
await request('workspace/symbol', { query: queries[0] });
const symbolFirst = now() - t;
const symbolFirstFromStart = now() - spawned;
const symbolWarm = [], symbolWarmFromStart = [];
for (const q of queries.slice(1)) {
  t = now();
  await request('workspace/symbol', { query: q });
  symbolWarm.push(now() - t);
  symbolWarmFromStart.push(now() - spawned);
}
const symbolTyped = [], symbolTypedResults = [];
for (const q of typed) {
  t = now();
  const hits = await request('workspace/symbol', { query: q });
  symbolTyped.push(now() - t);
  symbolTypedResults.push((hits || []).length);
}
const target = pathToFileURL(targetFile).href;
// File backlinks: the peer's own request for "who links to this file" (VS Code's
// "Find File References"), the equivalent of canon-ls references on an article.
const refParams = { uri: target };
t = now();
const refs = await request('markdown/getReferencesToFileInWorkspace', refParams);
const refsFirst = now() - t;
const refsWarm = [];
for (let i = 0; i < 20; i++) {
  t = now();
  await request('markdown/getReferencesToFileInWorkspace', refParams);
  refsWarm.push(now() - t);
}
const out = { symbol_first_ms: symbolFirst, symbol_first_from_start_ms: symbolFirstFromStart,
              initialize_ms: initializeMs, symbol_warm: symbolWarm,
              symbol_warm_from_start_ms: symbolWarmFromStart, symbol_typed: symbolTyped,
              symbol_typed_results: symbolTypedResults, refs_first_ms: refsFirst,
              refs_warm: refsWarm, refs_count: (refs || []).length, rss_mb: rss(),
              peak_rss_mb: rss('VmHWM') };
await request('shutdown', null);
send({ method: 'exit', params: null });
console.log(JSON.stringify(out));
process.exit(0);
"""


def bench_peer(
    repo: Path,
    queries: list[str],
    target: Path,
    workdir: Path,
    limit: float = 1800,
    typed: list[str] | None = None,
) -> dict[str, Any] | None:
    server = workdir / "node_modules/vscode-markdown-languageserver/dist/node/workerMain.js"
    if not server.exists():
        subprocess.run(["npm", "init", "-y"], cwd=workdir, capture_output=True)
        done = subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "vscode-markdown-languageserver@0.5.0",
                "markdown-it@14",
            ],
            cwd=workdir,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0 or not server.exists():
            print("peer: npm install failed:", done.stderr[-400:])
            return None
    script = workdir / "peer.mjs"
    script.write_text(PEER_CLIENT, encoding="utf-8")
    qfile = workdir / "queries.json"
    qfile.write_text(
        json.dumps(
            {"queries": queries, "typed": typed_queries(queries) if typed is None else typed}
        ),
        encoding="utf-8",
    )
    try:
        done = subprocess.run(
            ["node", str(script), str(repo), str(server), str(qfile), str(target)],
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=limit,
        )
    except subprocess.TimeoutExpired:
        print(f"peer: did not finish within {limit:.0f} s (--peer-limit)")
        return None
    if done.returncode != 0:
        print("peer failed:", done.stderr[-800:])
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def markdown_vault(repo: Path, out: Path) -> Path:
    """A copy of the articles with `[[a/b]]` written as relative Markdown links, so the peer
    (which has no wikilink support) sees the same link graph as canon-ls."""
    import re

    articles = repo / ".canon" / "articles"
    if out.exists():
        shutil.rmtree(out)
    link = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
    for path in articles.rglob("*.md"):
        rel = path.relative_to(articles)
        text = path.read_text(encoding="utf-8", errors="replace")

        def md(m: re.Match[str], rel: Path = rel) -> str:
            target = m.group(1).strip()
            href = os.path.relpath(f"{target}.md", rel.parent.as_posix() or ".")
            return f"[{m.group(2) or target}]({href})"

        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(link.sub(md, text), encoding="utf-8")
    return out


def most_linked(repo: Path) -> Path:
    """The article with the most inbound wikilinks (a meaningful references target)."""
    import re
    from collections import Counter

    counts: Counter[str] = Counter()
    articles = repo / ".canon" / "articles"
    for path in articles.rglob("*.md"):
        for target in re.findall(
            r"\[\[([^\]|#]+)", path.read_text(encoding="utf-8", errors="replace")
        ):
            counts[target.strip()] += 1
    for address, _ in counts.most_common():
        if (articles / f"{address}.md").exists():
            return articles / f"{address}.md"
    return next(articles.rglob("*.md"))


# -- report ----------------------------------------------------------------------------------
def report(ours: dict[str, Any]) -> None:
    print(f"\n== canon-ls ({ours['profile']} profile)")
    print(f"process start -> first hover answer   {ours['first_hover_s'] * 1000:.0f} ms")
    print(f"hover, first answer -> check's end     {ms(ours['hover_during'])}")
    print(f"inlay, first answer -> check's end     {ms(ours['inlay_during'])}")
    print(f"background work settled after          {ours['settled_s']:.2f} s")
    print(f"hover idle                             {ms(ours['hover_idle'])}")
    print(f"inlay idle                             {ms(ours['inlay_idle'])}")
    print(f"external write -> hover shows it       {ms(ours['write_to_hover_ms'])}")
    print(
        f"full-store diagnostics, cold           {ours['diagnostics_cold_s']:.2f} s "
        f"({ours['published']} articles published)"
    )
    print(
        f"  the same, requests back to back      {ours['diagnostics_cold_loaded_s']:.2f} s "
        f"(the {len(ours['hover_during']) * 2:,} hover/inlay requests above)"
    )
    print(f"full-store diagnostics, warm start     {ours['diagnostics_warm_s']:.2f} s")
    print(f"incremental diagnostics (one article)  {ms(ours['incremental_diag_ms'])}")
    print(f"as-you-type diagnostics (didChange)    {ms(ours['typed_diag_ms'])}")
    print(
        f"server RSS (current / peak)            {ours['rss_mb']:.0f} / "
        f"{ours['peak_rss_mb']:.0f} MB; BM25 worker {ours.get('workers_rss_mb', 0):.0f} MB"
    )
    print(f"memory, server + every child           {describe(ours['memory'])}")
    print(f"  the quiet start (cold diagnostics)   {describe(ours['memory_quiet'])}")


def report_peer(ours: dict[str, Any], peer: dict[str, Any] | None) -> None:
    print("\n== workspace symbols and references vs vscode-markdown-languageserver 0.5.0")
    rows = [
        ("workspace/symbol first", "symbol_first_ms", None),
        ("workspace/symbol warm p50", "symbol_warm", 50),
        ("symbol, as typed, p50", "symbol_typed", 50),
        ("references first", "refs_first_ms", None),
        ("references warm p50", "refs_warm", 50),
    ]
    for label, key, p in rows:
        a = ours[key] if p is None else pct(ours[key], p)
        if peer is None:
            print(f"{label:28} canon-ls {a:9.2f} ms")
            continue
        b = peer[key] if p is None else pct(peer[key], p)
        print(f"{label:28} canon-ls {a:9.2f} ms   peer {b:9.2f} ms   ratio {b / a:6.1f}x")
    mean = sum(ours["symbol_typed_results"]) / max(1, len(ours["symbol_typed_results"]))
    line = f"symbols per typed query, mean  canon-ls {mean:.0f} (capped at 50)"
    if peer is not None:
        peer_sizes = peer["symbol_typed_results"]
        line += f"   peer {sum(peer_sizes) / max(1, len(peer_sizes)):.0f} (uncapped)"
    print(line)
    print(f"first symbol answer, results canon-ls {ours['symbol_first_results']}")
    line = f"start -> first symbol answer  canon-ls {ours['symbol_first_from_start_ms']:7.0f} ms"
    if peer is not None and "symbol_first_from_start_ms" in peer:
        b = peer["symbol_first_from_start_ms"]
        line += f"   peer {b:7.0f} ms   ratio {b / ours['symbol_first_from_start_ms']:5.1f}x"
    print(line)
    print(
        f"first symbol after a hover   canon-ls {ours['symbol_after_hover_ms']:7.2f} ms"
        f" ({ours['symbol_after_hover_results']} results; server built, store loading)"
    )
    print(f"BM25 symbols ready after start canon-ls {ours['bm25_ready_s']:.2f} s")
    line = f"start -> initialize answered canon-ls {ours['initialize_ms']:.0f} ms"
    if peer is not None and "initialize_ms" in peer:
        line += f"   peer {peer['initialize_ms']:.0f} ms"
    print(line)
    print(
        f"references found             canon-ls {ours['refs_count']}"
        + (
            ""
            if peer is None
            else f"   peer {peer['refs_count']} (the same links, as Markdown links)"
        )
    )
    print(
        f"server RSS                   canon-ls {ours['rss_mb']:.0f} MB"
        + ("" if peer is None else f"   peer {peer['rss_mb']:.0f} MB")
    )
    if peer is not None and peer.get("peak_rss_mb"):
        print(f"peak RSS (VmHWM)             peer {peer['peak_rss_mb']:.0f} MB (one process)")


def main() -> None:
    if "--first-answers" in sys.argv[1:]:
        sys.argv.remove("--first-answers")
        import bench_first_answers

        bench_first_answers.main()
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--repo", type=Path, required=True, help="generated repository (with .canon)"
    )
    parser.add_argument(
        "--peer-repo", type=Path, help="repository for the peer comparison (5k notes)"
    )
    parser.add_argument("--n", type=int, default=2000, help="requests per latency figure")
    parser.add_argument("--profile", choices=sorted(PROFILES), default="vscode")
    parser.add_argument("--skip-peer", action="store_true")
    parser.add_argument(
        "--peer-only", action="store_true", help="only the symbols/references comparison"
    )
    parser.add_argument(
        "--peer-limit", type=float, default=1800, help="seconds the peer's whole run may take"
    )
    parser.add_argument(
        "--events-only", action="store_true", help="only the file-event figures (one start)"
    )
    parser.add_argument("--json", type=Path, help="write the raw figures here")
    args = parser.parse_args()
    repo = args.repo.resolve()
    if args.events_only:
        events = bench_events(repo, args.profile)
        report_events(events)
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps({"events": events}, indent=1))
        return
    result: dict[str, Any] = {}
    if not args.peer_only:
        result["ours"] = ours = bench_ours(repo, args.n, args.profile)
        report(ours)
    if args.peer_repo and not args.skip_peer:
        peer_repo = args.peer_repo.resolve()
        queries_file = peer_repo.parent / "queries.json"
        queries = (
            [q["q"] for q in json.loads(queries_file.read_text())][:50]
            if queries_file.exists()
            else ["config", "cache"]
        )
        target = most_linked(peer_repo)
        ours_q = bench_ours_queries(peer_repo, queries, target)
        workdir = HERE / "out" / "vmls"
        workdir.mkdir(parents=True, exist_ok=True)
        vault = markdown_vault(peer_repo, workdir / "vault")
        peer_target = vault / target.relative_to(peer_repo / ".canon" / "articles")
        peer = bench_peer(vault, queries, peer_target, workdir, args.peer_limit)
        report_peer(ours_q, peer)
        result["queries"] = {"ours": ours_q, "peer": peer}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
