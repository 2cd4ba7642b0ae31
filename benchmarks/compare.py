#!/usr/bin/env python3
"""Interleaved runs of bench_core.py over two revisions of the code (base and new, HEAD).

    python benchmarks/compare.py --repo benchmarks/repos/m10k --base da6b119 --rounds 5

Each revision's `canon_ls/` is extracted (git archive) into a temporary directory beside a
copy of this checkout's benchmark scripts, so both trees run the same measuring code (and
edits to the work tree meanwhile change nothing); the runs
alternate (base, new, new, base, ...) so that load on a shared machine falls on both alike.
Each run has its own cache directory. Prints the median, minimum and maximum of each figure for
both trees and the ratio of the medians. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from common import median  # noqa: E402

FIGURES = (
    "cold_load_s",  # with --skip leaving the cold stage in: the store's load, parse cache on
    "cold_load_no_cache_s",  # ... and parsing every article
    "cold_import_s",
    "cold_process_wall_s",
    "resolve_ns",  # the resolve stage: §4 resolution through the Store
    "resolve_path_ns",
    "first_search_s",
    "store_search_p50_ms",
    "assets_s",
    "change_times_cold_s",
    "change_times_cache_mb",
    "change_times_cached_s",
    "change_times_refresh_s",
    "stale_s",
    "check_s",
    "article_findings_p50_ms",
    "read_stale_ms",
    "write_p50_ms",
    "write_p99_ms",
    "journal_p50_ms",
    "journal_p99_ms",
    "lock_p50_us",
)


def extract(rev: str, into: Path, own_scripts: bool = False) -> Path:
    """`canon_ls/` of `rev` plus this checkout's benchmarks/ scripts (own_scripts: `rev`'s own
    benchmarks/, for a base from before a relayout the scripts' imports follow), under `into`."""
    paths = ["canon_ls", "benchmarks"] if own_scripts else ["canon_ls"]
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, *paths],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    if not own_scripts:
        (into / "benchmarks").mkdir()
        for script in HERE.glob("*.py"):
            shutil.copy(script, into / "benchmarks" / script.name)
    return into


def run(tree: Path, repo: Path, skip: str, cache: Path, out: Path) -> dict[str, float]:
    # PYTHONPATH and the working directory (`python -c` looks there first): the cold stage's
    # child processes import this tree's canon_ls too, not the checkout's
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), PYTHONPATH=str(tree))
    cmd = [sys.executable, str(tree / "benchmarks" / "bench_core.py"), "--repo", str(repo)]
    cmd += ["--skip", skip, "--json", str(out), "--no-rank-bm25"]  # the reference is neither tree
    subprocess.run(cmd, check=True, env=env, cwd=tree, stdout=subprocess.DEVNULL)
    figures = json.loads(out.read_text(encoding="utf-8"))
    return {k: float(figures[k]) for k in FIGURES if isinstance(figures.get(k), (int, float))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, help="a gen_repo.py output directory")
    ap.add_argument("--base", required=True, help="the git revision to compare against")
    ap.add_argument("--new", default="HEAD", help="the revision measured against it")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--skip", default="cold,resolve,search,write")
    ap.add_argument(
        "--own-scripts",
        action="store_true",
        help="each revision runs its own benchmarks/ (a base from before a relayout: check with "
        "`git diff BASE NEW -- benchmarks/bench_core.py` that only imports differ)",
    )
    args = ap.parse_args()
    repo = Path(args.repo).resolve()
    with tempfile.TemporaryDirectory(prefix="canon-compare-") as tmp:
        work = Path(tmp)
        trees = {
            name: extract(rev, work / name, args.own_scripts)
            for name, rev in (("base", args.base), ("new", args.new))
        }
        runs: dict[str, list[dict[str, float]]] = {"base": [], "new": []}
        for n in range(args.rounds):
            order = ("base", "new") if n % 2 == 0 else ("new", "base")
            for name in order:
                cache = work / f"cache-{name}-{n}"
                got = run(trees[name], repo, args.skip, cache, work / f"{name}-{n}.json")
                runs[name].append(got)
                shown = ", ".join(f"{k} {v:.3f}" for k, v in got.items())
                print(f"round {n + 1} {name}: {shown}", flush=True)
        print(f"\nmedian (min-max) of {args.rounds} interleaved runs; {args.base} vs {args.new}")
        print(f"{'figure':26} {'base':>22} {'new':>22} {'new/base':>9}")
        for key in FIGURES:
            cols = []
            for name in ("base", "new"):
                values = [r[key] for r in runs[name] if key in r]
                cols.append(values)
            if not cols[0] or not cols[1]:
                continue
            b, w = median(cols[0]), median(cols[1])
            fmt = [f"{median(v):.3f} ({min(v):.3f}-{max(v):.3f})" for v in cols]
            print(f"{key:26} {fmt[0]:>22} {fmt[1]:>22} {w / b if b else float('nan'):>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
