"""`canon hook pi` end to end: the JSON events of the Pi extension into the real CLI (SPEC §11.6).

The payload shapes are the ones `canon_ls/agent/pi_extension/index.ts` sends (checked against
the real Pi in test_pi.py). Every test runs `canon hook pi` as a subprocess over a real store.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hookrun import Hook, article, make_project

CONFIG = "- src/core/config: Loads layered config; env beats file."
STOP_MARK = "canon: these articles govern files you changed"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


@pytest.fixture
def hook(tmp_path: Path) -> Hook:
    return Hook("pi", tmp_path / "state", tmp_path / "trace.jsonl")


def event(project: Path, name: str, session: str = "s-1", **fields: Any) -> dict[str, Any]:
    return {"event": name, "cwd": str(project), "session": session, **fields}


def call(tool: str, is_error: bool = False, **tool_input: Any) -> dict[str, Any]:
    return {"tool": tool, "input": tool_input, "isError": is_error}


def turn(hook: Hook, project: Path, *calls: dict[str, Any], session: str = "s-1") -> str:
    """The message the extension appends at the end of a turn ('' for none)."""
    reply = hook(event(project, "turn_end", session, calls=list(calls)))
    if reply is None:
        return ""
    assert set(reply) == {"message", "surfaced"}
    return str(reply["message"])


def decisions(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (tmp_path / "trace.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("reason", ["startup", "new", "resume", "fork", "reload"])
def test_session_start_offers_the_tool_and_wakes_up(hook: Hook, project: Path, reason: str):
    """Every session start registers the §6 tool; in a store, surfacing wakes up."""
    reply = hook(event(project, "session_start", reason=reason))
    assert reply is not None and reply["active"] is True
    tool = reply["tool"]
    assert tool["parameters"]["properties"]["action"]["enum"] == [
        "read", "write", "journal", "map", "search"
    ]  # fmt: skip
    assert "Project memory" in tool["description"] and tool["guidelines"]


def test_one_message_per_turn_each_capsule_once_per_cycle(hook: Hook, project: Path) -> None:
    """SPEC §11.6: the turn's calls come in one batch and leave one message."""
    hook(event(project, "session_start", reason="startup"))
    reads = [call("read", path="src/core/config.py"), call("read", path="src/a.py")]
    message = turn(hook, project, *reads, call("grep", pattern="x", path="src/core"))
    assert message.splitlines() == [
        "canon project memory for the files this turn touched:",
        CONFIG,
        "- src (governs src/a.py): Source root, one module per concern.",
    ]
    assert turn(hook, project, call("read", path="src/core/config.py")) == ""


@pytest.mark.parametrize(("reason", "again"), [("startup", True), ("new", True), ("fork", True),
                                               ("resume", False), ("reload", False)])  # fmt: skip
def test_new_session_and_compaction_start_a_cycle(
    hook: Hook, project: Path, reason: str, again: bool
) -> None:
    """SPEC §11.3/§11.6: Pi's new session, fork and compaction reset; resume and reload keep."""
    hook(event(project, "session_start", reason="startup"))
    assert CONFIG in turn(hook, project, call("read", path="src/core/config.py"))
    hook(event(project, "session_start", reason=reason))
    assert (CONFIG in turn(hook, project, call("read", path="src/core/config.py"))) is again
    hook(event(project, "session_compact"))
    assert CONFIG in turn(hook, project, call("read", path="src/core/config.py"))


def test_startup_of_a_stored_session_keeps_the_cycle(hook: Hook, project: Path) -> None:
    """`pi --continue` starts with reason startup but the old context: like a resume."""
    hook(event(project, "session_start", reason="startup"))
    assert CONFIG in turn(hook, project, call("read", path="src/core/config.py"))
    hook(event(project, "session_start", reason="startup", resumed=True))
    assert turn(hook, project, call("read", path="src/core/config.py")) == ""


def test_canon_read_in_the_same_turn_withdraws_the_line(hook: Hook, project: Path) -> None:
    """Reading the article through the tool withdraws its line before the message goes out."""
    message = turn(hook, project, call("read", path="src/core/config.py"),
                   call("read", path="src/a.py"),
                   call("canon", action="read", path="src/core/config.py"))  # fmt: skip
    assert CONFIG not in message and "- src (governs src/a.py)" in message
    assert turn(hook, project, call("bash", command="cat src/core/config.py")) == ""


