#!/usr/bin/env python3
"""What the retrieval lane delivers, and what it spends the agent's context on, over a fixed
corpus and scripted sessions replayed through the real hook entry.

    python benchmarks/bench_lane.py --base 72ea8f0

Two stores are generated deterministically into a temporary directory: a small one (about ten
articles) and a large one (about three hundred): `scope: rule` articles, off-spine notes (most
of them filler that shares only function words with any prompt, some mentioning a topic word
once: the drained tail) and articles that govern files (never ranked). Each scripted session
(topic changes, function-word prompts, long pasted logs, a drained topic asked again,
prompts nothing in the store is about, Chinese) runs as `UserPromptSubmit` events through
`python -m canon_ls.agent.hooks claude-code` with `retrieval = "lexical"`, once with this
checkout's `canon_ls/` and once with the `--base` revision's (extracted with git archive, as
compare.py does), each with its own state and cache directories.

Figures per store and tree:
- deliveries: ranked articles delivered (all sessions);
- decisive recall: prompts whose decisive article was delivered in that prompt's reply or
  earlier in the same session (it is still in the context);
- junk: delivered articles sharing no content word with the prompt they answered (content
  words by this script's own rule, the same for both trees: runs of three or more letters or
  digits outside a list of English function words, and CJK bigrams);
- extra: delivered articles other than the prompt's decisive one;
- silent: sessions made only of prompts nothing in the store is about (no content word in
  common with any article: the script warns when a fixture breaks that) that delivered nothing.
Nothing is asserted; the goal is 0 junk, every silent session silent, every decisive article
delivered.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from compare import extract  # noqa: E402

HEADER = "canon project memory ranked for this task (no file you touched leads to these):"
FUNCTION_WORDS = frozenset({
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are",
    "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
    "by", "can", "cannot", "could", "did", "do", "does", "doing", "down", "during", "each", "few",
    "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him",
    "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more",
    "most", "my", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other",
    "our", "ours", "out", "over", "own", "please", "same", "she", "should", "so", "some", "such",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when",
    "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your",
    "yours", "also", "let", "lets", "get", "got", "make", "made", "use", "used",
})  # fmt: skip
_CJK_RUN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]+")

# Rules: (address, capsule, body). The decisive articles of the sessions.
RULES = [
    ("conventions/money-rounding", "Round money half-even to cents, only at the final step.",
     "Money rounding: round the invoice total once; never round intermediate sums."),
    ("conventions/logging", "Log as structured JSON lines through the logger; never print.",
     "Logging: replace print calls with structured JSON logs."),
    ("conventions/retries", "Retry idempotent HTTP calls with exponential backoff, five tries.",
     "Retries: exponential backoff with jitter for the HTTP client; never retry a POST."),
    ("conventions/timezones", "Store timestamps in UTC; convert to local time only for display.",
     "Timezones: timestamps are UTC everywhere; daylight saving shifts happen at display."),
    ("conventions/pagination", "List endpoints paginate with opaque cursors, page size fifty.",
     "Pagination: cursors are opaque; the default page size of list endpoints is fifty."),
    ("conventions/jine", "金额在最后一步四舍五入到分。", "金额四舍五入：只在发票总额上做一次。"),
    ("conventions/secrets", "Secrets come from the vault at startup; never commit credentials.",
     "Secrets: credentials and tokens are read from the vault; never in the repository."),
    ("conventions/migrations", "Database migrations are additive; drop columns a release later.",
     "Migrations: add columns first, backfill, and drop old columns one release later."),
]  # fmt: skip
SMALL_RULES = 5  # the small store's rules: the first five, plus the Chinese one
TOPIC_WORDS = ["rounding", "logging", "backoff", "timestamps", "cursors", "credentials"]


@dataclass
class Prompt:
    text: str
    decisive: str | None = None  # the article this prompt calls for (None: nothing in the store)
    calls: tuple[tuple[str, dict[str, str]], ...] = ()  # tool calls made after it (PostToolUse)


@dataclass
class Session:
    name: str
    prompts: list[Prompt]
    silent: bool = False  # nothing in the store is about any of its prompts


def pasted_log(rng: random.Random, lines: int, ask: str) -> str:
    """A long pasted log (about nothing in the store) with the user's question at the end."""
    kinds = ["kernel compile", "shader cache", "vertex buffer", "texture upload", "frame graph"]
    out = [
        f"[{10 + n // 60:02d}:{n % 60:02d}:{rng.randrange(60):02d}] INFO {rng.choice(kinds)} "
        f"#{rng.randrange(10**6):06x} took {rng.randrange(900)} us on the worker"
        for n in range(lines)
    ]
    return "\n".join([*out, ask])


