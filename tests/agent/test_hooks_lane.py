"""The retrieval lane (SPEC §11.4) through the real `canon hook claude-code|codex|pi` (JSON in).

Each test builds a real project whose `canon.toml` turns the lane on, runs the hook as a
subprocess and reads its reply and its CANON_TRACE lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from hookrun import Hook, article, canon_command, context, isolated_hook, make_project, payload

RULE = "Round money half-even to cents, only at the final step."
RULE_LINE = f"- conventions/money-rounding: {RULE}"
HEADER = "canon project memory ranked for this task (no file you touched leads to these):"


def lane_project(root: Path, toml: str = 'retrieval = "lexical"\n') -> Path:
    """make_project's assets and spine, a money-rounding rule and four unrelated topics."""
    project = make_project(root)
    (project / "canon.toml").write_text(toml)
    article(project, "conventions/money-rounding", RULE,
            "Money rounding: round the invoice total once; never round intermediate sums.",
            scope="rule")  # fmt: skip
    for topic in ("logging", "errors", "naming", "tests"):
        article(project, f"notes/{topic}", f"How we do {topic}.", f"Our {topic} practice.")
    return project


def prompt(project: Path, text: str, agent: str = "claude-code", session: str = "s-1") -> dict:
    return payload(agent, "user_prompt_submit", project, session, prompt=text)


def said(reply: dict | None, event: str = "UserPromptSubmit") -> str:
    if not reply:
        return ""
    assert reply["hookSpecificOutput"]["hookEventName"] == event
    return str(reply["hookSpecificOutput"]["additionalContext"])


def ranked(trace: Path) -> list[dict[str, Any]]:
    """The lane's decisions in the trace, in order."""
    if not trace.exists():
        return []
    lines = [json.loads(x) for x in trace.read_text().splitlines()]
    return [d for d in lines if str(d["decision"]).startswith(("ranking", "lane-"))]


def sent(decision: dict[str, Any]) -> list[str]:
    return [hit["address"] for hit in decision["sent"]]


@pytest.fixture
def claude(tmp_path: Path) -> Hook:
    return isolated_hook("claude-code", tmp_path)


@pytest.fixture
def codex(tmp_path: Path) -> Hook:
    return isolated_hook("codex", tmp_path)


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_rule_reaches_the_prompt_reply_when_the_words_call_for_it(
    tmp_path: Path, agent: str
) -> None:
    """SPEC §11.4: the prompt is the newest intent; the rule (no file leads to it) rides the
    UserPromptSubmit reply as additional context, with its address and capsule."""
    project = lane_project(tmp_path / "proj")
    hook = Hook(agent, tmp_path / "state", tmp_path / "trace.jsonl")
    reply = hook(prompt(project, "How should the invoice total handle money rounding?", agent))
    assert said(reply).splitlines() == [HEADER, RULE_LINE]
    [decision] = ranked(tmp_path / "trace.jsonl")
    assert decision["event"] == "UserPromptSubmit" and decision["trigger"] == "prompt"
    assert sent(decision) == ["conventions/money-rounding"]
    assert decision["chars"] == len(said(reply)) + 1
    # Nothing stands out for words no article is about: silence.
    assert hook(prompt(project, "Please rename the variable zeta to omega.", agent)) is None
    # `canon stats` counts the delivery as by rank, with its characters.
    stats = subprocess.run([*canon_command(), "stats", "--format", "json"], cwd=project,
                           env=hook.env(), capture_output=True, text=True, timeout=60)  # fmt: skip
    assert stats.returncode == 0, stats.stdout + stats.stderr
    report = json.loads(stats.stdout)
    assert report["by_rank"] == {"conventions/money-rounding": 1}
    assert report["totals"]["chars_rank"] == len(RULE_LINE) + 1