def test_bash_commands_surface(hook: Hook, project: Path) -> None:
    assert CONFIG in turn(hook, project, call("bash", command="wc -l src/core/config.py"))


def test_stop_reminds_once_after_an_edit(hook: Hook, project: Path, tmp_path: Path) -> None:
    """SPEC §11.3: a successful edit of a governed file; the reminder comes once, then quiet."""
    turn(hook, project, call("edit", path="src/core/config.py", edits=[]))
    reply = hook(event(project, "stop", again=False))
    assert reply is not None and set(reply) == {"message"}
    assert reply["message"].startswith(STOP_MARK)
    assert "- src/core/config (you changed src/core/config.py)" in reply["message"]
    assert hook(event(project, "stop", again=False)) is None
    assert [d["decision"] for d in decisions(tmp_path)].count("remind") == 1


def test_canon_continuation_never_reminds_again(hook: Hook, project: Path) -> None:
    """`again` (the run canon itself continued) is Pi's `stop_hook_active`: no loop."""
    turn(hook, project, call("write", path="src/core/config.py", content="x = 2\n"))
    assert hook(event(project, "stop", again=True)) is None


def test_failed_edit_and_reads_do_not_remind(hook: Hook, project: Path) -> None:
    turn(hook, project, call("edit", is_error=True, path="src/core/config.py", edits=[]),
         call("read", path="src/a.py"))  # fmt: skip
    assert hook(event(project, "stop", again=False)) is None


def test_tool_write_settles_the_reminder(hook: Hook, project: Path) -> None:
    """The native tool writes the article (source pi) and the turn's batch settles it."""
    turn(hook, project, call("edit", path="src/core/config.py", edits=[]))
    reply = hook(event(project, "tool", input={"action": "write", "path": "src/core/config.py",
                                               "capsule": "Config, now x = 2."}))  # fmt: skip
    assert reply == {"text": reply["text"], "isError": False} and "Wrote" in reply["text"]
    turn(hook, project, call("canon", action="write", path="src/core/config.py"))
    assert hook(event(project, "stop", again=False)) is None
    assert "Config, now x = 2." in (project / ".canon/articles/src/core/config.md").read_text()


def test_tool_journal_is_pi_s_and_bad_input_is_an_error(hook: Hook, project: Path) -> None:
    entry = {"action": "journal", "body": "Vendor caps pages at 500 rows."}
    reply = hook(event(project, "tool", session="pi-7", input=entry))
    assert reply is not None and reply["isError"] is False
    [written] = (project / ".canon/journal").glob("*.md")
    text = written.read_text()
    assert "harness: pi" in text and "pi-7" in text and "Vendor caps pages at 500 rows." in text
    for bad in ({"action": "nope"}, "read", None, {"action": "read"}):
        reply = hook(event(project, "tool", input=bad))
        assert reply is not None and reply["isError"] is True and reply["text"]


def test_status_names_what_surfaced(hook: Hook, project: Path) -> None:
    reply = hook(event(project, "status", surfaced=["src/core/config", "src"]))
    assert reply is not None
    first, second = reply["text"].splitlines()
    assert first.startswith("canon store ") and "3 articles" in first
    assert second == "Surfaced in this session (2): src/core/config, src"
    reply = hook(event(project, "status", surfaced="garbage"))
    assert reply is not None and reply["text"].endswith("Nothing surfaced in this session yet.")


def test_no_store_only_the_tool_and_nothing_created(hook: Hook, tmp_path: Path) -> None:
    """SPEC §11.6: a project without a store gets the tool and nothing else."""
    bare = tmp_path / "bare"
    (bare / "src").mkdir(parents=True)
    (bare / "src/a.py").write_text("x\n")
    reply = hook(event(bare, "session_start", reason="startup"))
    assert reply is not None and set(reply) == {"tool"}
    assert turn(hook, bare, call("edit", path="src/a.py", edits=[])) == ""
    assert hook(event(bare, "session_compact")) is None
    assert hook(event(bare, "stop", again=False)) is None
    assert hook(event(bare, "prompt", prompt="remember: nothing here")) is None
    status = hook(event(bare, "status", surfaced=[]))
    assert status is not None and "No canon store" in status["text"]
    assert not (bare / ".canon").exists()
    assert not (tmp_path / "state").exists() and not (tmp_path / "trace.jsonl").exists()


