#!/usr/bin/env python3
"""What each git process a canon process starts costs: a `git` put first on PATH.

    eval "$(python benchmarks/git_spy.py --install DIR)"   # PATH=DIR/bin:...; log in DIR
    ... run canon check, the language server, bench_lsp.py ...
    python benchmarks/git_spy.py --report DIR

The spy runs the real git as its child and records, per git process: its arguments (the `-c`
pairs left out), who started it (the parent's command line), start and end (monotonic), wall
seconds, peak RSS (`ru_maxrss` from wait4: the kernel's high-water mark), and the largest
anonymous and file-backed parts of its resident set (RssAnon, RssFile, sampled every 10 ms:
file-backed pages are git's mapped pack and index, which count in RSS but can be dropped), and
how many spied git processes ran at its start (itself included; each adds a marker file while
it runs). The spy itself (a Python, ~10 MB) is not in those figures.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from common import rss_parts


def spy(log_dir: Path, real: str, args: list[str]) -> int:
    live = log_dir / "live"
    marker = live / str(os.getpid())
    marker.touch()
    at_once = len(os.listdir(live))
    started = time.monotonic()
    try:
        parent = Path(f"/proc/{os.getppid()}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        parent = "?"
    proc = subprocess.Popen([real, *args])
    anon = file = 0
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        now_anon, now_file = rss_parts(proc.pid)
        anon, file = max(anon, now_anon), max(file, now_file)
        time.sleep(0.01)
    ended = time.monotonic()
    marker.unlink()
    shown, skip = [], False
    for a in args:  # the -c pairs are the guards gitrun adds: left out of the name
        if skip:
            skip = False
        elif a == "-c":
            skip = True
        elif a != "--no-pager":
            shown.append(a)
    record = {
        "args": shown,
        "configs": [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-c"],
        "parent": parent[:200],
        "start": started,
        "end": ended,
        "seconds": ended - started,
        "peak_mb": usage.ru_maxrss / 1024,
        "anon_mb": anon / 1024,
        "file_mb": file / 1024,
        "at_once": at_once,
        "rc": os.waitstatus_to_exitcode(status),
    }
    with open(log_dir / "log.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
    return int(record["rc"])


def install(log_dir: Path) -> str:
    """Write DIR/bin/git (this spy, for the git found on PATH now); the shell line to use it."""
    real = shutil.which("git")
    assert real, "no git on PATH"
    (log_dir / "bin").mkdir(parents=True, exist_ok=True)
    (log_dir / "live").mkdir(exist_ok=True)
    script = log_dir / "bin" / "git"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        f"from git_spy import spy\nfrom pathlib import Path\n"
        f"sys.exit(spy(Path({str(log_dir)!r}), {real!r}, sys.argv[1:]))\n"
    )
    script.chmod(0o755)
    return f"export PATH={log_dir / 'bin'}:$PATH"


def records(log_dir: Path) -> list[dict]:
    path = log_dir / "log.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def name(record: dict) -> str:
    """A short name of the command: the subcommand and its options, not its revisions/paths."""
    args = record["args"]
    keep = [a for a in args if a.startswith("-") and not a.startswith("--format")][:6]
    sub = next((a for a in args if not a.startswith("-")), "?")
    return " ".join([sub, *keep])


def report(log_dir: Path) -> str:
    rows = records(log_dir)
    lines = [f"{'git command':<70} {'peak':>6} {'anon':>6} {'file':>6} {'secs':>6} {'at once':>7}"]
    for r in sorted(rows, key=lambda r: r["start"]):
        lines.append(
            f"{name(r)[:70]:<70} {r['peak_mb']:6.0f} {r['anon_mb']:6.0f} {r['file_mb']:6.0f} "
            f"{r['seconds']:6.2f} {r['at_once']:7d}"
        )
    if rows:
        lines.append(
            f"{len(rows)} git processes; at most {max(r['at_once'] for r in rows)} at once; "
            f"largest peak {max(r['peak_mb'] for r in rows):.0f} MB"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1] == "--install":
        print(install(Path(sys.argv[2]).resolve()))
    elif sys.argv[1] == "--report":
        print(report(Path(sys.argv[2])))
