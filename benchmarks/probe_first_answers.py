#!/usr/bin/env python3
"""The editor's first answers on a generated store (issue 40), from process start:

    python benchmarks/probe_first_answers.py --repo benchmarks/repos/m10k/repo [--rounds 3]

- references: a start, one symbol query, the "indexing" progress to its end, then three
  `textDocument/references` on the most-linked article (first, then warm);
- body word: a start, a hover on a governed file, then a `workspace/symbol` query for a word
  that only article bodies hold (not addresses, titles, capsules or tags), timed from start.
One canon-ls process per round; run it under one machine lock (nothing else running).
"""

from __future__ import annotations

import argparse
import collections
import re
import tempfile
import time
from pathlib import Path

import bench_lsp as b

from canon_ls.core.storage.store import Store


def body_only_word(repo: Path) -> str:
    store = Store(repo)
    heads: set[str] = set()
    bodies: collections.Counter[str] = collections.Counter()
    for address in store.addresses():
        article = store.article(address)
        if article is None:
            continue
        head = f"{address} {article.title} {article.capsule} {' '.join(article.tags)}"
        heads |= set(re.findall(r"[a-z]{5,}", head.lower()))
        bodies.update(set(re.findall(r"[a-z]{5,}", article.body.lower())))
    return next(w for w, _ in bodies.most_common() if w not in heads)


def references(repo: Path) -> list[float]:
    target = b.most_linked(repo)
    client, _ = b.start_ours(repo, "vscode", Path(tempfile.mkdtemp(prefix="canon-probe-")))
    try:
        client.request("workspace/symbol", {"query": "config"})
        client.indexing.wait(timeout=10)
        if client.indexing.is_set():
            client.indexed.wait(timeout=1800)
        params = {
            "textDocument": {"uri": target.as_uri()},
            "position": {"line": 0, "character": 0},
            "context": {"includeDeclaration": False},
        }
        out = []
        for _ in range(3):
            t = time.perf_counter()
            client.request("textDocument/references", params)
            out.append((time.perf_counter() - t) * 1000)
        return out
    finally:
        client.close()


def body_word(repo: Path, word: str) -> tuple[float, int]:
    client, t0 = b.start_ours(repo, "vscode", Path(tempfile.mkdtemp(prefix="canon-probe-")))
    try:
        rel, _ = b.pick_governed_file(repo)
        client.request("textDocument/hover", b.hover_params((repo / rel).as_uri()))
        hits = client.request("workspace/symbol", {"query": word})
        return (time.perf_counter() - t0) * 1000, len(hits or [])
    finally:
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    word = body_only_word(args.repo)
    for n in range(args.rounds):
        refs = ", ".join(f"{ms:.1f}" for ms in references(args.repo))
        ms, hits = body_word(args.repo, word)
        print(f"round {n + 1}: references ms (first, warm, warm) {refs}; ", end="")
        print(f"body word {word!r} answered {ms:.0f} ms from start ({hits} symbols)")


if __name__ == "__main__":
    main()
