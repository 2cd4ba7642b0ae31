#!/usr/bin/env python3
"""What canon puts in an agent's context, against a memory file that loads the whole map.

    python benchmarks/gen_repo.py --out benchmarks/repos/m10k --files 100000 --articles 10000
    python benchmarks/bench_context.py --repo benchmarks/repos/m10k

A scripted Claude Code session goes through the real hook entry (`canon hook claude-code`, one
process per event, JSON on stdin, as the agent runs it): session start, then 10 user prompts,
each followed by 5 tool calls (reads, edits, shell commands, a search) over a working set of
about 30 files in a few neighbouring directories, and the stop check that ends each turn. Every
character of every reply (additional context and stop reasons) is counted: that is what canon
put in the agent's context. The alternative is a CLAUDE.md-style memory file holding the whole
store, which the agent loads into every session: the text of `canon map` (one line per
article). The ratio of the two is printed; `canon stats` over the same session state must give
the same total. Nothing is written into the repository (state and caches go to a temp dir).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_hooks import load, tracked_files  # noqa: E402
from common import canon_command, generated_store, machine, write_figures  # noqa: E402

PROMPTS = [
    "Why does the export retry twice before giving up?",
    "Add pagination to the report endpoint and keep the old behaviour as default.",
    "The cache eviction test is flaky; find out why.",
    "Rename the session token field, callers included.",
    "Where is the tenant configured, and who reads it?",
    "Make the scheduler skip disabled jobs.",
    "Explain the ledger reconciliation in two sentences.",
    "Fix the rounding of invoice totals in the billing module.",
    "Add a metric for queue depth.",
    "Summarise what changed in this session.",
]


def working_set(files: list[str], rng: random.Random, size: int = 30) -> list[str]:
    """About `size` files from a few neighbouring directories (how a task really spreads)."""
    by_dir: dict[str, list[str]] = {}
    for f in files:
        by_dir.setdefault(os.path.dirname(f), []).append(f)
    dirs = sorted(d for d, fs in by_dir.items() if len(fs) >= 3)
    chosen: list[str] = []
    while len(chosen) < size and dirs:
        folder = rng.choice(dirs)
        dirs.remove(folder)
        for f in sorted(by_dir[folder])[: rng.randint(2, 4)]:
            if len(chosen) < size:
                chosen.append(f)
    return chosen


def script(
    repo: Path, files: list[str], rng: random.Random, touched: set[str]
) -> list[tuple[str, dict[str, Any]]]:
    """The session's events in order: (label, payload); the files they name go to `touched`."""
    session = "bench-context"
    out: list[tuple[str, dict[str, Any]]] = [
        ("start", load("claude-code", "session_start_startup", repo, session))
    ]
    for turn, prompt in enumerate(PROMPTS):
        ask = load("claude-code", "user_prompt_submit", repo, session)
        ask["prompt"] = prompt
        out.append(("prompt", ask))
        for k in range(5):
            a, b = rng.choice(files), rng.choice(files)
            kind = (turn + k) % 5
            touched.update((a, b) if kind == 3 else (a,))
            if kind in (0, 1):
                data = load("claude-code", "post_tool_use_read", repo, session)
                data["tool_input"] = {"file_path": str(repo / a)}
            elif kind == 2:
                data = load("claude-code", "post_tool_use_edit", repo, session)
                data["tool_input"]["file_path"] = str(repo / a)
            elif kind == 3:
                data = load("claude-code", "post_tool_use_bash", repo, session)
                data["tool_input"] = {"command": f"grep -n TODO {a} {b}"}
            else:
                data = load("claude-code", "post_tool_use_read", repo, session)
                data["tool_name"] = "Grep"
                data["tool_input"] = {"pattern": "def ", "path": str(repo / os.path.dirname(a))}
            out.append(("tool", data))
        out.append(("stop", load("claude-code", "stop", repo, session)))
    return out


def said(reply: bytes) -> str:
    """The text a hook reply puts in the agent's context ('' for none)."""
    if not reply.strip():
        return ""
    data = json.loads(reply)
    if "reason" in data:
        return str(data["reason"])
    return str(data.get("hookSpecificOutput", {}).get("additionalContext", ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=str(HERE / "repos" / "m10k"), help="gen_repo.py --out dir")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--retrieval", choices=("none", "lexical"), default="none")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()

    repo = generated_store(args.repo, __doc__)
    if repo is None:
        return 2
    command = canon_command()
    rng = random.Random(args.seed)
    files = working_set(tracked_files(repo), rng)
    touched: set[str] = set()
    events = script(repo, files, rng, touched)

    with tempfile.TemporaryDirectory() as tmp:
        skip = ("CANON_", "CLAUDE_")
        env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
        env.update(XDG_STATE_HOME=f"{tmp}/state", XDG_CACHE_HOME=f"{tmp}/cache")
        env.update(XDG_CONFIG_HOME=f"{tmp}/config")
        settings = Path(tmp, "config", "canon", "settings.json")
        settings.parent.mkdir(parents=True)
        settings.write_text(json.dumps({"retrieval": args.retrieval}))
        canon_chars = 0
        per_kind: dict[str, int] = {}
        replies = 0
        for label, data in events:
            done = subprocess.run(
                [*command, "hook", "claude-code"], input=json.dumps(data).encode(),
                capture_output=True, env=env, check=False,
            )  # fmt: skip
            if done.returncode != 0:
                raise SystemExit(f"hook failed: {done.stderr.decode()[-500:]}")
            text = said(done.stdout)
            canon_chars += len(text)
            replies += bool(text)
            per_kind[label] = per_kind.get(label, 0) + len(text)
        stats = subprocess.run(
            [*command, "stats", "--format", "json"], cwd=repo, env=env, capture_output=True,
            check=True,
        )  # fmt: skip
        counted = json.loads(stats.stdout)["totals"]
        mapped = subprocess.run(
            [*command, "map"], cwd=repo, env=env, capture_output=True, check=True
        ).stdout.decode("utf-8")

    map_chars = len(mapped)
    articles = sum(1 for line in mapped.splitlines() if line.strip())
    calls = sum(1 for label, _ in events if label == "tool")
    ratio = map_chars / canon_chars if canon_chars else float("inf")
    figures = {
        "machine": machine(),
        "repo": str(repo),
        "retrieval": args.retrieval,
        "prompts": len(PROMPTS),
        "tool_calls": calls,
        "files_touched": len(touched),
        "canon_chars": canon_chars,
        "canon_replies": replies,
        "canon_chars_by_event": per_kind,
        "stats_chars": counted["chars"],
        "articles_by_address": counted["spine"],
        "articles_by_rank": counted["rank"],
        "map_chars": map_chars,
        "map_lines": articles,
        "ratio": ratio,
    }
    print(
        f"scripted session: {len(PROMPTS)} prompts, {calls} tool calls over "
        f"{len(touched)} files, retrieval {args.retrieval}"
    )
    print(
        f"  canon put {canon_chars:,} characters in the context ({replies} replies; "
        f"{counted['spine']} articles by address, {counted['rank']} by rank)"
    )
    print(f"  the whole map as a memory file: {map_chars:,} characters ({articles:,} lines)")
    print(f"  ratio: the memory file costs {ratio:,.0f}x what canon delivered")
    if counted["chars"] != canon_chars:
        print(f"  MISMATCH: canon stats counted {counted['chars']:,} characters")
        return 1
    write_figures(args.json, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
