#!/usr/bin/env python3
"""The editor's first answers (issue 40), canon-ls side by side with
vscode-markdown-languageserver 0.5.0, from one command per size, in interleaved rounds
(ours, peer | peer, ours | ours, peer ...):

    flock -x /tmp/canon-heavy.lock python benchmarks/bench_first_answers.py \\
        --repo /work/benchrepos/m10k/repo --rounds 2 [--peer-limit 300] [--json out.json]

Each round starts our server afresh (an empty cache) four times, the peer once:
- queries: start -> initialize; the first workspace/symbol, a word only article bodies hold
  (not addresses, titles, capsules or tags), then a title, both timed from process start;
  once the "indexing" progress has ended (the server built, the store loaded, BM25 ready:
  how the rounds before measured it), textDocument/references on the most-linked article
  (first), then 20 more (warm); its memory is taken until the start-up check's progress
  ends (before stop 49: until the references). The peer gets the same two queries, then at once its
  file-references request (VS Code's "Find File References") on the same article of a
  Markdown copy of the articles (`[[a/b]]` written as `[a/b](b.md)`), first and 20 warm.
- a title as the first query (ours; the peer's first answer waits for its whole index
  whatever the query);
- references after a hover (ours): the first hover, then references at once, before the
  store has loaded; hovers are sent back to back for as long as the references are awaited.
- editor (ours only: the peer has no hover on source files nor inlay hints): open a governed
  source file and hover it; right after the first answer, open five more source files (an
  editor restoring its tabs), then hover and inlay in turns until the start-up check's
  progress ends. Peak resident set of the server and every child (git included) at one moment.
- a late query (ours): open a governed source file and hover it; once the start-up check's
  child works on its loaded store (it holds a git slot itself, `gitrun.heavy`; or the check
  ended), the body word as the first workspace/symbol: its answer, timed from when it was
  sent, and the tree's peak until the check's progress ends.
Before each start it waits for every process of the server before to exit, and for the CPUs to
be quiet (at most 10 % busy over half a second, up to 60 s): another benchmark's processes
may outlive its hold on the machine's lock.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import bench_lsp as b
import psutil
from common import pct
from memory import TreeMemory
from probe_first_answers import body_only_word

from canon_ls.core.storage.store import Store

WORKDIR = b.HERE / "out" / "first-answers"
LINGER: list[float] = []  # seconds each server's children outlived it
QUIET: list[float] = []  # seconds waited for a quiet machine before each start


def governed_files(repo: Path, n: int) -> list[Path]:
    """The first n tracked files that have their own article (what an editor opens)."""
    articles = repo / ".canon" / "articles"
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True
    ).stdout.decode()
    found = []
    for rel in out.split("\0"):
        if not rel or rel.startswith(".canon/") or "." not in rel.rsplit("/", 1)[-1]:
            continue
        if (articles / f"{rel.rsplit('.', 1)[0]}.md").exists():
            found.append(repo / rel)
            if len(found) == n:
                break
    return found


def quiet(busy: float = 10.0, limit: float = 60.0) -> float:
    """Wait (up to `limit` s) until the CPUs are at most `busy` % used over half a second: what
    another benchmark left running after it released the machine's lock ends first; returns
    the seconds waited."""
    started = time.perf_counter()
    while psutil.cpu_percent(interval=0.5) > busy and time.perf_counter() - started < limit:
        pass
    QUIET.append(time.perf_counter() - started)
    return QUIET[-1]


def close_all(client: b.Client) -> float:
    """Shut the server down, then wait for every process it had started to exit (a git of the
    start-up check outlived a shutdown at 50k by up to 12 s and slowed the next start down);
    returns how long they outlived the server, in seconds."""
    try:
        family = psutil.Process(client.proc.pid).children(recursive=True)
    except psutil.Error:
        family = []
    client.close()
    closed = time.perf_counter()
    psutil.wait_procs(family, timeout=120)
    return time.perf_counter() - closed


@contextlib.contextmanager
def ours(repo: Path) -> Iterator[tuple[b.Client, float]]:
    """One start of our server on a quiet machine with its own cache; closed (and its
    children's lingering counted) however the measure ends."""
    cache = Path(tempfile.mkdtemp(prefix="canon-first-"))
    quiet()
    client, t0 = b.start_ours(repo, "vscode", cache)
    try:
        yield client, t0
    finally:
        LINGER.append(close_all(client))
        shutil.rmtree(cache, ignore_errors=True)


@contextlib.contextmanager
def measured(repo: Path) -> Iterator[tuple[b.Client, float, TreeMemory]]:
    """One start of ours, its process tree's memory sampled until the block ends."""
    with ours(repo) as (client, t0):
        memory = TreeMemory(client.proc.pid).start()
        try:
            yield client, t0, memory
        finally:
            memory.stop()


def to_check_end(client: b.Client, memory: TreeMemory) -> dict[str, Any]:
    """The tree's memory figures once the start-up check's progress has ended."""
    client.progress_end.wait(timeout=600)
    return memory.stop()


def refs_params(target: Path) -> dict[str, Any]:
    return {
        "textDocument": {"uri": target.as_uri()},
        "position": {"line": 0, "character": 0},
        "context": {"includeDeclaration": False},
    }


def open_file(client: b.Client, path: Path) -> str:
    uri = path.as_uri()
    text = path.read_text(encoding="utf-8", errors="replace")
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "plaintext", "version": 1, "text": text}},
    )
    return uri


