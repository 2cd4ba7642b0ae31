"""`bench_memory.py --tree` with a timeline: each sample's RSS per role and each git command running
(issue 40 item 3: at which moment of a cold start the tree peaks, and what runs then).

    flock -x /tmp/canon-heavy.lock python benchmarks/memory_timeline.py --repo R --every 0.5
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import bench_memory  # noqa: E402
import memory  # noqa: E402

ROWS: list[tuple[float, float, dict[str, float], list[str]]] = []
_T0 = time.perf_counter()
_sample = memory.TreeMemory.sample


def _git_name(cmd: str) -> str:
    """The subcommand and its first plain argument (`log`, `ls-files`, `status .`)."""
    words = [w for w in cmd.split()[1:] if not w.startswith("-") and "=" not in w]
    return " ".join(words[:1])


def sample(self: memory.TreeMemory, root: Any) -> None:
    _sample(self, root)
    try:
        tree = [root, *root.children(recursive=True)]
    except memory.psutil.Error:
        return
    now: dict[str, float] = {}
    gits: list[str] = []
    for proc in tree:
        try:
            cmd = " ".join(proc.cmdline())
            if not cmd:
                continue
            role = memory.role_of(proc, self.pid, cmd)
            rss = memory._status(proc.pid)[1]
        except (memory.psutil.Error, OSError):
            continue
        if role == "git":
            gits.append(f"{_git_name(cmd)} {rss:.0f}")
        now[role] = now.get(role, 0.0) + rss
    ROWS.append((time.perf_counter() - _T0, sum(now.values()), now, gits))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--every", type=float, default=0.5, help="seconds between printed rows")
    parser.add_argument("--warm", action="store_true", help="a second start (bench_memory --warm)")
    args = parser.parse_args()
    memory.TreeMemory.sample = sample  # type: ignore[method-assign]
    figures = bench_memory.tree(args.repo.resolve(), None, args.warm)
    last = -args.every
    for t, total, now, gits in ROWS:
        if t - last >= args.every or total >= figures["peak_total_mb"] - 0.5:
            roles = ", ".join(f"{r} {mb:.0f}" for r, mb in now.items())
            print(f"{t:6.1f} s {total:5.0f} MB  [{roles}]  git: {'; '.join(gits) or '-'}")
            last = t


if __name__ == "__main__":
    main()
