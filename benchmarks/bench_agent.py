#!/usr/bin/env python3
"""The agent's path, one process per call, side by side with pi-canon 0.3.0 (issue 42).

    python benchmarks/gen_repo.py --out benchmarks/repos/m10k --files 100000 --articles 10000
    git clone https://github.com/shaneconner/pi-canon ../pi-canon   # 0.3.0: commit 03be254
    flock /tmp/canon-heavy.lock python benchmarks/bench_agent.py --repo benchmarks/repos/m10k \\
        --peer ../pi-canon --pairs 7

Times each action of the canon tool (`canon tool '{"action": …}'`: read, write, journal, map,
search) and the CLI's links, history and status, then each hook event (`canon hook
claude-code`: SessionStart, UserPromptSubmit, PostToolBatch of one Read, PostToolUse of a
Codex shell read, Stop), as whole processes (interpreter start included) on a generated
store. With `--peer` (a checkout of pi-canon 0.3.0, kept outside this repository) the same
calls run through pi-canon's own core and hook script under Node >= 22.18 (`--node`, default
`node` on PATH, else the Node the Pi tests install): one call of each tool per pair, the
order alternating, medians reported. pi-canon has no links, history or status; those rows
and the whole comparison are skipped when it is absent. Both tools write into the same
store (capsules, journal entries); the store is generated, so nothing of value changes.
`--mcp N`: then N reads of different articles through one `canon mcp` session after a
warm-up read (median and p99); `--only read,map`: time only those rows (the warm-up pair still
runs `canon status`, which measures every article's staleness evidence as an editor's or a
CI's check would). `--unmeasured evidence`: before each timed read of ours, the evidence cache
is deleted (the history cache stays), so each read measures its article's staleness as the first
read after a commit does; `--unmeasured history`: the history cache too (a first read after a
clone: no whole-history pass has run yet).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import canon_command, generated_store, machine, median, write_figures  # noqa: E402

PAYLOADS = HERE.parent / "tests" / "agent" / "payloads"
GOALS_MS = {"read": 150.0, "write": 200.0}  # at 10k articles, whole process (issue 42)
PEER_DRIVER = """
import { createRuntime } from %s;
import { runCanon } from %s;
const runtime = createRuntime(process.cwd());
process.stdout.write(runCanon(runtime, JSON.parse(process.argv[2])) + "\\n");
"""


def find_node(given: str | None) -> str | None:
    """A Node that runs pi-canon's TypeScript as is (type stripping: 22.18 or later)."""
    cache = Path(os.environ.get("CANON_NPM_CACHE", Path.home() / ".cache/canon-tests"))
    found = [given] if given else [shutil.which("node") or ""]
    found += [str(p) for p in cache.glob("pi-coding-agent-*/node_modules/node-*/bin/node")]
    for node in filter(None, found):
        done = subprocess.run([node, "--version"], capture_output=True, text=True)
        major, minor = (int(x) for x in done.stdout.strip().lstrip("v").split(".")[:2])
        if (major, minor) >= (22, 18):
            return node
    return None


def hook_payload(name: str, agent: str, project: Path, session: str) -> str:
    text = (PAYLOADS / agent / f"{name}.json").read_text("utf-8")
    text = text.replace("{project}", str(project)).replace("{session}", session)
    return text.replace("{home}", "/nonexistent-home")