def ours_queries(
    repo: Path, body: str, title: str, target: Path, settle: bool = True
) -> dict[str, Any]:
    """One start: the two symbol queries, then references; with `settle`, references wait
    for the "indexing" progress to end (the server built, the store loaded, BM25 ready)."""
    with measured(repo) as (client, t0, memory):
        figures: dict[str, Any] = {"initialize_ms": client.initialize_ms}
        hits = client.request("workspace/symbol", {"query": body})
        figures["symbol_body_ms"] = (time.perf_counter() - t0) * 1000
        figures["symbol_body_results"] = len(hits or [])
        hits = client.request("workspace/symbol", {"query": title})
        figures["symbol_title_ms"] = (time.perf_counter() - t0) * 1000
        figures["symbol_title_results"] = len(hits or [])
        if settle:
            client.indexing.wait(timeout=10)
            if client.indexing.is_set():
                client.indexed.wait(timeout=1800)
            figures["indexed_s"] = time.perf_counter() - t0
        params = refs_params(target)
        t = time.perf_counter()
        refs = client.request("textDocument/references", params)
        figures["refs_first_ms"] = (time.perf_counter() - t) * 1000
        figures["refs_first_from_start_ms"] = (time.perf_counter() - t0) * 1000
        figures["refs_count"] = len(refs or [])
        figures["refs_warm"] = [
            b._timed_ms(client, "textDocument/references", params) for _ in range(20)
        ]
        figures["memory"] = to_check_end(client, memory)  # the whole start-up's
        figures["check_end_s"] = time.perf_counter() - t0
        return figures


def ours_title_first(repo: Path, title: str) -> dict[str, Any]:
    """One start: a title as the first workspace/symbol query, timed from process start."""
    with ours(repo) as (client, t0):
        hits = client.request("workspace/symbol", {"query": title})
        return {"ms": (time.perf_counter() - t0) * 1000, "results": len(hits or [])}


def ours_after_hover(repo: Path, files: list[Path], target: Path) -> dict[str, Any]:
    """One start: a hover, then references at once, and hovers for as long as it is awaited."""
    with ours(repo) as (client, t0):
        uri = open_file(client, files[0])
        client.request("textDocument/hover", b.hover_params(uri))
        figures: dict[str, Any] = {"sent_ms": (time.perf_counter() - t0) * 1000}
        params = refs_params(target)

        def refs() -> None:
            t = time.perf_counter()
            figures["refs_count"] = len(client.request("textDocument/references", params) or [])
            figures["refs_first_ms"] = (time.perf_counter() - t) * 1000
            figures["refs_first_from_start_ms"] = (time.perf_counter() - t0) * 1000

        thread = threading.Thread(target=refs)
        thread.start()
        hovers: list[float] = []
        while thread.is_alive():
            hovers += b.timings(client, "textDocument/hover", b.hover_params(uri), 1)
        thread.join()
        figures["hover_meanwhile"] = hovers
        return figures


def ours_editor(repo: Path, files: list[Path], window_limit: float) -> dict[str, Any]:
    with measured(repo) as (client, t0, memory):
        try:
            uri = open_file(client, files[0])
            client.request("textDocument/hover", b.hover_params(uri))
            figures: dict[str, Any] = {"first_hover_ms": (time.perf_counter() - t0) * 1000}
            for path in files[1:6]:
                open_file(client, path)
            hover, inlay = [], []
            deadline = time.perf_counter() + window_limit
            while not client.progress_end.is_set() and time.perf_counter() < deadline:
                hover += b.timings(client, "textDocument/hover", b.hover_params(uri), 1)
                inlay += b.timings(client, "textDocument/inlayHint", b.inlay_params(uri), 1)
            figures["window_complete"] = client.progress_end.is_set()
            figures["check_end_s"] = time.perf_counter() - t0
            figures["hover"], figures["inlay"] = hover, inlay
            figures["memory"] = to_check_end(client, memory)
            return figures
        finally:
            subprocess.run(["git", "checkout", "--", ".canon"], cwd=repo, capture_output=True)