def test_a_queued_note_is_one_entry_even_if_sent_twice(hook: Hook, project: Path) -> None:
    """SPEC §11.5: a message typed while Pi works reaches `canon hook pi` as the same `prompt`
    event (from Pi's `input`); should it also arrive as a run's prompt, it is still one entry."""
    hook(event(project, "session_start", reason="startup"))
    replies = [hook(event(project, "prompt", prompt="note: env wins")) for _ in range(2)]
    [entry] = sorted((project / ".canon" / "journal").glob("*.md"))
    said = f"journaled verbatim as journal/{entry.name};"
    assert all(r is not None and said in r["message"] for r in replies)


def test_article_written_mid_session_is_found(hook: Hook, project: Path) -> None:
    (project / "lib").mkdir()
    (project / "lib/util.py").write_text("u = 1\n")
    assert turn(hook, project, call("read", path="lib/util.py")) == ""
    article(project, "lib", "Helpers shared by every module.")
    assert "Helpers shared by every module." in turn(hook, project, call("ls", path="lib"))


@pytest.mark.parametrize(
    "stdin",
    [
        "",
        "  \n",
        "{not json",
        "[1, 2]",
        "null",
        '"turn_end"',
        "[" * 100_000,
        '{"event": "nope"}',
        '{"event": 5, "cwd": 5, "session": []}',
        '{"event": "turn_end", "calls": "read"}',
        '{"event": "turn_end", "calls": [1, null, "x", {"tool": 3, "input": "x"}]}',
        '{"event": "turn_end", "calls": [{"tool": "bash", "input": {"command": "echo \'open"}}]}',
        '{"event": "turn_end", "calls": [{"tool": "read", "input": {"path": {"deep": []}}}]}',
        '{"event": "stop", "cwd": "/nonexistent/dir", "again": "yes"}',
        '{"event": "session_start", "reason": ["startup"]}',
        '{"event": "prompt", "prompt": 5}',
        '{"event": "prompt", "prompt": {"text": "remember: x"}}',
        '{"event": "prompt", "prompt": "remember: \\u0000 lone \\ud800 surrogate"}',
        '{"event": "prompt", "prompt": "note: ' + "[" * 50_000 + '"}',
        b"\xff\xfe\x00garbage",
    ],
)
def test_garbage_exits_zero_without_a_traceback(
    hook: Hook, project: Path, stdin: str | bytes
) -> None:
    """Any input: exit 0, no traceback, stdout empty or one JSON object."""
    done = hook.run_raw(stdin, cwd=project)
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    out = done.stdout.decode().strip()
    assert out == "" or isinstance(json.loads(out), dict)


def test_huge_turn_is_bounded(hook: Hook, project: Path) -> None:
    calls = [call("read", path="src/core/config.py")] * 5000 + [call("bash", command="x" * 200_000)]
    assert CONFIG in turn(hook, project, *calls)


# --------------------------------------------------------------------------- presence (§11.6)

HEADER = "canon project memory for the files this turn touched:"


def read_config(hook: Hook, project: Path, projection: object) -> str:
    """One turn reading the config, with the last request's text as the bridge sends it."""
    fields: dict[str, Any] = {"calls": [call("read", path="src/core/config.py")]}
    if projection is not None:
        fields["projection"] = projection
    reply = hook(event(project, "turn_end", **fields))
    return str(reply["message"]) if reply else ""


def test_a_line_folded_out_of_the_projection_surfaces_again(hook: Hook, project: Path) -> None:
    """SPEC §11.6: seen means still in what the provider receives. While the delivered line is
    in the projection (JSON-quoted or re-wrapped alike) the config is not shown again; once it
    is gone (folded away), the next touch shows it again."""
    hook(event(project, "session_start", reason="startup"))
    first = read_config(hook, project, "")
    assert first == f"{HEADER}\n{CONFIG}"
    quoted = json.dumps({"role": "user", "content": [{"type": "text", "text": first}]})
    assert read_config(hook, project, f"Read the config.\n{quoted}\nx = 1") == ""
    messages = [{"role": "user", "content": "Read it."}, {"role": "custom", "content": first}]
    assert read_config(hook, project, messages) == ""  # the shape the bridge sends
    rewrapped = first.replace(" ", "\n  ").upper()
    assert read_config(hook, project, rewrapped) == ""
    assert read_config(hook, project, "Read the config.\n[folded: 2 messages]") == first
    assert read_config(hook, project, None) == ""  # no projection sent: nothing departs


