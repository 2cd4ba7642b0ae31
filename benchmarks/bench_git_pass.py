#!/usr/bin/env python3
"""How the git pass, the asset listing and the whole-store check grow with the project.

    python benchmarks/bench_git_pass.py REPOS/m10k REPOS/m25k REPOS/m50k --runs 3

Each argument is a gen_repo.py --out directory (or the project itself). For each project, in
fresh processes: the history pass (exactly `changes.log_args(..., whole=True)`, through
gitrun, with each variant of `--variants`), the asset listing (`Assets(project, store_root)`:
core/checking/assets.py's two `git ls-files` and the listing built from them) and the language
server's
whole-store check child (`lsp.background.compute` in `python -c`, cold: an empty
XDG_CACHE_HOME). Prints the median and spread of each, git's peak memory (RssAnon and
RssFile, sampled from /proc), and a least-squares fit of log(seconds) on log(files): a slope
of 1 is linear growth, below 1 better.

Variants of the log pass (`--variants`): `default` (git's default delta base cache, 96 MB),
any size such as `32m`, `64m`, `128m` (that cache), `no-journal` (the store's journal left
out by a pathspec),
`chosen` (one `git log` with the cache ChangeTimes picks at this size), `pass` (the whole
pass as ChangeTimes runs it, cold, in a fresh process: `git status` alongside, the two halves
at once from 200 commits, the parse; its CPU includes git's, its memory is the Python
process's alone; the code is the one PYTHONPATH names, as for the check child). The wall
times share the machine; the CPU seconds (user + sys, from wait4) are steadier when other
work runs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import generated_store, machine, rss_parts, write_figures  # noqa: E402
from canon_ls.core.git import changes, gitrun  # noqa: E402

VARIANTS = ("default", "no-journal", "128m", "192m", "256m", "chosen", "pass")
DEFAULT_VARIANTS = "default,256m,chosen,pass"
PASS_CHILD = """
import json, sys, tempfile, time
from pathlib import Path
from canon_ls.core.git.changes import ChangeTimes
with tempfile.TemporaryDirectory() as cache:
    t = time.perf_counter()
    times = ChangeTimes(Path(sys.argv[1]), cache_dir=Path(cache))
    print(json.dumps({"seconds": time.perf_counter() - t, "paths": len(times._history.newest)}))
"""
CHECK_CHILD = """
import json, sys, time
from pathlib import Path
from canon_ls.lsp.helpers.background import compute
t = time.perf_counter()
snap = compute(Path(sys.argv[1]), {}, True)
print(json.dumps({"seconds": time.perf_counter() - t, "git_seconds": snap.git_seconds,
                  "findings": len(snap.findings), "stale": len(snap.stale), "error": snap.error}))
"""


def log_argv(project: Path, variant: str) -> list[str]:
    """The argv of one variant of the history pass (git's, or a Python child's for `pass`)."""
    if variant == "pass":
        return [sys.executable, "-c", PASS_CHILD, str(project)]
    if variant == "chosen":
        return gitrun.command(project, changes.log_args(project, "HEAD", whole=True))
    plain = changes.log_args(project, "HEAD", whole=False)  # git's default delta cache
    if variant == "default":
        return gitrun.command(project, plain)
    if variant == "no-journal":  # the journal left out by a pathspec (slower: see changes.py)
        at = plain.index("log") + 1
        spec = [".", ":(exclude,literal).canon/journal"]
        return gitrun.command(project, [*plain[:at], "--full-history", *plain[at:], *spec])
    return gitrun.command(project, ["-c", f"core.deltaBaseCacheLimit={variant}", *plain])


def sampled(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None, keep: bool = False
) -> dict[str, Any]:
    """Run argv, its stdout read as fast as it comes by a thread and dropped (kept with
    `keep`: a Python child's JSON line), its memory sampled from /proc every 20 ms; wall and
    CPU seconds."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    stdout = proc.stdout
    assert stdout is not None
    out = bytearray()
    size = [0]

    def drain() -> None:
        while chunk := os.read(stdout.fileno(), 1 << 20):
            size[0] += len(chunk)
            if keep:  # a Python child: keep its one JSON line
                out.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    anon = file = 0
    while reader.is_alive():
        now_anon, now_file = rss_parts(proc.pid)
        anon, file = max(anon, now_anon), max(file, now_file)
        reader.join(0.02)
    _, status, usage = os.wait4(proc.pid, 0)  # reaped here for its CPU time (and its children's)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {
        "seconds": time.perf_counter() - started,
        "cpu": usage.ru_utime + usage.ru_stime,
        "anon_mb": anon / 1024,
        "file_mb": file / 1024,
        "bytes": size[0],
        "rc": proc.returncode,
        "out": bytes(out),
    }


def assets_seconds(project: Path) -> tuple[float, int]:
    """One asset listing in a fresh process: (seconds, files listed)."""
    code = (
        "import json, sys, time\nfrom pathlib import Path\n"
        "from canon_ls.core.checking.assets import Assets\nfrom canon_ls.core.storage.layout import resolve\n"  # noqa: E501
        "p = Path(sys.argv[1]); root = resolve(p).root\n"
        "t = time.perf_counter(); a = Assets(p, root)\n"
        "print(json.dumps([time.perf_counter() - t, len(a.files())]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(project)], capture_output=True, text=True, check=True
    )
    seconds, files = json.loads(out.stdout)
    return seconds, files