def check_on_store(client: b.Client, limit: float = 120.0) -> bool:
    """Wait until the server's check child holds a git slot itself, with no git of its own
    running, twice 50 ms apart: `gitrun.heavy`, its store loaded. False when the check ended
    first, or past `limit` seconds."""
    deadline, server, seen = time.perf_counter() + limit, client.proc.pid, 0
    while time.perf_counter() < deadline and not client.progress_end.is_set():
        with contextlib.suppress(psutil.Error, OSError):
            for child in psutil.Process(server).children():
                if "helpers.background" in " ".join(child.cmdline()):
                    seen = seen + 1 if _holds_slot(child) else 0
        if seen >= 2:
            return True
        time.sleep(0.05)
    return False


def _holds_slot(check: psutil.Process) -> bool:
    env = check.environ().get("CANON_GIT_SLOTS", "")
    slots = {os.readlink(path) for path in env.split(os.pathsep) if path}
    if not slots or any("git" in p.name() for p in check.children()):
        return False
    folder = f"/proc/{check.pid}/fd"
    return any(os.readlink(f"{folder}/{fd}") in slots for fd in os.listdir(folder))


def ours_late_query(repo: Path, files: list[Path], body: str) -> dict[str, Any]:
    with measured(repo) as (client, _, memory):
        uri = open_file(client, files[0])
        client.request("textDocument/hover", b.hover_params(uri))
        figures: dict[str, Any] = {"check_on_store": check_on_store(client)}
        t = time.perf_counter()
        hits = client.request("workspace/symbol", {"query": body})
        figures["symbol_ms"] = (time.perf_counter() - t) * 1000
        figures["symbol_results"] = len(hits or [])
        figures["memory"] = to_check_end(client, memory)
        return figures


def peer_workdir() -> Path:
    """The peer's npm install: bench_lsp's (benchmarks/out/vmls) when there, else installed."""
    WORKDIR.mkdir(parents=True, exist_ok=True)
    modules = WORKDIR / "node_modules"
    if not modules.exists():
        for there in (b.HERE / "out" / "vmls" / "node_modules",):
            if there.exists():
                modules.symlink_to(there)
    return WORKDIR


