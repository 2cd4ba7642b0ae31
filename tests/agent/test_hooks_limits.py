"""SPEC §11.3: every hook reply fits its host's inline limit (one table, agent/batch.py's
REPLY_LIMITS; docs/AGENTS.md). Lines that do not fit are not counted as delivered: they
surface on a later touch of their files, and one closing line says how many more there are
and how to list them. Real `canon hook` processes over a real store."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hookrun import Hook, article, canon_command, isolated_hook, payload

from canon_ls.agent.batch import REPLY_LIMITS

N = 80
CAPSULE = "Owns the {i}th folder; retries with backoff, idempotent writes, audited reads; " * 2


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """80 governed folders, each with one file and an article with a ~160-character capsule."""
    root = tmp_path / "proj"
    for i in range(N):
        (root / f"pkg/f{i:02d}").mkdir(parents=True)
        (root / f"pkg/f{i:02d}/mod.py").write_text("x = 1\n", "utf-8")
        article(root, f"pkg/f{i:02d}", CAPSULE.format(i=i).strip())
    return root


def read_call(project: Path, i: int) -> dict[str, Any]:
    file = str(project / f"pkg/f{i:02d}/mod.py")
    return {"tool_name": "Read", "tool_input": {"file_path": file}, "tool_response": "x = 1\n"}


def delivered(text: str) -> list[str]:
    lines = [line[2:].partition(": ")[0] for line in text.splitlines()]
    return [line.partition(" (")[0] for line in lines if line.startswith("pkg/")]


def test_spec_11_3_a_batch_of_80_reads_fits_claude_code_and_the_rest_surface_later(
    project: Path, tmp_path: Path
) -> None:
    claude = isolated_hook("claude-code", tmp_path)
    data = payload("claude-code", "post_tool_batch", project)
    data["tool_calls"] = [read_call(project, i) for i in range(N)]
    done = claude.run_raw(json.dumps(data))
    out = done.stdout.decode()
    assert len(out) <= REPLY_LIMITS["claude-code"][1]  # the whole hook output
    text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    first = delivered(text)
    assert 10 < len(first) < N
    assert first == [f"pkg/f{i:02d}" for i in range(len(first))]  # in the calls' order
    last = text.splitlines()[-1]
    assert f"and {N - len(first)} more not shown here" in last
    assert 'the canon tool (action "map", path "pkg")' in last
    trace = [json.loads(x) for x in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert sorted(d["governing"] for d in trace if d["decision"] == "deferred") == [
        f"pkg/f{i:02d}" for i in range(len(first), N)
    ]
    done = subprocess.run(
        [*canon_command(), "stats", "--format", "json"], cwd=project, env=claude.env(),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    totals = json.loads(done.stdout)["totals"]
    assert totals["spine"] == len(first) and totals["chars_spine"] < len(text)  # what was said
    # the touch of a delivered folder says nothing again; one not delivered surfaces now
    again = payload("claude-code", "post_tool_batch", project)
    again["tool_calls"] = [read_call(project, 0), read_call(project, N - 1)]
    reply = claude(again)
    assert reply is not None
    assert delivered(reply["hookSpecificOutput"]["additionalContext"]) == [f"pkg/f{N - 1}"]


def test_spec_11_3_codex_and_pi_replies_fit_their_limits(project: Path, tmp_path: Path) -> None:
    """Codex replies per call: one Bash command naming all 80 files; Pi one message a turn."""
    codex = isolated_hook("codex", tmp_path / "codex")
    files = " ".join(f"pkg/f{i:02d}/mod.py" for i in range(N))
    data = payload("codex", "post_tool_use_bash_read", project)
    data["tool_input"] = {"command": f"head -n 3 {files}"}
    reply = codex(data)
    assert reply is not None
    text = reply["hookSpecificOutput"]["additionalContext"]
    assert len(text.encode()) <= REPLY_LIMITS["codex"][1]
    assert "more not shown here" in text.splitlines()[-1]

    pi = Hook("pi", tmp_path / "pi-state")
    calls = [{"tool": "read", "input": {"path": f"pkg/f{i:02d}/mod.py"}} for i in range(N)]
    reply = pi({"event": "turn_end", "cwd": str(project), "session": "s", "calls": calls})
    assert reply is not None  # 80 lines fit Pi's 50 KB whole
    assert len(reply["message"].encode()) <= REPLY_LIMITS["pi"][1]
    assert len(delivered(reply["message"])) == N and len(reply["surfaced"]) == N


def test_spec_11_3_the_stop_reminder_fits_and_the_rest_come_next_stop(
    project: Path, tmp_path: Path
) -> None:
    """80 articles, each governing five edited files with long names: the reminder fits the
    smallest host limit; the articles it could not name are named by the next stop."""
    claude = isolated_hook("claude-code", tmp_path)
    stem = "a_rather_long_module_name_that_agents_like_to_write"
    edits = []
    for i in range(N):
        for k in range(5):
            file = project / f"pkg/f{i:02d}/{stem}_{k}.py"
            file.write_text("x = 1\n", "utf-8")
            edits.append({"tool_name": "Edit", "tool_use_id": "t", "tool_response": "ok",
                          "tool_input": {"file_path": str(file), "old_string": "x",
                                         "new_string": "y"}})  # fmt: skip
    for start in range(0, len(edits), 200):
        data = payload("claude-code", "post_tool_batch", project)
        data["tool_calls"] = edits[start : start + 200]
        claude(data)
    first = claude.run_raw(json.dumps(payload("claude-code", "stop", project))).stdout.decode()
    assert len(first) <= min(limit for _unit, limit in REPLY_LIMITS.values())
    reason = json.loads(first)["reason"]
    named = [line[2:].partition(" (")[0] for line in reason.splitlines() if "(you changed" in line]
    assert 10 < len(named) < N and f"and {N - len(named)} more" in reason
    while (later := claude(payload("claude-code", "stop", project))) is not None:
        assert len(json.dumps(later)) <= REPLY_LIMITS["claude-code"][1]
        named += [line[2:].partition(" (")[0] for line in later["reason"].splitlines()
                  if "(you changed" in line]  # fmt: skip
    assert sorted(named) == [f"pkg/f{i:02d}" for i in range(N)]  # each named once
