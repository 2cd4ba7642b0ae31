"""Where the language server's memory goes, process by process (docs/BENCHMARKS.md, issue 15).

Each stage runs in a fresh Python (as the server and its children do) and prints its resident
set (VmRSS, VmHWM) and what `tracemalloc` attributes to the stage's objects:

- server: the imports of the language server, then the Store loaded (per part of an Article:
  bodies, front matter, the objects themselves), then core's backlinks index;
- check: the whole-store child's pass (`background.compute`: Store, Assets, ChangeTimes);
- search: the search worker's index (`SearchCorpus`), built cold and loaded from its snapshot.

    .venv/bin/python benchmarks/bench_memory.py --repo benchmarks/repos/m10k/repo

`--tree` instead: the real language server started cold (an empty cache, as bench_lsp.py
starts it), one document opened and a hover, until its start-up work ended and
the search worker answers; its whole process tree sampled every 0.1 s (benchmarks/memory.py:
the largest total RSS at one moment, server + children + git, each role's peak, the most git
processes at once). `--spy DIR` puts benchmarks/git_spy.py first on PATH (each git command's
peak RSS and time; its own Pythons then count in the tree's total: take that from a run
without it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def status() -> dict[str, float]:
    out = {}
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line[:5]] = round(int(line.split()[1]) / 1024, 1)
    return out


def mb(n: float) -> float:
    return round(n / 2**20, 1)


def stage_server(repo: Path) -> dict[str, Any]:
    import tracemalloc

    import canon_ls.lsp.server  # noqa: F401  (what the server process imports)

    out: dict[str, Any] = {"imports": status()}
    from canon_ls.core.storage.project import open_store

    tracemalloc.start()
    store = open_store(repo, {})
    store.addresses()
    loaded = tracemalloc.get_traced_memory()[0]
    out["store"] = {"traced_mb": mb(loaded), **status()}
    out["store"]["parts_mb"] = article_parts(store)
    top = tracemalloc.take_snapshot().statistics("lineno")[:8]
    out["store"]["top"] = [f"{mb(s.size)} MB {s.traceback[0]}" for s in top]
    store.backlinks("x")  # core's inverse link index, built in full
    out["backlinks"] = {"traced_mb": mb(tracemalloc.get_traced_memory()[0] - loaded), **status()}
    return out


def article_parts(store: Any) -> dict[str, float]:
    """Bytes held by each part of the loaded articles (shared strings counted once)."""
    seen: set[int] = set()
    parts = {"bodies": 0, "capsules+titles+dates": 0, "front matter dicts": 0, "objects": 0}

    def size(obj: Any) -> int:
        if id(obj) in seen:
            return 0
        seen.add(id(obj))
        total = sys.getsizeof(obj)
        if isinstance(obj, dict):
            total += sum(size(k) + size(v) for k, v in obj.items())
        elif isinstance(obj, (list, tuple)):
            total += sum(size(v) for v in obj)
        return total

    parts["link targets"] = 0
    for article in store.articles():
        # a lean article holds no body (reading `body` would read the file): count what it holds
        held = article.held if hasattr(article, "held") else article.body
        parts["bodies"] += size(held) if held is not None else 0
        parts["link targets"] += size(getattr(article, "targets", ()))
        parts["capsules+titles+dates"] += sum(
            size(v) for v in (article.capsule, article.title, article.updated, article.address)
        )
        parts["front matter dicts"] += size(article.meta) + size(article.problems)
        parts["objects"] += size(article) + size(getattr(article, "__dict__", {}))
    parts["index dict"] = sys.getsizeof(store._index)
    return {k: mb(v) for k, v in parts.items()}


def stage_check(repo: Path) -> dict[str, Any]:
    """The child's pass as a whole, then its parts one by one (what each holds)."""
    import pickle
    import tracemalloc

    from canon_ls.core.checking import assets as core_assets
    from canon_ls.core.checking import check
    from canon_ls.core.git import changes, staleness
    from canon_ls.core.storage.project import open_store
    from canon_ls.lsp.helpers import background

    out: dict[str, Any] = {"imports": status()}
    tracemalloc.start()
    snap = background.compute(repo, {}, True)
    current, peak = tracemalloc.get_traced_memory()
    out["compute"] = {
        "traced_peak_mb": mb(peak),
        "traced_after_mb": mb(current),
        "snapshot_pickle_mb": mb(len(pickle.dumps(snap))),
        **status(),
    }
    del snap
    parts: dict[str, float] = {}
    base = tracemalloc.get_traced_memory()[0]
    store = open_store(repo, {})
    store.addresses()
    parts["store"] = mb(tracemalloc.get_traced_memory()[0] - base)
    base = tracemalloc.get_traced_memory()[0]
    assets = core_assets.Assets(repo, store_root=store.root)
    parts["assets"] = mb(tracemalloc.get_traced_memory()[0] - base)
    base = tracemalloc.get_traced_memory()[0]
    times = changes.ChangeTimes(repo)
    parts["change times"] = mb(tracemalloc.get_traced_memory()[0] - base)
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    articles = set(store.addresses())
    governed = staleness.governed_pairs(articles, assets)
    parts["governed pairs"] = mb(tracemalloc.get_traced_memory()[0] - base)
    base = tracemalloc.get_traced_memory()[0]
    findings = check.check(store, assets, None, staleness=False)
    parts["check findings (held)"] = mb(tracemalloc.get_traced_memory()[0] - base)
    parts["check, transient peak"] = mb(tracemalloc.get_traced_memory()[1] - base)
    out["parts_mb"] = parts
    out["parts_top"] = [
        f"{mb(s.size)} MB {s.traceback[0]}"
        for s in tracemalloc.take_snapshot().statistics("lineno")[:10]
    ]
    del findings, governed, times
    return out