def check_child(project: Path) -> dict[str, Any]:
    """The whole-store check child, cold (an empty XDG cache: no parse or history cache)."""
    with tempfile.TemporaryDirectory(prefix="bench-git-pass-") as cache:
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        run = sampled([sys.executable, "-c", CHECK_CHILD, str(project)], project, env, keep=True)
    figures = json.loads(run["out"].decode() or "{}")
    figures["wall"] = run["seconds"]
    figures["child_anon_mb"] = run["anon_mb"]
    figures["cpu"] = run["cpu"]
    return figures


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):7.2f} ({min(xs):.2f}-{max(xs):.2f})"


def slope(points: list[tuple[int, float]]) -> float:
    """Least-squares slope of log(seconds) on log(files)."""
    if len(points) < 2:
        return float("nan")
    xs = [math.log(f) for f, _ in points]
    ys = [math.log(s) for _, s in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


def table(results: list[dict[str, Any]], title: str, columns: list[str]) -> None:
    print(f"{title}\n{'files':>9} " + " ".join(f"{c:>22}" for c in columns))
    for row in results:
        print(f"{row['files']:>9,} " + " ".join(f"{spread(row[c]):>22}" for c in columns))
    fits = [slope([(r["files"], statistics.median(r[c])) for r in results]) for c in columns]
    print(f"{'slope':>9} " + " ".join(f"{f:>22.2f}" for f in fits))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repos", nargs="+", help="gen_repo.py --out directories (or projects)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--variants", default=DEFAULT_VARIANTS, help=f"log pass variants: {', '.join(VARIANTS)}"
    )
    ap.add_argument("--skip", default="", help="comma list of: log, assets, check")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    variants = [
        v for v in args.variants.split(",") if v in VARIANTS or (v[:-1].isdigit() and v[-1] == "m")
    ]
    results: list[dict[str, Any]] = []
    for arg in args.repos:
        project = generated_store(arg, __doc__ or "")
        if project is None:
            sys.exit(2)
        row: dict[str, Any] = {"repo": str(project), "chosen_argv": log_argv(project, "chosen")}
        seconds, files = assets_seconds(project)
        row["files"] = files
        print(f"{project}: {files:,} files", flush=True)
        for run in range(args.runs):  # interleaved, so load drifts hit every column alike
            if "log" not in skip:
                for v in variants:
                    r = sampled(log_argv(project, v), project, keep=v == "pass")
                    row.setdefault(v, []).append(r["seconds"])
                    row.setdefault(v + ":cpu", []).append(r["cpu"])
                    row.setdefault(v + ":anon_mb", []).append(r["anon_mb"])
                    row.setdefault(v + ":file_mb", []).append(r["file_mb"])
                    print(
                        f"  log {v:<14} {r['seconds']:6.2f} s  cpu {r['cpu']:6.2f} s  "
                        f"anon {r['anon_mb']:4.0f} MB  "
                        f"file {r['file_mb']:4.0f} MB  out {r['bytes'] / 1e6:.0f} MB",
                        flush=True,
                    )
            if "assets" not in skip:
                if run:
                    seconds, _ = assets_seconds(project)
                row.setdefault("assets", []).append(seconds)
                print(f"  assets {seconds:6.2f} s", flush=True)
            if "check" not in skip:
                c = check_child(project)
                row.setdefault("check", []).append(c.get("seconds", float("nan")))
                row.setdefault("check:git", []).append(c.get("git_seconds", float("nan")))
                row.setdefault("check:anon_mb", []).append(c["child_anon_mb"])
                row.setdefault("check:cpu", []).append(c["cpu"])
                print(
                    f"  check {c.get('seconds', float('nan')):6.2f} s (git "
                    f"{c.get('git_seconds', float('nan')):.2f} s, {c.get('findings')} findings, "
                    f"{c.get('stale')} stale, child anon {c['child_anon_mb']:.0f} MB, "
                    f"error {c.get('error')})",
                    flush=True,
                )
        results.append(row)
    logs = [v for v in variants if "log" not in skip]
    others = [c for c in ("assets", "check", "check:git") if c.split(":")[0] not in skip]
    print(f"\nmedian (min-max) over {args.runs} runs, and the slope of log(time) on log(files)")
    table(results, "wall seconds", [*logs, *others])
    table(
        results,
        "CPU seconds (user+sys)",
        [f"{c}:cpu" for c in logs + others if c in VARIANTS or c == "check"],
    )
    for row in results:
        mem = ", ".join(
            f"{v} {statistics.median(row[v + ':anon_mb']):.0f}+"
            f"{statistics.median(row[v + ':file_mb']):.0f} MB"
            for v in variants
            if v + ":anon_mb" in row
        )
        print(f"{row['files']:>9,} git anon+file: {mem}")
    write_figures(args.json, {"machine": machine(), "runs": args.runs, "results": results})


if __name__ == "__main__":
    main()
