#!/usr/bin/env python3
"""Core figures at M articles / N files: cold load, resolve, search (beside rank-bm25),
index update, write/journal latency, whole-store check, memory.

    python benchmarks/gen_repo.py --out benchmarks/repos/m10k --files 100000 --articles 10000
    python benchmarks/bench_core.py --repo benchmarks/repos/m10k

Prints one line per figure and the issue's targets with PASS/MISS. `--json FILE` also writes
every figure. The write stage edits articles of the generated repo and restores them with git
at the end. Performance is measured here, never asserted in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from common import machine, median, pct, peak_rss_mb, rss_mb, timed  # noqa: E402

from canon_ls.core.checking.assets import Assets, address_of_path  # noqa: E402

try:  # compare.py also runs revisions from before core/checking/check.py (all in assets.py then)
    from canon_ls.core.checking.check import article_findings, check, orphans
    from canon_ls.core.git.changes import ChangeTimes
    from canon_ls.core.git.staleness import stale
except ImportError:
    from canon_ls.core.checking.assets import (  # type: ignore[attr-defined,no-redef]
        ChangeTimes,
        article_findings,
        check,
        orphans,
        stale,
    )
from canon_ls.core.retrieval.search import SearchIndex, tokenize  # noqa: E402
from canon_ls.core.retrieval.search_file import cached_index  # noqa: E402
from canon_ls.core.storage.store import Store  # noqa: E402

COLD_CHILD = r"""
import json, os, sys, time
t0 = time.perf_counter()
from pathlib import Path
from canon_ls.core.storage.store import Store
t1 = time.perf_counter()
store = Store(Path(sys.argv[1]))
store.refresh()
t2 = time.perf_counter()
n = len(store.addresses())
def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
rss_loaded = rss()
t3 = time.perf_counter()
store.search_articles("config cache", 10)
t4 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "articles": n,
                  "rss_loaded_mb": rss_loaded, "first_search_s": t4 - t3,
                  "rss_search_mb": rss()}))