def report(size: str, rounds: list[dict[str, Any]]) -> None:
    def col(side: str, key: str, fmt: str = "{:.0f}") -> str:
        vals = [r[side][key] for r in rounds if r.get(side) and key in r[side]]
        return " / ".join(fmt.format(v) for v in vals) if vals else "n/a"

    def pcts(side: str, key: str, p: int) -> str:
        vals = [pct(r[side][key], p) for r in rounds if r.get(side) and r[side].get(key)]
        return " / ".join(f"{v:.2f}" for v in vals) if vals else "n/a"

    for r in rounds:
        if r.get("peer"):
            r["peer"]["refs_warm_p50"] = pct(r["peer"]["refs_warm"], 50)
            r["peer"]["symbol_title_ms"] = r["peer"]["symbol_warm_from_start_ms"][0]
        for side in ("ours", "ours_editor", "ours_late"):
            mem = r[side]["memory"]
            r[side]["peak_mb"] = mem["peak_total_mb"]
            r[side]["git_peak_mb"] = max(
                [0.0] + [s for role, s in mem["by_role"].items() if role == "git"]
            )
        r["ours"]["refs_warm_p50"] = pct(r["ours"]["refs_warm"], 50)
        if r.get("peer"):
            r["peer"]["refs_first_from_start_ms"] = (
                r["peer"]["symbol_title_ms"] + r["peer"]["refs_first_ms"]
            )
    print(f"\n== {size}: {len(rounds)} round(s), figures per round (ms unless said)")
    rows = [
        ("start -> initialize", "initialize_ms", "initialize_ms", "{:.0f}"),
        (
            "start -> first symbol, body word",
            "symbol_body_ms",
            "symbol_first_from_start_ms",
            "{:.0f}",
        ),
        ("start -> then a title (2nd query)", "symbol_title_ms", "symbol_title_ms", "{:.0f}"),
        ("first references (ours: indexed)", "refs_first_ms", "refs_first_ms", "{:.1f}"),
        ("warm references p50", "refs_warm_p50", "refs_warm_p50", "{:.2f}"),
    ]
    for label, ours_key, peer_key, fmt in rows:
        print(f"{label:34} ours {col('ours', ours_key, fmt):24} peer {col('peer', peer_key, fmt)}")
    print(f"{'start -> a title as first query':34} ours {col('ours_title', 'ms')}")
    print(f"{'ours: indexing ended after (s)':34} ours {col('ours', 'indexed_s', '{:.2f}')}")
    print(
        f"{'first references after a hover':34} ours {col('ours_at_once', 'refs_first_ms')}"
        f" (sent {col('ours_at_once', 'sent_ms')} ms from start), answered from start "
        f"{col('ours_at_once', 'refs_first_from_start_ms')}; peer from start "
        f"{col('peer', 'refs_first_from_start_ms')} (after its symbols)"
    )
    print(
        f"{'  hovers meanwhile, max':34} ours "
        + " / ".join(f"{max(r['ours_at_once']['hover_meanwhile'] or [0]):.1f}" for r in rounds)
        + " (n "
        + " / ".join(str(len(r["ours_at_once"]["hover_meanwhile"])) for r in rounds)
        + ")"
    )
    print(
        f"{'symbols found (body, title)':34} ours {col('ours', 'symbol_body_results')}, "
        f"{col('ours', 'symbol_title_results')}"
    )
    print(
        f"{'references found':34} ours {col('ours', 'refs_count'):24} "
        f"peer {col('peer', 'refs_count')}"
    )
    print(f"{'start -> first hover':34} ours {col('ours_editor', 'first_hover_ms')}")
    for name in ("hover", "inlay"):
        print(
            f"{name + ' p50 / p99, start-up window':34} ours p50 {pcts('ours_editor', name, 50)}"
            f"; p99 {pcts('ours_editor', name, 99)}"
            f" (n {' / '.join(str(len(r['ours_editor'][name])) for r in rounds)})"
        )
    print(f"{'start -> check end (s)':34} ours {col('ours_editor', 'check_end_s', '{:.1f}')}")
    print(
        f"{'peak RSS tree, editor start (MB)':34} ours {col('ours_editor', 'peak_mb')}"
        f" (git peaks summed {col('ours_editor', 'git_peak_mb')})"
    )
    print(
        f"{'peak RSS tree, queries start (MB)':34} ours {col('ours', 'peak_mb'):24} "
        f"peer {col('peer', 'peak_rss_mb')} (server process)"
    )
    print(f"{'peak RSS tree, late query (MB)':34} ours {col('ours_late', 'peak_mb')}")
    print(f"{'late query, body word, answered in':34} ours {col('ours_late', 'symbol_ms')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--peer-limit", type=float, default=300, help="seconds per peer run")
    parser.add_argument("--window-limit", type=float, default=300, help="seconds of hovers")
    parser.add_argument("--skip-peer", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    repo = args.repo.resolve()
    body = body_only_word(repo)
    target = b.most_linked(repo)
    article = Store(repo).article(str(target.relative_to(repo / ".canon" / "articles"))[:-3])
    title = article.title if article and article.title else target.stem
    files = governed_files(repo, 6)
    print(f"body word {body!r}, title {title!r}, references on {target.name}")
    workdir = peer_workdir()
    vault = None if args.skip_peer else b.markdown_vault(repo, workdir / "vault")
    rounds: list[dict[str, Any]] = []
    for n in range(args.rounds):
        result: dict[str, Any] = {}
        order = ("ours", "peer") if n % 2 == 0 else ("peer", "ours")
        for side in order:
            if side == "ours":
                result["ours_title"] = ours_title_first(repo, title)
                result["ours_at_once"] = ours_after_hover(repo, files, target)
                result["ours"] = ours_queries(repo, body, title, target, True)
                result["ours_editor"] = ours_editor(repo, files, args.window_limit)
                result["ours_late"] = ours_late_query(repo, files, body)
            elif vault is not None:
                quiet()
                peer_target = vault / target.relative_to(repo / ".canon" / "articles")
                result["peer"] = b.bench_peer(
                    vault, [body, title], peer_target, workdir, args.peer_limit, typed=[]
                )
        rounds.append(result)
        print(f"round {n + 1} done ({' then '.join(order)})", flush=True)
    report(repo.parent.name, rounds)
    print(f"children outlived their server by at most {max(LINGER or [0]):.1f} s (waited for)")
    print(f"waited for a quiet machine before a start at most {max(QUIET or [0]):.1f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rounds, indent=1))


if __name__ == "__main__":
    main()