def test_the_intent_is_the_users_words_and_the_calls_never_results(
    tmp_path: Path, claude: Hook
) -> None:
    """The query holds both ends of a long prompt (not its middle), a call's name and first
    argument (not its result, not later arguments), and none of canon's own delivered lines."""
    project = lane_project(tmp_path / "proj")
    filler = " ".join(f"word{n}" for n in range(400))
    # the middle of a long prompt is dropped: no ranking although it names the rule's words
    assert claude(prompt(project, f"Start. {filler} money rounding {filler} End.")) is None
    # a tool result that talks about money rounding ranks nothing; neither does a 2nd argument
    bash = payload("claude-code", "post_tool_use_bash", project)
    bash["tool_input"] = {"command": "ls src", "description": "money rounding money rounding"}
    bash["tool_response"] = {"stdout": "money rounding " * 50, "stderr": "", "interrupted": False}
    assert "money-rounding" not in context(claude(bash))
    # canon's own lines pasted back into a prompt are not the user's words
    pasted = f"{HEADER}\n{RULE_LINE}\nThanks, noted."
    assert claude(prompt(project, pasted, session="s-2")) is None
    # the end of a long prompt counts, and so does a call's first argument
    assert RULE_LINE in said(claude(prompt(project, f"{filler} {filler} money rounding?")))
    grep = payload("claude-code", "post_tool_use_read", project, session="s-3")
    grep["tool_name"], grep["tool_input"] = "Grep", {"pattern": "money rounding", "path": "src"}
    assert RULE_LINE in context(claude(grep))


def test_the_lane_is_off_by_default_and_with_retrieval_none(tmp_path: Path, claude: Hook) -> None:
    project = lane_project(tmp_path / "proj", toml="")
    assert claude(prompt(project, "How should money rounding work?")) is None
    (project / "canon.toml").write_text('retrieval = "none"\n')
    assert claude(prompt(project, "How should money rounding work?", session="s-2")) is None
    assert ranked(tmp_path / "trace.jsonl") == []


def _flat(project: Path, n: int = 5) -> list[str]:
    """n off-spine articles with the same words: every query scores them equally."""
    addresses = [f"ledger/entry-{c}" for c in "abcdefgh"[:n]]
    for address in addresses:
        article(project, address, "Ledger entries balance.", "Ledger entries balance.")
    return addresses


def test_flat_ranking_nothing_stands_out_at_the_default(tmp_path: Path, claude: Hook) -> None:
    """Equal scores: the best is not 1.4 times the 4th, so nothing rides."""
    project = lane_project(tmp_path / "proj")
    _flat(project)
    assert claude(prompt(project, "Ledger entries balance?")) is None
    [decision] = ranked(tmp_path / "trace.jsonl")
    assert decision["sent"] == [] and decision["ratio"] == 1.0 and decision["standout"] == 1.4
    assert decision["candidates"] == 5 and len(decision["near_misses"]) == 3
    assert decision["best_kept"] == decision["competitor"] > 0 and decision["chars"] == 0


def test_flat_ranking_at_standout_1_three_ride_best_first(tmp_path: Path, claude: Hook) -> None:
    """`standout = 1` is no cutoff: three ride (the per-message cap), ties by address."""
    project = lane_project(tmp_path / "proj", 'retrieval = "lexical"\nstandout = 1\n')
    addresses = _flat(project)
    lines = said(claude(prompt(project, "Ledger entries balance?"))).splitlines()
    assert lines == [HEADER] + [f"- {a}: Ledger entries balance." for a in addresses[:3]]
    [decision] = ranked(tmp_path / "trace.jsonl")
    assert sent(decision) == addresses[:3] and decision["best_kept"] == decision["worst_sent"]