def sessions(rng: random.Random, small: bool) -> list[Session]:
    out = [
        Session("topic changes", [
            Prompt("How should the invoice total handle money rounding?",
                   "conventions/money-rounding"),
            Prompt("Now replace every print call with structured JSON logs",
                   "conventions/logging"),
            Prompt("Add retries with exponential backoff to the HTTP client.",
                   "conventions/retries"),
        ]),
        Session("function words", [
            Prompt("Can you do it with a test at the end of the file?"),
            Prompt("What about that, and which of these should we do before then?"),
            Prompt("Ok, do it again, but only for the ones that are over there."),
        ], silent=True),
        Session("pasted log, ask at the end", [
            Prompt(pasted_log(rng, 80, "Why are the timestamps in this log off by an hour after "
                              "the daylight saving change?"), "conventions/timezones"),
        ]),
        Session("pasted log, nothing relevant", [
            Prompt(pasted_log(rng, 80, "Can you look at this and tell me what is slow?")),
        ], silent=True),
        Session("drained topic, then a new one", [
            Prompt("How do list endpoints paginate?", "conventions/pagination"),
            Prompt("And the page size for list endpoints with cursors, again?"),
            Prompt("Which pagination cursors do list endpoints use, once more?"),
            Prompt("Where do the HTTP client retries with backoff happen?", "conventions/retries"),
        ]),
        Session("nothing relevant", [
            Prompt("Please rename the variable zeta to omega in the parser."),
            Prompt("Bump the version number to 2.4.1 and push the tag."),
        ], silent=True),
        Session("Chinese", [Prompt("金额怎么四舍五入？", "conventions/jine")]),
        Session("tool calls, the words elsewhere", [
            Prompt("Rename zeta to omega in the parser.", calls=(
                ("Read", {"file_path": "src/mod00.py"}),
                ("Grep", {"pattern": "zeta", "path": "src"}),
            )),
        ], silent=True),
        Session("new topic after a drained one", [
            Prompt("How should the invoice total handle money rounding?",
                   "conventions/money-rounding"),
            Prompt("And money rounding for refunds of the invoice total, too?"),
            Prompt("Now replace every print call with structured JSON logs",
                   "conventions/logging"),
        ]),
    ]  # fmt: skip
    if not small:
        out.append(
            Session(
                "secrets and migrations",
                [
                    Prompt(
                        "Where do the database credentials come from at startup?",
                        "conventions/secrets",
                    ),
                    Prompt(
                        "Write the migration that drops the legacy columns.",
                        "conventions/migrations",
                    ),
                ],
            )  # fmt: skip
        )
    return out


def pseudo_words(rng: random.Random, n: int) -> list[str]:
    """Made-up words: filler no prompt names."""
    syllables = ["ka", "lo", "mir", "ven", "tus", "dra", "pel", "qui", "sor", "nax", "bel", "ty"]
    return ["".join(rng.choice(syllables) for _ in range(rng.randrange(2, 4))) for _ in range(n)]


def article(root: Path, address: str, capsule: str, body: str, scope: str = "") -> None:
    path = root / ".canon" / "articles" / f"{address}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    front = f"capsule: {json.dumps(capsule, ensure_ascii=False)}\n"
    front += f"scope: {scope}\n" if scope else ""
    path.write_text(f"---\n{front}updated: 2026-01-01\n---\n# {address}\n{body}\n", "utf-8")


