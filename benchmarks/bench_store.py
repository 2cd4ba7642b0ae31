"""The store's load, backlinks and whole-store check in one process, timed, with its peak RSS,
and the findings written out so two versions can be compared line for line (docs/BENCHMARKS.md,
issue 15). Run it twice with the same XDG_CACHE_HOME for a cold and a warm parse cache.
`--server`: import what the language server imports first, and stop after the backlinks
index (the server's own part), printing VmHWM after each step:

    XDG_CACHE_HOME=$(mktemp -d) .venv/bin/python benchmarks/bench_store.py \
        --repo benchmarks/repos/m10k/repo --findings /tmp/after.json [--stale]
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

from canon_ls.core.checking import check
from canon_ls.core.checking.assets import Assets
from canon_ls.core.storage.project import open_store


def hwm_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--findings", type=Path, help="write the findings here (JSON)")
    parser.add_argument("--stale", action="store_true", help="with the git pass (staleness)")
    parser.add_argument("--server", action="store_true", help="the server's imports and part")
    args = parser.parse_args()
    if args.server:
        import canon_ls.lsp.server  # noqa: F401
    hwm = {"imports": hwm_mb()}
    t0 = time.perf_counter()
    store = open_store(args.repo, {})
    store.addresses()
    t1 = time.perf_counter()
    hwm["store"] = hwm_mb()
    store.backlinks("x")
    t2 = time.perf_counter()
    hwm["backlinks"] = hwm_mb()
    if args.server:
        print(json.dumps({"load_s": round(t1 - t0, 3), "vmhwm_mb": hwm}))
        return
    assets = Assets(args.repo, store_root=store.root)
    t3 = time.perf_counter()
    found = check.check(store, assets, None, staleness=args.stale)
    t4 = time.perf_counter()
    if args.findings:
        rows = [[f.address, f.code, f.severity, f.message, f.line, f.start, f.end] for f in found]
        args.findings.write_text(json.dumps(rows))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "load_s": round(t1 - t0, 3),
                "backlinks_s": round(t2 - t1, 3),
                "check_s": round(t4 - t3, 3),
                "findings": len(found),
                "maxrss_mb": round(peak, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