def stage_search(repo: Path) -> dict[str, Any]:
    import tracemalloc

    from canon_ls.core.retrieval.search_corpus import SearchCorpus
    from canon_ls.core.storage.project import open_store

    tracemalloc.start()
    corpus = SearchCorpus(open_store(repo, {}))
    corpus.build()
    current, peak = tracemalloc.get_traced_memory()
    return {"traced_peak_mb": mb(peak), "traced_index_mb": mb(current), **status()}


def tree(repo: Path, spy: Path | None, warm: bool = False) -> dict[str, Any]:
    """The server's process tree through a cold start (see the module's docstring); `warm`: the
    second start over the caches the first left (an editor opened again), the first unmeasured."""
    import time

    sys.path.insert(0, str(Path(__file__).parent))
    from bench_lsp import hover_params, pick_governed_file, start_ours, wait_settled
    from memory import TreeMemory, describe

    if spy is not None:
        import git_spy

        os.environ["PATH"] = f"{spy / 'bin'}{os.pathsep}{os.environ['PATH']}"
        git_spy.install(spy)
    rel, _ = pick_governed_file(repo)
    uri = (repo / rel).as_uri()
    with tempfile.TemporaryDirectory(prefix="canon-mem-tree-") as cache:
        for _ in range(2 if warm else 1):  # the last start is the one measured
            client, t0 = start_ours(repo, "vscode", Path(cache))
            memory = TreeMemory(client.proc.pid).start()
            try:
                text = (repo / rel).read_text(encoding="utf-8", errors="replace")
                doc = {"uri": uri, "languageId": "plaintext", "version": 1, "text": text}
                client.notify("textDocument/didOpen", {"textDocument": doc})
                client.request("textDocument/hover", hover_params(uri))
                client.progress_end.wait(timeout=900)
                ended = time.perf_counter() - t0
                settled = wait_settled(client, repo) - t0
                time.sleep(1.0)  # what the settled tree holds
                figures = memory.stop()
            finally:
                memory.stop()
                client.close()
    figures["progress_end_s"], figures["settled_s"] = ended, settled
    print(describe(figures))
    if spy is not None:
        print(git_spy.report(spy))
    return figures


STAGES = {"server": stage_server, "check": stage_check, "search": stage_search}


def run(stage: str, repo: Path, cache: Path) -> dict[str, Any]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    manifest = repo.parent / "manifest.json"
    if manifest.exists():
        env["CANON_TODAY"] = json.loads(manifest.read_text())["today"]
    done = subprocess.run(
        [sys.executable, __file__, "--stage", stage, "--repo", str(repo)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--stage", choices=sorted(STAGES))
    parser.add_argument("--tree", action="store_true", help="the server's whole process tree")
    parser.add_argument("--spy", type=Path, help="with --tree: git_spy.py's folder (new)")
    parser.add_argument("--warm", action="store_true", help="with --tree: a second start")
    args = parser.parse_args()
    repo = args.repo.resolve()
    if args.tree:
        spy = args.spy.resolve() if args.spy else None
        print(json.dumps(tree(repo, spy, args.warm), indent=1))
        return
    if args.stage:
        print(json.dumps(STAGES[args.stage](repo)))
        return
    with tempfile.TemporaryDirectory(prefix="canon-mem-") as tmp:
        cache = Path(tmp)
        results = {
            "search (cold)": run("search", repo, cache),
            "search (from its snapshot)": run("search", repo, cache),
            "check (cold git pass)": run("check", repo, cache),
            "server (parse cache cold)": run("server", repo, Path(tmp) / "none"),
        }
        for label, value in results.items():
            print(f"== {label}")
            print(json.dumps(value, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