def build_store(root: Path, small: bool, seed: int) -> int:
    """The store and its project files; returns the number of articles."""
    rng = random.Random(seed)
    (root / ".canon" / "journal").mkdir(parents=True)
    (root / "canon.toml").write_text('retrieval = "lexical"\n', "utf-8")
    rules = RULES[:SMALL_RULES] + [RULES[5]] if small else RULES
    for address, capsule, body in rules:
        article(root, address, capsule, body, scope="rule")
    article(root, "notes/reading", "How we read large inputs: in chunks.", "Read in chunks.")
    notes, assets, tail = (3, 3, 1) if small else (200, 90, 20)
    vocab = pseudo_words(rng, 400)
    glue = ["the", "with", "at", "of", "a", "to", "and", "it", "in", "for", "about", "that"]
    for n in range(notes):
        words = [rng.choice(vocab if rng.random() < 0.6 else glue) for _ in range(40)]
        if n < tail:  # the drained tail: one topic word among the filler
            words[rng.randrange(len(words))] = TOPIC_WORDS[n % len(TOPIC_WORDS)]
        title = " ".join(rng.choice(vocab) for _ in range(4))
        name = "".join(chr(97 + (n // 26**k) % 26) for k in (2, 1, 0))  # no digits to share
        article(root, f"notes/note-{name}", f"Note about {title}.", " ".join(words) + ".")
    for n in range(assets):
        (root / "src").mkdir(exist_ok=True)
        (root / "src" / f"mod{n:02d}.py").write_text("x = 1\n", "utf-8")
        words = " ".join(rng.choice(vocab) for _ in range(8))
        topic = TOPIC_WORDS[n % len(TOPIC_WORDS)]
        article(root, f"src/mod{n:02d}", f"Module {n}: {words}; {topic} here.", f"{topic} {words}")
    return len(rules) + 1 + notes + assets


def content_words(text: str) -> set[str]:
    words = {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 3}
    bigrams = {run[i : i + 2] for run in _CJK_RUN.findall(text) for i in range(len(run) - 1)}
    return (words - FUNCTION_WORDS) | bigrams


@dataclass
class Figures:
    deliveries: int = 0
    decisive: int = 0
    decisive_hit: int = 0
    junk: list[str] = field(default_factory=list)
    extra: int = 0
    silent_sessions: int = 0
    silent_hit: int = 0
    log: list[str] = field(default_factory=list)  # every prompt's deliveries


def ranked(event: dict[str, object], env: dict[str, str], project: Path) -> list[str]:
    """The addresses the lane delivered in the reply to one hook event."""
    done = subprocess.run(
        [sys.executable, "-m", "canon_ls.agent.hooks", "claude-code"],
        input=json.dumps(event), capture_output=True, text=True, env=env, cwd=project,
        timeout=120,
    )  # fmt: skip
    reply = json.loads(done.stdout) if done.stdout.strip() else {}
    lines = reply.get("hookSpecificOutput", {}).get("additionalContext", "").split("\n")
    after = lines[lines.index(HEADER) + 1 :] if HEADER in lines else []
    return [line[2:].split(":", 1)[0] for line in after if line.startswith("- ")]


def replay(tree: Path, project: Path, work: Path, plan: list[Session]) -> Figures:
    """Every session through `canon hook claude-code` of `tree`; the figures."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CANON_", "CLAUDE_"))}
    env["PYTHONPATH"] = str(tree)  # this tree's canon_ls first
    for key, sub in (("STATE", "state"), ("CACHE", "cache"), ("CONFIG", "config")):
        env[f"XDG_{key}_HOME"] = str(work / sub)
    by_address = {
        str(p.relative_to(project / ".canon/articles").with_suffix("")): p.read_text("utf-8")
        for p in (project / ".canon/articles").rglob("*.md")
    }
    figures = Figures()
    store_words = set().union(*(content_words(text) for text in by_address.values()))
    for number, session in enumerate(plan):
        delivered_here: list[str] = []
        for prompt in session.prompts:
            shared = content_words(prompt.text) & store_words
            if session.silent and shared:  # the fixture must not call an overlap irrelevant
                print(f"warning: {session.name!r} shares {sorted(shared)} with the store")
            base = {"session_id": f"bench-{number}", "cwd": str(project)}
            events = [{**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt.text}]
            events += [
                {**base, "hook_event_name": "PostToolUse", "tool_name": name, "tool_input": args,
                 "tool_response": "ok"}
                for name, args in prompt.calls
            ]  # fmt: skip
            addresses = [a for event in events for a in ranked(event, env, project)]
            figures.log.append(f"{session.name}: {prompt.text[-60:]!r} -> {addresses}")
            figures.deliveries += len(addresses)
            delivered_here += addresses
            if prompt.decisive:  # delivered now, or earlier in the session (still in context)
                figures.decisive += 1
                figures.decisive_hit += prompt.decisive in delivered_here
            asked = content_words(" ".join([prompt.text, *(str(c[1]) for c in prompt.calls)]))
            for address in addresses:
                if address != prompt.decisive:
                    figures.extra += 1
                if not asked & content_words(by_address.get(address, "")):
                    figures.junk.append(f"{session.name}: {address}")
        if session.silent:
            figures.silent_sessions += 1
            figures.silent_hit += not delivered_here
    return figures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the revision to compare with (pre-change)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--verbose", action="store_true", help="list every junk delivery")
    args = ap.parse_args()
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="canon-lane-bench-") as tmp:
        work = Path(tmp)
        trees = {"base": extract(args.base, work / "base"), "new": ROOT}
        for store, small in (("small", True), ("large", False)):
            articles = build_store(work / store, small, args.seed)
            plan = sessions(random.Random(args.seed), small)
            for name, tree in trees.items():
                got = replay(tree, work / store, work / f"{store}-{name}", plan)
                results[f"{store}/{name}"] = {
                    "articles": articles, "prompts": sum(len(s.prompts) for s in plan),
                    "deliveries": got.deliveries,
                    "decisive": f"{got.decisive_hit}/{got.decisive}",
                    "junk": len(got.junk), "extra": got.extra,
                    "silent": f"{got.silent_hit}/{got.silent_sessions}",
                }  # fmt: skip
                if args.verbose:
                    print("\n".join(f"  {store}/{name} {line}" for line in got.log))
                    print("\n".join(f"  junk ({store}/{name}) {line}" for line in got.junk))
    columns = ("articles", "prompts", "deliveries", "decisive", "junk", "extra", "silent")
    print(f"{'store/tree':12}" + "".join(f" {c:>10}" for c in columns))
    for key, row in results.items():
        print(f"{key:12}" + "".join(f" {row[c]!s:>10}" for c in columns))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