def calls(repo: Path, rng: random.Random, i: int) -> list[tuple[str, list[str], str, str]]:
    """This pair's calls: (row, argv after `canon`, stdin, the peer's tool JSON or hook)."""
    articles = [
        p.relative_to(repo / ".canon/articles").as_posix()[:-3]
        for p in rng.sample(sorted((repo / ".canon/articles").glob("*/*.md")), 3)
    ]
    queries = json.loads((repo.parent / "queries.json").read_text("utf-8"))
    query = rng.choice([q["q"] for q in queries if q.get("lang") == "en"])
    one, two, three = articles
    tool = {
        "read": {"action": "read", "path": one},
        "write": {"action": "write", "path": two, "capsule": f"Rewritten in pair {i}."},
        "journal": {"action": "journal", "body": f"Pair {i} touched it.", "subject": [three]},
        "map": {"action": "map", "path": one.split("/")[0]},
        "search": {"action": "search", "query": query},
    }
    out = [(name, ["tool", json.dumps(a)], "", json.dumps(a)) for name, a in tool.items()]
    out += [("links", ["links", one], "", ""), ("history", ["history", one], "", "")]
    out.append(("status", ["status"], "", ""))
    session = f"bench-{i}"
    inside = (repo / one).glob("*") if (repo / one).is_dir() else iter(())
    target = str(next(inside, None) or next(repo.glob(f"{one}.*"), repo / one))
    events = {
        "SessionStart": ("claude-code", "session_start_startup", {}),
        "UserPromptSubmit": ("claude-code", "user_prompt_submit", {}),
        "PostToolBatch": ("claude-code", "post_tool_batch", {}),
        "PostToolUse (Codex)": ("codex", "post_tool_use_bash_read", {}),
        "Stop": ("claude-code", "stop", {}),
    }
    for name, (agent, payload, _) in events.items():
        data = json.loads(hook_payload(payload, agent, repo, session))
        if "tool_calls" in data:
            data["tool_calls"] = [{**data["tool_calls"][0], "tool_input": {"file_path": target}}]
        if data.get("tool_name") == "Bash":
            data["tool_input"] = {"command": f"cat {target}"}
        out.append((f"hook {name}", ["hook", agent], json.dumps(data), "hook"))
    return out


def run(argv: list[str], stdin: str, cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall ms, CPU ms): the CPU time (user + sys of the process and the git it waited
    for) does not depend on how many other processes compete for the cores."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, input=stdin.encode(), cwd=cwd, env=env, capture_output=True, check=False)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu * 1000


