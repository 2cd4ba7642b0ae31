"""Which hovers and inlay hints are slow in the start-up window, and when (issue 40):

    python benchmarks/probe_slow_hovers.py REPO STARTS OPENS

Each start: open a governed file, hover it, open OPENS more files, then hover and inlay in
turns until the start-up check's progress ends; prints every answer over 2.5 ms as
(ms from process start, method, ms).
"""

import sys
import tempfile
import time
from pathlib import Path

import bench_first_answers as f
import bench_lsp as b

repo = Path(sys.argv[1])
files = f.governed_files(repo, 6)
for run in range(int(sys.argv[2])):
    f.quiet()
    client, t0 = b.start_ours(repo, "vscode", Path(tempfile.mkdtemp()))
    uri = f.open_file(client, files[0])
    client.request("textDocument/hover", b.hover_params(uri))
    th = time.perf_counter()
    for p in files[1 : 1 + int(sys.argv[3])]:
        f.open_file(client, p)
    slow = []
    n = 0
    while not client.progress_end.is_set():
        for m, prm in (
            ("textDocument/hover", b.hover_params(uri)),
            ("textDocument/inlayHint", b.inlay_params(uri)),
        ):
            t = time.perf_counter()
            client.request(m, prm)
            d = (time.perf_counter() - t) * 1000
            n += 1
            if d > 2.5:
                slow.append((round((t - t0) * 1000), m[13:18], round(d, 1)))
    print(f"run {run}: first hover {(th - t0) * 1000:.0f} ms, n {n}, slow {slow}")
    f.close_all(client)