"""

FIGURES: dict[str, Any] = {}


def say(key: str, value: Any, text: str) -> None:
    FIGURES[key] = value
    if text:
        print(f"  {text}", flush=True)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


# -- stages -----------------------------------------------------------------------------------


def _cold_runs(repo: Path, runs: int, env: dict[str, str]) -> list[dict[str, Any]]:
    results = []
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", COLD_CHILD, str(repo)],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        data = json.loads(out.stdout)
        data["process_wall_s"] = time.perf_counter() - start
        results.append(data)
    return results


def stage_cold(repo: Path, runs: int) -> None:
    print(f"cold load: fresh subprocess x{runs} (Store(project) + refresh(), after imports)")
    no_cache = _cold_runs(repo, runs, dict(os.environ, CANON_NO_CACHE="1"))
    _cold_runs(repo, 1, dict(os.environ, CANON_NO_CACHE="0"))  # writes the parse cache
    cached = _cold_runs(repo, runs, dict(os.environ, CANON_NO_CACHE="0"))

    def m(results: list[dict[str, Any]], key: str) -> float:
        return median([r[key] for r in results])

    say(
        "cold_load_s",
        m(cached, "load_s"),
        f"index ready after imports: {m(cached, 'load_s'):.3f} s with the parse cache, "
        f"{m(no_cache, 'load_s'):.3f} s parsing every article (CANON_NO_CACHE=1); "
        f"median of {runs}",
    )
    FIGURES["cold_load_no_cache_s"] = m(no_cache, "load_s")
    say(
        "cold_import_s",
        m(cached, "import_s"),
        f"import canon_ls.core.storage.store: {m(cached, 'import_s'):.3f} s",
    )
    say(
        "cold_process_wall_s",
        m(cached, "process_wall_s"),
        "whole child process (interpreter + imports + load + first search): "
        f"{m(cached, 'process_wall_s'):.2f} s",
    )
    say(
        "first_search_s",
        m(cached, "first_search_s"),
        f"first search (lazy BM25 build over {cached[0]['articles']} articles): "
        f"{m(cached, 'first_search_s'):.2f} s",
    )
    say(
        "rss_loaded_mb",
        m(cached, "rss_loaded_mb"),
        f"RSS after load: {m(cached, 'rss_loaded_mb'):.0f} MB; "
        f"with search index: {m(cached, 'rss_search_mb'):.0f} MB",
    )
    FIGURES["rss_search_mb"] = m(cached, "rss_search_mb")


def stage_resolve(store: Store, assets: Assets, rounds: int) -> None:
    files = assets.files()
    addresses = [address_of_path(f) for f in files]
    governed = sum(1 for a in addresses if store.governing(a))
    print(f"resolve: store.governing over {len(addresses)} file addresses x{rounds}")
    per_call = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for a in addresses:
            store.governing(a)
        per_call.append((time.perf_counter_ns() - start) / len(addresses))
    ns = median(per_call)
    say("resolve_ns", ns, f"governing(address): {ns:.0f} ns/call ({governed} governed)")
    sample = files[: min(len(files), 20000)]
    start = time.perf_counter_ns()
    for f in sample:
        store.governing(store.address_of(f))
    ns2 = (time.perf_counter_ns() - start) / max(1, len(sample))
    say("resolve_path_ns", ns2, f"governing(address_of(path)): {ns2:.0f} ns/call")


def _rank_bm25_top(bm: Any, tokens: list[str], k: int) -> tuple[list[int], int]:
    import numpy as np

    scores = bm.get_scores(tokens)
    matched = int(np.count_nonzero(scores))
    idx = np.argpartition(-scores, k)[:k] if k < len(scores) else np.arange(len(scores))
    idx = idx[np.argsort(-scores[idx])]
    return [int(i) for i in idx if scores[i] != 0], matched


def stage_search(store: Store, queries: list[dict[str, str]], rounds: int, rank: bool) -> None:
    from canon_ls.core.retrieval.search import article_text

    docs = [(a, article_text(store.article(a))) for a in store.addresses()]  # type: ignore[arg-type]
    keys = [a for a, _ in docs]
    print(f"search: {len(docs)} articles, {len(queries)} queries x{rounds} rounds")
    t_tok, toks = timed(lambda: [tokenize(t) for _, t in docs])
    n_tokens = sum(len(t) for t in toks)
    say("tokenize_s", t_tok, f"tokenize corpus: {t_tok:.2f} s ({n_tokens / 1e6:.2f} M tokens)")

    def build() -> SearchIndex:
        index = SearchIndex()
        for key, tokens in zip(keys, toks, strict=True):
            index.add_tokens(key, tokens)
        return index

    t_build, index = timed(build)
    say("index_build_s", t_build, f"SearchIndex build (pre-tokenized): {t_build:.2f} s")
    bm = None
    if rank:
        from rank_bm25 import BM25Okapi

        t_rank, bm = timed(BM25Okapi, toks)
        say("rank_bm25_build_s", t_rank, f"rank-bm25 BM25Okapi build: {t_rank:.2f} s")
    ours: dict[str, list[float]] = {}
    theirs: dict[str, list[float]] = {}
    ratios: list[float] = []
    overlap: list[float] = []
    for _ in range(rounds):
        for q in queries:
            text, lang = q["q"], q["lang"]
            start = time.perf_counter()
            hits, _total = index.query(text, 10)
            mine = time.perf_counter() - start
            ours.setdefault(lang, []).append(mine)
            if bm is not None:
                qtoks = list(dict.fromkeys(tokenize(text)))
                start = time.perf_counter()
                top, _matched = _rank_bm25_top(bm, qtoks, 10)
                other = time.perf_counter() - start
                theirs.setdefault(lang, []).append(other)
                ratios.append(other / mine if mine else float("nan"))
                a, b = {k for k, _ in hits}, {keys[i] for i in top}
                overlap.append(len(a & b) / len(a | b) if a | b else 1.0)
    all_ours = [x for v in ours.values() for x in v]
    p50, p99 = pct(all_ours, 50), pct(all_ours, 99)
    by_lang = " / ".join(f"{lang} {ms(pct(v, 50))}" for lang, v in ours.items())
    say("search_p50_ms", p50 * 1000, f"SearchIndex.query p50 {ms(p50)}, p99 {ms(p99)} ({by_lang})")
    FIGURES["search_p99_ms"] = p99 * 1000
    if bm is not None:
        all_theirs = [x for v in theirs.values() for x in v]
        r50, r99 = pct(all_theirs, 50), pct(all_theirs, 99)
        by_lang = " / ".join(f"{lang} {ms(pct(v, 50))}" for lang, v in theirs.items())
        say("rank_bm25_p50_ms", r50 * 1000, f"rank-bm25 p50 {ms(r50)}, p99 {ms(r99)} ({by_lang})")
        FIGURES["rank_bm25_p99_ms"] = r99 * 1000
        say(
            "speedup_p50",
            r50 / p50,
            f"speed-up: p50 {r50 / p50:.1f}x, median per-query {median(ratios):.1f}x, "
            f"top-10 Jaccard with rank-bm25 {median(overlap):.2f}",
        )
        FIGURES["speedup_per_query"] = median(ratios)

    # one-article update, then the next query (which refreshes the length norms)
    rng = random.Random(3)
    picks = rng.sample(range(len(docs)), min(200, len(docs)))
    adds, after = [], []
    for i in picks:
        text = docs[i][1] + " appended words 新增的内容"
        t_add, _ = timed(index.add, keys[i], text)
        t_q, _ = timed(index.query, queries[i % len(queries)]["q"], 10)
        adds.append(t_add)
        after.append(t_q)
    say(
        "update_p50_ms",
        pct(adds, 50) * 1000,
        f"one-article index update (tokenize + replace): p50 {ms(pct(adds, 50))}, "
        f"p99 {ms(pct(adds, 99))}; next query p50 {ms(pct(after, 50))}",
    )
    FIGURES["update_p99_ms"] = pct(adds, 99) * 1000
    FIGURES["query_after_update_p50_ms"] = pct(after, 50) * 1000
    del index, bm

    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "search.bin"
        stamped = {
            a: ((art.mtime_ns, art.size), (lambda art=art: article_text(art)))
            for a in store.addresses()
            if (art := store.article(a)) is not None
        }
        t_save, _ = timed(cached_index, cache, stamped)
        t_load, _ = timed(cached_index, cache, stamped)
        say(
            "cached_index_load_s",
            t_load,
            f"persisted index: build + save {t_save:.2f} s "
            f"({cache.stat().st_size / 1e6:.0f} MB), later starts load it in {t_load:.2f} s",
        )
        FIGURES["cached_index_build_s"] = t_save

    t_first, _ = timed(store.search_articles, "config cache", 10)
    lat = []
    for q in queries:
        t, _ = timed(store.search_articles, q["q"], 10)
        lat.append(t)
    say(
        "store_search_p50_ms",
        pct(lat, 50) * 1000,
        f"Store.search_articles: first call (builds) {t_first:.2f} s, then p50 "
        f"{ms(pct(lat, 50))}, p99 {ms(pct(lat, 99))}",
    )


def stage_writes(store: Store, repo: Path, n: int) -> None:
    print(f"write/journal: {n} writes to existing articles, {n} journal entries")
    rng = random.Random(5)
    addresses = [a for a in store.addresses() if ":" not in a]
    picks = rng.sample(addresses, min(n, len(addresses)))
    writes, journals = [], []
    try:
        for i, address in enumerate(picks):
            art = store.article(address)
            body = (art.body if art else "") + f"\nBench line {i}.\n"
            t, _ = timed(store.write, address, body=body)
            writes.append(t)
        for i, address in enumerate(picks):
            t, _ = timed(
                store.journal, f"Bench entry {i} about {address}.", subject=[address], slug="bench"
            )
            journals.append(t)
    finally:
        subprocess.run(["git", "checkout", "-q", "--", ".canon"], cwd=repo, check=False)
        subprocess.run(["git", "clean", "-fdq", "--", ".canon"], cwd=repo, check=False)
        store.refresh()
    say(
        "write_p50_ms",
        pct(writes, 50) * 1000,
        f"write (update, search index kept current): p50 {ms(pct(writes, 50))}, "
        f"p99 {ms(pct(writes, 99))}",
    )
    FIGURES["write_p99_ms"] = pct(writes, 99) * 1000
    say(
        "journal_p50_ms",
        pct(journals, 50) * 1000,
        f"journal: p50 {ms(pct(journals, 50))}, p99 {ms(pct(journals, 99))}",
    )
    FIGURES["journal_p99_ms"] = pct(journals, 99) * 1000
    stage_lock(store, n)


def stage_lock(store: Store, n: int) -> None:
    """The store lock alone (issue 9: under 1 ms p50): take and release the exclusive flock on
    the store root's descriptor, uncontended, as every write and journal entry does once."""
    from canon_ls.core.storage import fsio

    fd = fsio.open_dir(store.root, store.anchor, create=False, what="the store")
    lat = []
    try:
        for _ in range(max(n, 1000)):
            t0 = time.perf_counter()
            with fsio.locked(fd):
                pass
            lat.append(time.perf_counter() - t0)
    finally:
        os.close(fd)
    say(
        "lock_p50_us",
        pct(lat, 50) * 1e6,
        f"store lock (flock on the root, take + release): p50 {pct(lat, 50) * 1e6:.1f} µs, "
        f"p99 {pct(lat, 99) * 1e6:.1f} µs",
    )
    FIGURES["lock_p99_us"] = pct(lat, 99) * 1e6