def test_at_most_three_ride_and_the_spine_takes_no_slot(tmp_path: Path, claude: Hook) -> None:
    """PostToolUse: the spine's capsule and three ranked articles in one reply; an article
    already reached by address is no candidate and takes no slot."""
    project = lane_project(tmp_path / "proj", 'retrieval = "lexical"\nstandout = 1\n')
    addresses = _flat(project, 6)
    read = payload("claude-code", "post_tool_use_read", project)
    read["tool_input"] = {"file_path": str(project / "src/core/config.py")}
    # The agent reads one ledger article through the tool first: it is in the context.
    canon_read = payload("claude-code", "post_tool_use_mcp_canon_read", project)
    canon_read["tool_input"] = {"action": "read", "path": addresses[0]}
    assert claude(canon_read) is None
    claude(prompt(project, "Ledger entries: check them."))  # three ride here
    text = context(claude(read))  # the intent grew: the other two may ride, never the first
    assert "- src/core/config: Loads layered config; env beats file." in text
    delivered = [d for d in ranked(tmp_path / "trace.jsonl") if d["decision"] == "ranking"]
    assert [len(d["sent"]) for d in delivered] == [3, 2]
    everything = [a for d in delivered for a in sent(d)]
    assert sorted(everything) == addresses[1:] and addresses[0] not in everything
    assert text.index("src/core/config") < text.index(HEADER)  # next to the spine, after it


def test_drained_store_the_tail_does_not_ride(tmp_path: Path) -> None:
    """Three strong articles ride; once they are delivered, the weak tail left (fewer than
    four, so no 4th to beat) must beat what this query gives the delivered ones: it does not.
    With `standout = 1` (no cutoff, no floor) the same tail rides: the floor is what stops it."""

    def session(toml: str, name: str) -> list[dict[str, Any]]:
        project = lane_project(tmp_path / name, toml)
        for c in "abc":
            body = "Refunds: refunds are issued within a week; refunds need a receipt."
            article(project, f"pay/strong-{c}", f"Refunds policy {c}.", body)
        for c in "xyz":
            article(project, f"pay/weak-{c}", f"Weak {c}.",
                    "Other words about many things, " * 6 + "and refunds once.")  # fmt: skip
        hook = Hook("claude-code", tmp_path / f"{name}-state", tmp_path / f"{name}.jsonl")
        hook(prompt(project, "Refunds policy?"))
        bash = payload("claude-code", "post_tool_use_bash", project)
        bash["tool_input"] = {"command": "ls src", "description": "list"}
        hook(bash)
        return [d for d in ranked(tmp_path / f"{name}.jsonl") if d["decision"] == "ranking"]

    first, second = session('retrieval = "lexical"\n', "floor")
    assert sent(first) == ["pay/strong-a", "pay/strong-b", "pay/strong-c"]
    assert first["competitor"] > 0 and first["floor"] == 0
    assert second["sent"] == [] and second["competitor"] == 0  # three candidates left
    assert second["floor"] > 0 and second["threshold"] == pytest.approx(1.4 * second["floor"], 1e-3)
    assert second["best_kept"] is not None and second["best_kept"] < second["threshold"]

    first, second = session('retrieval = "lexical"\nstandout = 1\n', "nofloor")
    assert len(first["sent"]) == 3
    assert sorted(sent(second)) == ["pay/weak-x", "pay/weak-y", "pay/weak-z"]


def test_each_ranked_article_once_per_cycle(tmp_path: Path, claude: Hook) -> None:
    """A delivered article is not ranked again in this cycle, whatever the intent; after a
    compaction it may be (new intent pays for it); with resurface off, once per session."""
    project = lane_project(tmp_path / "proj")
    assert RULE_LINE in said(claude(prompt(project, "How does money rounding work?")))
    assert claude(prompt(project, "Money rounding again: half-even?")) is None
    claude(payload("claude-code", "session_start_compact", project))
    assert RULE_LINE in said(claude(prompt(project, "And money rounding for refunds?")))
    (project / "canon.toml").write_text('retrieval = "lexical"\nresurface = false\n')
    claude(payload("claude-code", "session_start_compact", project))
    assert claude(prompt(project, "Money rounding for taxes, then?")) is None