def mcp_reads(repo: Path, env: dict[str, str], count: int, settle: float) -> list[float]:
    """ms per read of `count` different articles through one `canon mcp` session (the official
    SDK's client over stdio), after a warm-up read: what a server that stays up answers."""
    import anyio
    from mcp import Client, StdioServerParameters

    argv = canon_command("--project", str(repo), "mcp")
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(repo))
    rng = random.Random(7)
    paths = rng.sample(sorted((repo / ".canon/articles").rglob("*.md")), count // 2 + 1)
    addresses = [p.relative_to(repo / ".canon/articles").as_posix()[:-3] for p in paths]
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True)
    files = [f for f in listed.stdout.decode("utf-8", "replace").split("\0") if f]
    addresses += rng.sample([f for f in files if not f.startswith(".canon/")], count - count // 2)

    async def session() -> list[float]:
        took = []
        async with Client(params) as client:
            for i, address in enumerate(addresses):
                if i == 1:  # the server walks the tree's ctimes once in the background
                    await anyio.sleep(settle)
                start = time.perf_counter()
                result = await client.call_tool("canon", {"action": "read", "path": address})
                took.append((time.perf_counter() - start) * 1000)
                assert not result.is_error, result
        for i in sorted(range(1, len(took)), key=took.__getitem__)[-3:]:
            print(f"slow mcp read: {addresses[i]} {took[i]:.1f} ms")
        return took[1:]

    return anyio.run(session)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", required=True, help="gen_repo.py --out directory")
    parser.add_argument("--peer", type=Path, help="a checkout of pi-canon 0.3.0 (outside)")
    parser.add_argument("--node", help="Node >= 22.18 for the peer (default: found)")
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument(
        "--mcp", type=int, metavar="N", help="also time N warm reads through one `canon mcp`"
    )
    parser.add_argument("--only", help="comma-separated rows to time (default: all)")
    parser.add_argument(
        "--settle", type=float, default=5.0, help="seconds between the first mcp read and the rest"
    )
    parser.add_argument(
        "--unmeasured",
        choices=["evidence", "history"],
        help="delete the evidence cache (history: and the history cache) before each read",
    )
    args = parser.parse_args(argv)
    repo = generated_store(args.repo, __doc__)
    if repo is None:
        return 2
    compileall.compile_dir(str(HERE.parent / "canon_ls"), quiet=1)
    scratch = Path(tempfile.mkdtemp(prefix="bench-agent-"))
    env = {**os.environ, "XDG_CACHE_HOME": str(scratch / "cache"), "PLUGIN_DATA": str(scratch)}
    env.update(XDG_STATE_HOME=str(scratch / "state"), XDG_CONFIG_HOME=str(scratch / "config"))
    env.pop("CANON_TRACE", None)
    peer: list[str] | None = None
    node = find_node(args.node) if args.peer else None
    if args.peer and node and (args.peer / "plugins/pi-canon/core/tool.ts").is_file():
        root = args.peer.resolve() / "plugins/pi-canon"
        driver = scratch / "peer.mjs"
        driver.write_text(
            PEER_DRIVER
            % (
                json.dumps(str(root / "scripts/runtime.mjs")),
                json.dumps(str(root / "core/tool.ts")),
            )
        )
        peer = [node, "--no-warnings", str(driver)]
        hook = [node, "--no-warnings", str(root / "scripts/pi-canon-hook.mjs")]
    elif args.peer:
        print(f"peer skipped: no pi-canon core under {args.peer} or no Node >= 22.18")
    else:
        print("peer skipped: give --peer DIR (a pi-canon 0.3.0 checkout) to compare")
    rng = random.Random(42)
    ours: dict[str, list[tuple[float, float]]] = {}
    theirs: dict[str, list[tuple[float, float]]] = {}
    for i in range(args.pairs + 1):  # pair 0 warms both (parse caches, journal index)
        for row, sub, stdin, peer_call in calls(repo, rng, i):
            if args.only and row not in args.only.split(",") and not (i == 0 and row == "status"):
                continue  # pair 0's status still runs: it fills the evidence cache reads use
            jobs = [(ours, [*canon_command(*sub)], stdin)]
            if peer is not None and peer_call:
                peer_argv = hook if peer_call == "hook" else [*peer, peer_call]
                jobs.append((theirs, peer_argv, stdin))
            for table, cmd, data in jobs if i % 2 else jobs[::-1]:
                if args.unmeasured and i and row == "read" and table is ours:
                    kinds = ("evidence-", "changes-")[: 1 + (args.unmeasured == "history")]
                    for old in (scratch / "cache/canon-ls").glob("*.bin"):
                        if old.name.startswith(kinds):
                            old.unlink()
                took = run(cmd, data, repo, env)
                if i:
                    table.setdefault(row, []).append(took)
    figures: dict[str, Any] = {"machine": machine(), "repo": str(repo), "pairs": args.pairs}
    print(f"median of {args.pairs} pairs, wall / CPU ms; ratio = canon-ls / pi-canon (wall)")
    print(f"{'call (one process each)':26} {'canon-ls':>13} {'pi-canon':>13} {'ratio':>6}")
    for row, took in ours.items():
        a = [median([t[k] for t in took]) for k in (0, 1)]
        b = [median([t[k] for t in theirs[row]]) for k in (0, 1)] if row in theirs else None
        goal = f"  (goal <= {GOALS_MS[row]:.0f})" if row in GOALS_MS else ""
        peer_text = f"{b[0]:6.0f} /{b[1]:5.0f} {a[0] / b[0]:6.2f}" if b else f"{'-':>13} {'':>6}"
        print(f"{row:26} {a[0]:6.0f} /{a[1]:5.0f} {peer_text}{goal}")
        figures[row] = {"canon_ls_ms": a, "pi_canon_ms": b}
    if args.mcp:
        took = sorted(mcp_reads(repo, env, args.mcp, args.settle))
        p99 = took[min(len(took) - 1, round(0.99 * (len(took) - 1)))]
        print(f"canon mcp, {len(took)} warm reads: median {median(took):.1f} ms, p99 {p99:.1f} ms")
        figures["mcp_read"] = {"median_ms": median(took), "p99_ms": p99, "reads": len(took)}
    shutil.rmtree(scratch, ignore_errors=True)
    write_figures(args.json, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