def stage_check(store: Store, repo: Path, manifest: dict[str, Any]) -> None:
    print("whole-store check (canon check / startup diagnostics)")
    os.environ["CANON_TODAY"] = manifest.get("today", "")
    with tempfile.TemporaryDirectory() as cache:
        t_assets, assets = timed(Assets, repo, store.root)
        say("assets_s", t_assets, f"Assets (git ls-files): {t_assets:.2f} s")
        t_cold, times = timed(ChangeTimes, repo, Path(cache))
        say("change_times_cold_s", t_cold, f"ChangeTimes, full git log pass: {t_cold:.2f} s")
        size = sum(f.stat().st_size for f in Path(cache).glob("changes-*.bin")) / 1e6
        say("change_times_cache_mb", size, f"ChangeTimes cache file: {size:.1f} MB")
        t_warm, times2 = timed(ChangeTimes, repo, Path(cache))
        say(
            "change_times_cached_s", t_warm, f"ChangeTimes from cache (new process): {t_warm:.2f} s"
        )
        t_refresh, _ = timed(times2.refresh)
        say(
            "change_times_refresh_s",
            t_refresh,
            f"ChangeTimes.refresh, HEAD unchanged: {t_refresh:.2f} s",
        )
        t_stale, stale_found = timed(stale, store, assets, times)
        say(
            "stale_s",
            t_stale,
            f"stale(): verdicts (and evidence) of {len(stale_found)} stale articles: "
            f"{t_stale:.3f} s",
        )
        t_check, found = timed(check, store, assets, times)
        codes: dict[str, int] = {}
        for f in found:
            codes[f.code] = codes.get(f.code, 0) + 1
        say("check_s", t_check, f"check() over the store: {t_check:.2f} s -> {codes}")
        rng = random.Random(11)
        sample = rng.sample(store.addresses(), min(300, len(store.addresses())))
        one = [timed(article_findings, store, a, assets, times)[0] for a in sample]
        say(
            "article_findings_p50_ms",
            pct(one, 50) * 1000,
            f"article_findings (one article, incremental): p50 {ms(pct(one, 50))}, "
            f"p99 {ms(pct(one, 99))}",
        )
        FIGURES["article_findings_p99_ms"] = pct(one, 99) * 1000
        from canon_ls.core import tool

        stale_one = sorted(stale_found)[:20]
        if stale_one:  # the first read of a process fills the history cache (one full pass)
            tool.run(store, {"action": "read", "path": stale_one[0]})
        reads = [timed(tool.run, store, {"action": "read", "path": a})[0] for a in stale_one]
        say(
            "read_stale_ms",
            median(reads) * 1000,
            f"tool read of a stale article (its evidence line; cache warm): "
            f"p50 {ms(median(reads))}, max {ms(max(reads, default=0.0))}",
        )
        got_orphans = set(orphans(store, assets))
        got_stale = set(stale(store, assets, times))
        want_orphans, want_stale = set(manifest["orphaned"]), set(manifest["stale"])
        say(
            "truth_agreement",
            {
                "orphans": [len(got_orphans & want_orphans), len(got_orphans ^ want_orphans)],
                "stale": [len(got_stale & want_stale), len(got_stale ^ want_stale)],
            },
            f"against ground truth: orphans {len(got_orphans & want_orphans)} agree / "
            f"{len(got_orphans ^ want_orphans)} differ; stale {len(got_stale & want_stale)} "
            f"agree / {len(got_stale ^ want_stale)} differ",
        )