def test_an_unchanged_intent_delivers_nothing_new(tmp_path: Path, claude: Hook) -> None:
    """At `standout = 1` five equal articles: three ride; the same words again (or a call
    that adds nothing to the intent: canon's own tool) bring nothing although two are left;
    new words do."""
    project = lane_project(tmp_path / "proj", 'retrieval = "lexical"\nstandout = 1\n')
    addresses = _flat(project)
    assert said(claude(prompt(project, "Ledger entries?"))).count("\n- ") == 3
    assert claude(prompt(project, "Ledger entries?")) is None
    canon_read = payload("claude-code", "post_tool_use_mcp_canon_read", project)
    assert claude(canon_read) is None
    kinds = [d["decision"] for d in ranked(tmp_path / "trace.jsonl")]
    assert kinds == ["ranking", "lane-unchanged", "lane-unchanged"]
    text = said(claude(prompt(project, "Ledger entries balance today?")))
    assert [line[2:].split(":")[0] for line in text.splitlines()[1:]] == addresses[3:]


def test_rules_are_ranked_even_where_a_file_lies_asset_articles_never(
    tmp_path: Path, claude: Hook
) -> None:
    """Corpus membership: an article governing a file is the spine's, never ranked, however
    well it matches; a declared rule is ranked even at an address a file has."""
    project = lane_project(tmp_path / "proj")
    (project / "src/billing.py").write_text("total = 0\n")
    (project / "src/tax.py").write_text("rate = 0\n")
    article(project, "src/billing", "Invoice totals and money rounding live here.",
            "Money rounding of invoice totals: money money rounding rounding.")  # fmt: skip
    article(project, "src/tax", "Tax tables; tax rounding is per line.", scope="rule")
    text = said(claude(prompt(project, "Where is money rounding done, and tax rounding?")))
    assert RULE_LINE in text and "- src/tax: Tax tables" in text
    assert "src/billing" not in text
    [decision] = ranked(tmp_path / "trace.jsonl")
    assert "src/billing" not in json.dumps(decision)  # not even a near miss: not in the corpus


def test_an_article_whose_file_appears_leaves_the_corpus(tmp_path: Path, claude: Hook) -> None:
    """An off-spine article gains a file at its address: the spine reaches it now, the lane
    no longer ranks it (judged again when it would ride)."""
    project = lane_project(tmp_path / "proj")
    article(project, "billing/refunds", "Refunds are issued within a week.")
    assert "billing/refunds" in said(claude(prompt(project, "How are refunds issued?")))
    (project / "billing").mkdir()
    (project / "billing/refunds.py").write_text("x = 1\n")
    claude(payload("claude-code", "session_start_startup", project, session="s-2"))
    assert claude(prompt(project, "How are refunds issued?", session="s-2")) is None


def test_surface_false_silences_the_lane(tmp_path: Path, claude: Hook) -> None:
    project = lane_project(tmp_path / "proj", 'retrieval = "lexical"\nsurface = false\n')
    assert claude(prompt(project, "How does money rounding work?")) is None
    read = payload("claude-code", "post_tool_use_read", project)
    assert claude(read) is None
    assert ranked(tmp_path / "trace.jsonl") == []


def test_a_raising_retriever_loses_only_that_turn(tmp_path: Path, claude: Hook) -> None:
    """The retriever raises (patched in the hook process through sitecustomize): the spine
    still answers, the hook exits 0, the trace says why; the next turn ranks again."""
    project = lane_project(tmp_path / "proj")
    patch = tmp_path / "patch"
    patch.mkdir()
    (patch / "sitecustomize.py").write_text(
        "from canon_ls.agent import corpus\n"
        "def broken(options, deep=False):\n"
        "    raise RuntimeError('index on fire')\n"
        "corpus.load = broken\n"
    )
    env = claude.env()
    claude.env = lambda: {**env, "PYTHONPATH": str(patch)}  # type: ignore[method-assign]
    read = payload("claude-code", "post_tool_use_read", project)
    read["tool_input"] = {"file_path": str(project / "src/core/config.py")}
    assert claude(prompt(project, "How does money rounding work?")) is None
    text = context(claude(read))
    assert text.splitlines() == [
        "canon project memory for the files this call touched:",
        "- src/core/config: Loads layered config; env beats file.",
    ]
    errors = [d for d in ranked(tmp_path / "trace.jsonl") if d["decision"] == "lane-error"]
    assert [d["error"] for d in errors] == ["RuntimeError: index on fire"] * 2
    claude.env = lambda: env  # type: ignore[method-assign]
    assert RULE_LINE in said(claude(prompt(project, "So how does money rounding work?")))


