"""Small helpers shared by the benchmark scripts: percentiles, memory, timing, machine facts."""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPOS = os.path.join(HERE, "repos")


def pct(values: Sequence[float], p: float) -> float:
    """The p-th percentile (linear interpolation), NaN for no values."""
    xs = sorted(values)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, Any]:
    """(seconds, result) of one call."""
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


def rss_mb() -> float:
    """Current resident set size in MB (Linux /proc), else the peak from getrusage."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return peak_rss_mb()


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024.0 * 1024.0) if sys.platform == "darwin" else peak / 1024.0


def rss_parts(pid: int) -> tuple[int, int]:
    """A process's resident anonymous and file-backed kB now ((0, 0) once it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        anon, file = (int(fields.get(k, "0 kB").split()[0]) for k in ("RssAnon", "RssFile"))
        return anon, file
    except (OSError, ValueError):
        return 0, 0


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        git = "no git"
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "git": git,
        "load_avg_1m": round(load[0], 2),
    }


def generated_store(arg: str, doc: str) -> Path | None:
    """The project a benchmark reads: `arg` is gen_repo.py's --out directory (or the project
    itself). None, after printing how to generate one (line 3 of `doc`), when it has no store."""
    repo = Path(arg).resolve()
    repo = repo / "repo" if (repo / "repo" / ".canon").is_dir() else repo
    if not (repo / ".canon" / "articles").is_dir():
        print(f"No store at {repo}; generate one first:\n  {doc.splitlines()[2].strip()}")
        return None
    return repo


def canon_command(*sub: str) -> list[str]:
    """`canon SUB...`: the console script next to this interpreter, else the module."""
    canon = Path(sys.executable).parent / "canon"
    return (
        [str(canon), *sub] if canon.exists() else [sys.executable, "-m", "canon_ls.agent.cli", *sub]
    )


def write_figures(path: str | None, figures: dict[str, Any]) -> None:
    """Write the figures as JSON to `path` (the --json option), when one was given."""
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(figures, indent=2) + "\n")