TARGETS = [
    ("cold_load_s", "<=", 0.5, "index ready after imports <= 0.5 s"),
    ("search_p50_ms", "<=", 2.0, "search p50 <= 2 ms"),
    ("speedup_p50", ">=", 5.0, "search >= 5x faster than rank-bm25 (p50)"),
    ("resolve_ns", "<=", 5000.0, "resolve <= 5 us"),
    ("update_p50_ms", "<=", 50.0, "one-article index update <= 50 ms"),
    ("article_findings_p50_ms", "<=", 20.0, "one article's diagnostics <= 20 ms"),
    ("lock_p50_us", "<=", 1000.0, "store lock p50 < 1 ms"),
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, help="a gen_repo.py output directory")
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--writes", type=int, default=200)
    ap.add_argument("--no-rank-bm25", action="store_true")
    ap.add_argument(
        "--skip", default="", help="comma list of stages: cold,resolve,search,write,check"
    )
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args(argv)
    out = Path(args.repo).resolve()
    repo = out / "repo"
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    queries = json.loads((out / "queries.json").read_text(encoding="utf-8"))
    skip = set(filter(None, args.skip.split(",")))
    FIGURES["machine"] = machine()
    FIGURES["repo"] = {k: manifest[k] for k in ("files", "articles", "journal", "commits")}
    print(json.dumps(FIGURES["machine"]))
    print(json.dumps(FIGURES["repo"]))
    if "cold" not in skip:
        stage_cold(repo, args.cold_runs)
    t_load, store = timed(lambda: (s := Store(repo), s.refresh(), s)[-1])
    print(f"in-process load for the remaining stages: {t_load:.2f} s, RSS {rss_mb():.0f} MB")
    if "resolve" not in skip:
        stage_resolve(store, Assets(repo, store.root), args.rounds)
    if "search" not in skip:
        stage_search(store, queries, args.rounds, rank=not args.no_rank_bm25)
    if "write" not in skip:
        stage_writes(store, repo, args.writes)
    if "check" not in skip:
        stage_check(store, repo, manifest)
    say("rss_end_mb", rss_mb(), f"RSS at the end: {rss_mb():.0f} MB (peak {peak_rss_mb():.0f} MB)")
    print("targets:")
    for key, op, bound, label in TARGETS:
        if key not in FIGURES:
            continue
        value = FIGURES[key]
        ok = value <= bound if op == "<=" else value >= bound
        print(f"  {'PASS' if ok else 'MISS'}  {label}: {value:.3g}")
    if args.json:
        Path(args.json).write_text(json.dumps(FIGURES, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
