"""Whether two versions of canon-ls give the same whole-store pass (the check child's Snapshot).

    python benchmarks/snapshot_diff.py dump REPO OUT.pickle   # with PYTHONPATH of one version
    python benchmarks/snapshot_diff.py same A.pickle B.pickle  # exit 1 when they differ

`dump` runs the check child's pass (`canon_ls.lsp.helpers.background.compute`, staleness on) in REPO
with the XDG cache the caller chose and pickles what the server receives (findings, stale,
evidence, newest, moves, dirs). `same` compares two dumps field by field and prints the first
differences. A performance change to the pass must leave its output byte-identical.
"""

from __future__ import annotations

import os
import pickle
import sys
import time
from pathlib import Path

FIELDS = ("findings", "stale", "evidence", "newest", "moves", "dirs")


def dump(repo: str, out: str) -> None:
    from canon_ls.lsp.helpers.background import compute

    started = time.perf_counter()
    snap = compute(Path(repo), {}, True)
    seconds = time.perf_counter() - started
    cpu = os.times()
    data = {name: getattr(snap, name) for name in FIELDS}
    with open(out, "wb") as f:
        pickle.dump(data, f, protocol=pickle.HIGHEST_PROTOCOL)
    print(
        f"{out}: {seconds:.2f} s wall, {cpu.user + cpu.system:.2f} s CPU own, "
        f"{len(snap.findings)} findings, {len(snap.stale)} stale, {len(snap.newest)} newest, "
        f"{len(snap.moves)} moves, {len(snap.dirs)} dirs"
    )


def same(a: str, b: str) -> bool:
    with open(a, "rb") as f:
        left = pickle.load(f)
    with open(b, "rb") as f:
        right = pickle.load(f)
    ok = True
    for name in FIELDS:
        x, y = left[name], right[name]
        if pickle.dumps(x, protocol=4) == pickle.dumps(y, protocol=4):
            print(f"{name}: identical ({len(x)})")
            continue
        ok = False
        print(f"{name}: DIFFERENT ({len(x)} vs {len(y)})")
        if isinstance(x, dict):
            keys = sorted(set(x) | set(y))
            bad = [k for k in keys if x.get(k) != y.get(k)]
            for k in bad[:5]:
                print(f"  {k!r}: {x.get(k)!r} vs {y.get(k)!r}")
            if not bad:
                print("  same items; order or representation differs")
        else:
            for i, (p, q) in enumerate(zip(x, y, strict=False)):
                if p != q:
                    print(f"  [{i}] {p!r} vs {q!r}")
                    break
    return ok


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "dump":
        dump(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "same":
        sys.exit(0 if same(sys.argv[2], sys.argv[3]) else 1)
    else:
        sys.exit(__doc__)