def _snapshot_in_use(project: Path, claude: Hook, tmp_path: Path) -> Path:
    """Build the lane's snapshot with one prompt, then prompt until a hook ranks from it (the
    store's files must first be old enough to trust their times); the snapshot's file."""
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "canon-ls"
    before = set(cache.glob("lane-*.bin")) if cache.is_dir() else set()
    claude(prompt(project, "How does money rounding work?"))
    [file] = set(cache.glob("lane-*.bin")) - before
    assert ranked(tmp_path / "trace.jsonl")[-1]["index"] == "built"
    deadline = time.monotonic() + 30  # files written this instant are not trusted for 3 s
    words = iter(f"logging question {n}?" for n in range(10_000))
    while ranked(tmp_path / "trace.jsonl")[-1]["index"] != "snapshot":
        assert time.monotonic() < deadline, "the snapshot was never used"
        time.sleep(0.25)
        claude(prompt(project, next(words)))
    return file


def test_the_index_is_persisted_and_follows_article_changes(tmp_path: Path, claude: Hook) -> None:
    """The corpus snapshot lives beside the parse cache and the next hooks rank from it (once
    the store's files are old enough to trust their times); a rule written through the tool
    (an atomic rename in articles/) makes the next hook rebuild and rank it."""
    project = lane_project(tmp_path / "proj")
    _snapshot_in_use(project, claude, tmp_path)
    done = subprocess.run(
        [*canon_command(), "write", "conventions/dates", "--capsule",
         "Dates are ISO 8601 in UTC.", "--body", "Timestamps and dates: ISO 8601, UTC."],
        cwd=project, env=claude.env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    text = said(claude(prompt(project, "How are timestamps and dates written?")))
    assert "- conventions/dates: Dates are ISO 8601 in UTC." in text
    assert ranked(tmp_path / "trace.jsonl")[-1]["index"] == "built"


# --------------------------------------------------------------------------- Pi


def pi_event(project: Path, name: str, session: str = "s-1", **fields: Any) -> dict[str, Any]:
    return {"event": name, "cwd": str(project), "session": session, **fields}


def test_pi_prompt_and_turn_decide_as_the_other_agents(tmp_path: Path) -> None:
    """`canon hook pi`: the prompt's reply carries the rule; a turn's calls extend the intent
    and one ranking rides the turn's single message, next to the spine."""
    project = lane_project(tmp_path / "proj")
    hook = Hook("pi", tmp_path / "state", tmp_path / "trace.jsonl")
    start = hook(pi_event(project, "session_start", reason="startup"))
    assert start is not None and 'scope "rule"' in start["tool"]["description"]
    reply = hook(pi_event(project, "prompt", prompt="How does money rounding work?"))
    assert reply == {"message": f"{HEADER}\n{RULE_LINE}"}
    # Another session: words that rank nothing, then a turn whose calls do.
    article(project, "notes/refunds", "Refunds within a week.", "Refunds are issued weekly.")
    assert hook(pi_event(project, "prompt", session="s-2", prompt="Show me config.")) is None
    calls = [
        {"tool": "read", "input": {"path": "src/core/config.py"}, "isError": False},
        {"tool": "grep", "input": {"pattern": "refunds issued"}, "isError": False},
    ]
    reply = hook(pi_event(project, "turn_end", session="s-2", calls=calls))
    assert reply is not None
    assert reply["message"].splitlines() == [
        "canon project memory for the files this turn touched:",
        "- src/core/config: Loads layered config; env beats file.",
        HEADER,
        "- notes/refunds: Refunds within a week.",
    ]
    assert reply["surfaced"] == ["src/core/config", "notes/refunds"]
    assert [d["trigger"] for d in ranked(tmp_path / "trace.jsonl")] == ["prompt", "prompt", "turn"]


# --------------------------------------------------------------------------- tokens and topics

LOGGING = "Log as structured JSON lines through the logger; never print."
LOGGING_LINE = f"- conventions/logging: {LOGGING}"
FUNCTION_WORDS = "Can you do it with a fix at the end of the file?"


def small_store(root: Path) -> Path:
    """The lane project plus a note of function words and a logging rule."""
    project = lane_project(root)
    article(project, "session/a", "A note at the top of the list.", "It is on the top of it.")
    article(project, "conventions/logging", LOGGING,
            "Logging: replace print calls with structured JSON logs.", scope="rule")  # fmt: skip
    return project


def ask(hook: Hook, project: Path, text: str, session: str = "s-1") -> str:
    """One prompt through the agent's real hook entry; the ranked text it delivered."""
    if hook.agent == "pi":
        reply = hook(pi_event(project, "prompt", session=session, prompt=text))
        return str(reply["message"]) if reply else ""
    return said(hook(prompt(project, text, hook.agent, session)))


@pytest.mark.parametrize("agent", ["claude-code", "codex", "pi"])
def test_function_words_rank_nothing(tmp_path: Path, agent: str) -> None:
    """SPEC §11.4 tokens: `with`, `at`, `the`, `of` are no reason to deliver an article; only
    words of four or more characters outside the stopword list count (so a note made of
    function words and a rule never ride a prompt made of them)."""
    project = small_store(tmp_path / "proj")
    hook = isolated_hook(agent, tmp_path)
    assert ask(hook, project, FUNCTION_WORDS) == ""
    assert ask(hook, project, "What about that, and which of these should we do before then?") == ""
    assert all(d["sent"] == [] for d in ranked(tmp_path / "trace.jsonl"))
    # content words still rank, long ones and snake_case ones alike
    assert LOGGING_LINE in ask(hook, project, "Replace print calls with structured logs?")


@pytest.mark.parametrize("agent", ["claude-code", "codex", "pi"])
def test_cjk_words_still_rank(tmp_path: Path, agent: str) -> None:
    """CJK text counts as bigrams (the lane's four-character rule is for ASCII words)."""
    project = lane_project(tmp_path / "proj")
    article(project, "conventions/jine", "金额在最后一步四舍五入到分。",
            "金额四舍五入：只在发票总额上做一次。", scope="rule")  # fmt: skip
    hook = isolated_hook(agent, tmp_path)
    line = "- conventions/jine: 金额在最后一步四舍五入到分。"
    assert line in ask(hook, project, "金额怎么四舍五入？")


@pytest.mark.parametrize("agent", ["claude-code", "codex", "pi"])
def test_other_forms_of_a_word_rank_when_no_word_matches_as_written(
    tmp_path: Path, agent: str
) -> None:
    """Issue 41 item 5: "rounded" and "totals" find the rule that says "round", "rounding"
    and "total" (English stems), asked only when no article holds a word of the prompt as
    written, so a prompt that matches as written ranks as before; words of three letters
    still never count."""
    project = lane_project(tmp_path / "proj")
    hook = isolated_hook(agent, tmp_path)
    assert RULE_LINE in ask(hook, project, "Are totals rounded twice?")
    assert ask(hook, project, "Are the ones ran as set?", session="s-2") == ""


@pytest.mark.parametrize("agent", ["claude-code", "codex", "pi"])
def test_a_new_topic_clears_the_floor(tmp_path: Path, agent: str) -> None:
    """SPEC §11.4: after the money-rounding rule was delivered, a prompt on a new topic
    delivers its rule: the delivered article, which only the older prompt matches, does not
    raise the floor (a fresh session delivers the same)."""
    project = small_store(tmp_path / "proj")
    hook = isolated_hook(agent, tmp_path)
    assert RULE_LINE in ask(hook, project, "How should the invoice total handle money rounding?")
    text = ask(hook, project, "Now replace every print call with structured JSON logs")
    assert text.splitlines() == [HEADER, LOGGING_LINE]
    second = [d for d in ranked(tmp_path / "trace.jsonl") if d["decision"] == "ranking"][-1]
    assert second["floor"] == 0


def test_a_new_topic_does_not_reopen_the_old_topics_tail(tmp_path: Path, claude: Hook) -> None:
    """The drained store of one topic: once its strong articles are delivered, a new topic
    lowers the floor, and the old topic's weak tail (which only the older prompt matches)
    still does not ride; the new topic's rule does. The same topic asked again keeps the
    floor: the tail stays out."""
    project = small_store(tmp_path / "proj")
    for c in "abc":
        body = "Refunds: refunds are issued within a week; refunds need a receipt."
        article(project, f"pay/strong-{c}", f"Refunds policy {c}.", body)
    for c in "xy":  # with the new rule, three candidates: no 4th competitor to beat
        article(project, f"pay/weak-{c}", f"Weak {c}.",
                "Other words about many things, " * 6 + "and refunds once.")  # fmt: skip
    strong = said(claude(prompt(project, "Refunds policy?")))
    assert strong.count("- pay/strong-") == 3
    assert claude(prompt(project, "And the refunds policy for gift cards?")) is None
    text = said(claude(prompt(project, "Now replace every print call with structured JSON logs")))
    assert text.splitlines() == [HEADER, LOGGING_LINE]
    bash = payload("claude-code", "post_tool_use_bash", project)
    bash["tool_input"] = {"command": "ls src", "description": "list"}
    assert "pay/weak" not in context(claude(bash))
    assert not any("pay/weak" in json.dumps(d["sent"]) for d in ranked(tmp_path / "trace.jsonl")
                   if d["decision"] == "ranking")  # fmt: skip


def test_a_damaged_corpus_snapshot_is_rebuilt(tmp_path: Path, claude: Hook) -> None:
    """The lane's snapshot cut short, with a byte flipped (in its head, its middle, its end) or
    extended is discarded and built again (never ranked from), and the rule still rides."""
    project = lane_project(tmp_path / "proj")
    file = _snapshot_in_use(project, claude, tmp_path)
    sound = file.read_bytes()
    damaged = [sound[: len(sound) // 2], sound + b"\0" * 64]
    for at in (2, 9, len(sound) // 3, len(sound) // 2, len(sound) - 40, len(sound) - 3):
        flipped = bytearray(sound)
        flipped[at] ^= 0x01
        damaged.append(bytes(flipped))
    for n, data in enumerate(damaged):
        file.write_bytes(data)
        ask = prompt(project, f"So how does money rounding work, {n}?", session=f"d{n}")
        text = said(claude(ask))
        assert ranked(tmp_path / "trace.jsonl")[-1]["index"] == "built", n
        assert RULE_LINE in text, n


def test_a_tool_name_alone_brings_nothing(tmp_path: Path, claude: Hook) -> None:
    """`Read` is in the intent (it ranks), but an article that only the tool's name matches
    does not ride: the newest prompt or the call's argument must call for it."""
    project = lane_project(tmp_path / "proj")
    article(project, "notes/reading", "Stream large inputs in chunks.", "How we read inputs.")
    assert claude(prompt(project, "Rename zeta to omega in the parser.")) is None
    read = payload("claude-code", "post_tool_use_read", project)
    assert "notes/reading" not in context(claude(read))
    grep = payload("claude-code", "post_tool_use_read", project, session="s-2")
    grep["tool_name"], grep["tool_input"] = "Grep", {"pattern": "read inputs", "path": "src"}
    assert "- notes/reading: Stream large inputs in chunks." in context(claude(grep))


def test_a_decisive_four_letter_word_reaches_the_lane(tmp_path: Path, claude: Hook) -> None:
    """Issue 43 row 4 (SPEC §11.4): words of four characters count (`json`, `auth`, `rust`,
    `tabs`): a prompt whose only content words are four letters long still finds its rule."""
    project = lane_project(tmp_path / "proj")
    capsule = "Indent json with tabs; auth tokens never logged."
    article(project, "conventions/json-tabs", capsule, "json tabs auth json.", scope="rule")
    reply = claude(prompt(project, "json tabs, auth?"))
    assert f"- conventions/json-tabs: {capsule}" in said(reply).splitlines()