def test_a_short_delivery_stays_seen_for_the_session(hook: Hook, project: Path) -> None:
    """A line under 24 normalised characters cannot be told apart in the projection: it stays
    seen for the session, even across a compaction, however the projection looks."""
    (project / "ui.py").write_text("u = 1\n")
    article(project, "ui", "Tiny.")
    hook(event(project, "session_start", reason="startup"))
    touch = {"calls": [call("read", path="ui.py")]}
    assert "- ui: Tiny." in str(hook(event(project, "turn_end", projection="", **touch)))
    hook(event(project, "session_compact", presence=True))
    assert hook(event(project, "turn_end", projection="nothing here", **touch)) is None


def test_compaction_is_judged_by_presence(hook: Hook, project: Path, tmp_path: Path) -> None:
    """With the bridge's projections a compaction resets nothing by itself: a line the summary
    kept stays seen, one it dropped surfaces on the next touch. An older bridge (no `presence`)
    keeps the compaction cycle."""
    hook(event(project, "session_start", reason="startup"))
    first = read_config(hook, project, "")
    hook(event(project, "session_compact", presence=True))
    assert read_config(hook, project, f"Summary: {first}") == ""
    assert read_config(hook, project, "Summary: the user read files.") == first
    hook(event(project, "session_compact"))
    assert read_config(hook, project, None) == first
    kinds = [d["decision"] for d in decisions(tmp_path)]
    assert kinds.count("departed") == 1 and kinds.count("compacted") == 1


def test_read_articles_and_resurface_false(hook: Hook, project: Path) -> None:
    """An article read through the tool is held to its address; with `resurface = false`
    nothing departs (each article once per session)."""
    hook(event(project, "session_start", reason="startup"))
    canon_read = call("canon", action="read", path="src/core/config")
    hook(event(project, "turn_end", calls=[canon_read], projection=""))
    assert read_config(hook, project, "# src/core/config\nLoads layered config") == ""
    assert read_config(hook, project, "nothing") == f"{HEADER}\n{CONFIG}"
    (project / "canon.toml").write_text("resurface = false\n")
    assert read_config(hook, project, "nothing") == ""


def test_an_untrusted_canon_toml_is_told_to_the_person(tmp_path: Path, project: Path) -> None:
    """SPEC §13 / issue 24: a canon.toml leading outside the project waits for `canon trust`;
    Pi's session start carries the sentence for the extension to show (not the model)."""
    (project / "canon.toml").write_text(f'root = "{tmp_path / "elsewhere" / ".canon"}"\n')
    hook = Hook("pi", tmp_path / "state", tmp_path / "trace.jsonl", tmp_path / "config")
    reply = hook(event(project, "session_start", reason="startup"))
    assert reply is not None and "canon trust" in reply["notice"]
    assert str(project / "canon.toml") in reply["notice"]
    (project / "canon.toml").unlink()
    assert "notice" not in (hook(event(project, "session_start", reason="startup")) or {})


def test_a_turn_that_reads_the_article_reports_it_withdrawn_not_surfaced(
    hook: Hook, project: Path, tmp_path: Path
) -> None:
    """Issue 43 row 5 (SPEC §11.3): the turn read config.py and, through the canon tool, its
    article: the config line is withdrawn, so the reply's `surfaced` (what the extension keeps
    for `/canon`) names only what the message delivered, and the trace says withdrawn."""
    hook(event(project, "session_start", reason="startup"))
    calls = [
        call("read", path="src/core/config.py"),
        call("read", path="src/a.py"),
        call("canon", action="read", path="src/core/config"),
    ]
    reply = hook(event(project, "turn_end", calls=calls))
    assert reply is not None and CONFIG not in reply["message"]
    assert reply["surfaced"] == ["src"]
    assert "withdrawn" in [d["decision"] for d in decisions(tmp_path)]
    assert turn(hook, project, call("read", path="src/core/config.py")) == ""
