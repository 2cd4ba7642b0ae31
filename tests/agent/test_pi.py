"""Real Pi (pinned from npm) with the extension `canon init pi` writes (SPEC §11.6).

Pi runs against a scripted loopback Messages API (fake_anthropic.py) with a throwaway
PI_CODING_AGENT_DIR holding `models.json` (the fake provider), `settings.json` (compaction keeps
no recent messages, so a compaction summarises everything) and `trust.json` with the project
trusted, exactly as Pi's `/trust` saves it: project extensions load only in a trusted project.
The long session runs in RPC mode (JSON commands on stdin, events on stdout), the one
non-interactive mode that can compact between prompts; the short ones use `pi -p`. The
requests the fake API receives are what reached the model.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import Block, FakeAnthropic, Recorded, text, tool_use
from hookrun import article, canon_command, make_project
from npm_agents import install, pi_command

# The first run on a fresh machine downloads Pi and its Node (~200 MB) inside the fixture.
pytestmark = [pytest.mark.agent_cli, pytest.mark.timeout(1500)]

CONFIG_CAPSULE = "Loads layered config; env beats file."
SRC_CAPSULE = "Source root, one module per concern."
BATCH_MARK = "canon project memory for the files this turn touched"
STOP_MARK = "canon: these articles govern files you changed"


@pytest.fixture(scope="session")
def pi() -> list[str]:
    return pi_command()


def pi_env(tmp_path: Path, project: Path, base_url: str, **extra: str) -> dict[str, str]:
    """HOME, Pi's agent directory (fake provider, trust) and canon's state, all throwaway."""
    agent, home = tmp_path / "pi-agent", tmp_path / "home"
    agent.mkdir(exist_ok=True)
    home.mkdir(exist_ok=True)
    provider = {"baseUrl": base_url, "api": "anthropic-messages", "apiKey": "sk-test-not-a-key",
                "models": [{"id": "fake-model", "contextWindow": 200000}]}  # fmt: skip
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": provider}}))
    (agent / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 0}}))
    (agent / "trust.json").write_text(json.dumps({str(project.resolve()): True}))
    bin_dir = str(Path(canon_command()[0]).parent) if len(canon_command()) == 1 else ""
    path = os.pathsep.join(p for p in (bin_dir, str(Path(sys.executable).parent),
                                       os.environ.get("PATH", "")) if p)  # fmt: skip
    env = {
        "PATH": path,
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent),
        "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1",
        "PI_TELEMETRY": "0",
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "CANON_TRACE": str(tmp_path / "trace.jsonl"),
        "CANON_TODAY": "2026-11-29",
    }
    env.update(extra)
    return env


def init_pi(project: Path) -> None:
    done = subprocess.run([*canon_command(), "init", "pi"], cwd=project,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "trust" in done.stdout  # the user is told why Pi may not load it yet


class Rpc:
    """`pi --mode rpc`: commands on stdin; a reader thread queues the JSON records of stdout."""

    def __init__(self, command: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [*command, "--mode", "rpc", "--provider", "fake", "--model", "fake-model"],
            cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        self.records: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.records.put(json.loads(line))

    def send(self, command: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command).encode() + b"\n")
        self.proc.stdin.flush()

    def wait_for(self, wanted: Callable[[dict[str, Any]], bool], limit: float = 120) -> dict:
        deadline = time.monotonic() + limit
        while (left := deadline - time.monotonic()) > 0:
            try:
                record = self.records.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(record)
            if wanted(record):
                return record
        raise AssertionError(f"Pi did not answer in time; last records: {self.seen[-5:]}")

    def prompt(self, message: str) -> None:
        """One prompt, run until Pi settles (no retry or continuation left)."""
        self.send({"type": "prompt", "message": message})
        self.wait_for(lambda r: r.get("type") == "agent_settled")

    def close(self) -> str:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        return self.proc.stderr.read().decode() if self.proc.stderr else ""


def canon_messages(rec: Recorded) -> list[str]:
    """The texts of the user-role messages the extension added to a request."""
    out = []
    for message in rec.body.get("messages", []):
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            body = block.get("text") if isinstance(block, dict) else None
            if isinstance(body, str) and body.startswith(("canon project memory", "canon: ")):
                out.append(body)
    return out


def test_live_pi_session_surfaces_batches_resets_and_reminds(pi: list[str], tmp_path: Path) -> None:
    """SPEC §11.6 with the real Pi: one batched message per turn, each capsule once per
    compaction cycle and again after Pi compacts, the reminder once before Pi settles, the
    native `canon` tool writing the article, `/canon` reporting what surfaced."""
    project = make_project(tmp_path / "proj")
    init_pi(project)
    config = "src/core/config.py"
    steps: list[list[Block]] = [
        # one turn, two reads: both capsules ride one message
        tool_use("read", {"path": config}, "t1") + tool_use("read", {"path": "src/a.py"}, "t2"),
        tool_use("read", {"path": config}, "t3"),  # same cycle: nothing again
        text("Read them."),
        # after /compact
        tool_use("read", {"path": config}, "t4"),
        text("Read it again."),
        tool_use(
            "edit", {"path": config, "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}, "t5"
        ),  # fmt: skip
        text("Bumped x."),
        # the reminder continues the run; the model updates the article with the canon tool
        tool_use(
            "canon",
            {"action": "write", "path": config, "capsule": "Config loader; x is now 2."},
            "t6",
        ),  # fmt: skip
        text("Updated the article."),
    ]

    def script(turn: int, rec: Recorded) -> list[Block]:
        return steps[turn] if turn < len(steps) else text("Nothing left.")

    with FakeAnthropic(script, main_tool="read") as fake:
        rpc = Rpc(pi, project, pi_env(tmp_path, project, fake.url))
        try:
            rpc.prompt("Read the config and module a.")
            rpc.send({"id": "c", "type": "compact"})
            done = rpc.wait_for(lambda r: r.get("type") == "response" and r.get("id") == "c")
            assert done["success"], done
            rpc.prompt("Look at the config again.")
            rpc.prompt("Bump x in the config.")
            rpc.send({"id": "s", "type": "prompt", "message": "/canon"})
            status = rpc.wait_for(lambda r: r.get("method") == "notify")
        finally:
            stderr = rpc.close()
        requests = fake.main_requests()
    assert len(requests) == len(steps), (stderr[-3000:], [r.flat()[-300:] for r in requests])
    tools = {t["name"] for t in requests[0].body["tools"]}
    assert {"read", "edit", "canon"} <= tools  # the tool is registered natively

    # Surfacing: nothing before a touch; both capsules in one message after the first turn.
    assert canon_messages(requests[0]) == []
    assert canon_messages(requests[1]) == [
        f"{BATCH_MARK}:\n- src/core/config: {CONFIG_CAPSULE}"
        f"\n- src (governs src/a.py): {SRC_CAPSULE}"
    ]
    assert requests[2].flat().count(CONFIG_CAPSULE) == 1  # once per cycle
    # Compaction starts a new cycle: gone from the context, then back on the next touch, once.
    assert CONFIG_CAPSULE not in requests[3].flat()
    assert requests[4].flat().count(CONFIG_CAPSULE) == 1

    # The reminder: after the edit's turn ends and the model would stop, once, naming the article.
    assert STOP_MARK not in requests[6].flat()
    assert [m for m in canon_messages(requests[7]) if m.startswith(STOP_MARK)] == [
        m for m in canon_messages(requests[-1]) if m.startswith(STOP_MARK)
    ]
    assert "- src/core/config (you changed src/core/config.py)" in requests[7].flat()
    assert requests[-1].flat().count(STOP_MARK) == 1
    article = (project / ".canon/articles/src/core/config.md").read_text()
    assert "Config loader; x is now 2." in article  # written by the native canon tool
    assert (project / config).read_text() == "x = 2\n"

    decisions = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert [d["decision"] for d in decisions].count("remind") == 1
    assert [d["governing"] for d in decisions if d["decision"] == "written"] == ["src/core/config"]
    assert [d["source"] for d in decisions if d["decision"] == "cycle"] == ["startup"]
    # Pi's compaction is judged by presence: the summary dropped both lines
    assert [d["decision"] for d in decisions].count("compacted") == 1
    departed = [d["governing"] for d in decisions if d["decision"] == "departed"]
    assert departed == ["src/core/config", "src"]
    assert "Surfaced in this session (2): src/core/config, src" in status["message"]


def run_print(pi: list[str], project: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*pi, "-p", "--provider", "fake", "--model", "fake-model", "Read the config."],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def read_then_stop(turn: int, rec: Recorded) -> list[Block]:
    if turn == 0:
        return tool_use("read", {"path": "src/core/config.py"}, "t1")
    return text("Read it.")


def test_remember_prompt_is_journaled_once_before_the_model_answers(
    pi: list[str], tmp_path: Path
) -> None:
    """SPEC §11.5 with the real Pi: a `remember:` prompt lands exactly one journal entry,
    verbatim, marked as Pi's, naming the file; the model's first request already carries the
    one line saying so. Without the extension (or the capture) there is no entry."""
    project = make_project(tmp_path / "proj")
    init_pi(project)
    note = "remember: src/core/config.py reads env last, so env wins"
    with FakeAnthropic(lambda turn, rec: text("Noted."), main_tool="read") as fake:
        run = subprocess.run(
            [*pi, "-p", "--provider", "fake", "--model", "fake-model", note],
            cwd=project, env=pi_env(tmp_path, project, fake.url), capture_output=True,
            text=True, timeout=300, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        requests = fake.main_requests()
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    [entry] = sorted((project / ".canon" / "journal").glob("*.md"))
    text_ = entry.read_text("utf-8")
    assert text_.endswith("---\nsrc/core/config.py reads env last, so env wins\n")
    assert "harness: pi\n" in text_ and "subject: [src/core/config]\n" in text_
    [said] = canon_messages(requests[0])
    assert said == (
        f"canon: the user's note above was journaled verbatim as journal/{entry.name}; "
        "it is recorded, do not record it again."
    )
    assert requests[0].flat().count(note) == 1  # the prompt itself still reaches the model


@pytest.mark.parametrize("command", ["steer", "follow_up"])
def test_remember_sent_while_pi_works_is_journaled_once(
    pi: list[str], tmp_path: Path, command: str
) -> None:
    """SPEC §11.5 with the real Pi: a `remember:` message queued while Pi runs a tool (a
    steering or follow-up message, which starts no new run) lands exactly one journal entry,
    and the request that delivers it carries the one line saying so, right after the note
    (in the same message: Pi delivers one queued message per request)."""
    project = make_project(tmp_path / "proj")
    init_pi(project)
    gate = tmp_path / "gate"  # the tool runs until the test opens the gate
    wait = f"for i in $(seq 1200); do [ -e '{gate}' ] && break; sleep 0.05; done"
    note = "remember: src/core/config.py reads env last, so env wins"

    def script(turn: int, rec: Recorded) -> list[Block]:
        return tool_use("bash", {"command": wait}, "t1") if turn == 0 else text("Noted.")

    with FakeAnthropic(script, main_tool="read") as fake:
        rpc = Rpc(pi, project, pi_env(tmp_path, project, fake.url))
        try:
            rpc.send({"type": "prompt", "message": "Wait for the gate."})
            rpc.wait_for(lambda r: r.get("type") == "tool_execution_start")
            rpc.send({"id": "n", "type": command, "message": note})
            done = rpc.wait_for(lambda r: r.get("type") == "response" and r.get("id") == "n")
            assert done["success"] and done["data"]["disposition"] == "queued", done
            gate.touch()
            rpc.wait_for(lambda r: r.get("type") == "agent_settled")
        finally:
            gate.touch()
            stderr = rpc.close()
        requests = fake.main_requests()
    [entry] = sorted((project / ".canon" / "journal").glob("*.md"))
    text_ = entry.read_text("utf-8")
    assert text_.endswith("---\nsrc/core/config.py reads env last, so env wins\n")
    assert "harness: pi\n" in text_ and "subject: [src/core/config]\n" in text_
    said = (
        f"canon: the user's note above was journaled verbatim as journal/{entry.name}; "
        "it is recorded, do not record it again."
    )
    delivered = [r for r in requests if note in r.flat()]
    assert delivered, (stderr[-3000:], [r.flat()[-300:] for r in requests])
    assert delivered[0].flat().count(note) == 1
    assert f"{note}\n\n{said}" in user_texts(delivered[0])
    captured = [d for d in decisions_of(tmp_path) if d["decision"] == "captured"]
    assert len(captured) == 1 and "repeat" not in captured[0]  # one bridge call, not two


def user_texts(rec: Recorded) -> list[str]:
    """The text blocks of the user-role messages of a request."""
    out = []
    for message in rec.body.get("messages", []):
        content = message.get("content") if message.get("role") == "user" else []
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        out += [b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return out


def decisions_of(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (tmp_path / "trace.jsonl").read_text().splitlines()]


def test_lane_brings_a_rule_once_when_the_words_call_for_it(pi: list[str], tmp_path: Path) -> None:
    """SPEC §11.4/§11.6 with the real Pi and `retrieval = "lexical"`: a prompt about money
    rounding brings the `scope: rule` article (no file leads to it) into the model's next
    request, once, and a second prompt on the same subject does not send it again."""
    project = make_project(tmp_path / "proj")
    (project / "canon.toml").write_text('retrieval = "lexical"\n')
    rule = "Round money half-even to cents, only at the final step."
    article(project, "conventions/money-rounding", rule,
            "Money rounding: round the invoice total once; never round intermediate sums.",
            scope="rule")  # fmt: skip
    for topic in ("logging", "errors", "naming", "tests"):
        article(project, f"notes/{topic}", f"How we do {topic}.", f"Our {topic} practice.")
    init_pi(project)
    with FakeAnthropic(lambda turn, rec: text("Will do."), main_tool="read") as fake:
        rpc = Rpc(pi, project, pi_env(tmp_path, project, fake.url))
        try:
            rpc.prompt("How should the invoice total handle money rounding?")
            rpc.prompt("And money rounding for refunds, the invoice total again?")
        finally:
            stderr = rpc.close()
        requests = fake.main_requests()
    assert len(requests) == 2, stderr[-3000:]
    line = f"- conventions/money-rounding: {rule}"
    assert canon_messages(requests[0]) == [
        f"canon project memory ranked for this task (no file you touched leads to these):\n{line}"
    ]
    assert requests[1].flat().count(rule) == 1  # still in the context, never sent again


FOLD = """\
import { existsSync } from "node:fs";
import { join } from "node:path";

// Folds the first canon message out of every request once `fold-now` exists (a stand-in for
// any extension that shortens the projection).
export default function (pi: any) {
  pi.on("context", async (event: any, ctx: any) => {
    if (!existsSync(join(ctx.cwd, "fold-now"))) return;
    const ours = (m: any) => JSON.stringify(m).includes("canon project memory");
    const first = event.messages.findIndex(ours);
    if (first >= 0) return { messages: event.messages.filter((_: any, i: number) => i !== first) };
  });
}
"""


def test_a_line_folded_out_of_the_projection_surfaces_again(pi: list[str], tmp_path: Path) -> None:
    """SPEC §11.6 with the real Pi: presence is judged on what the provider receives. Another
    extension folds the capsule's message out of the requests; the next read of the config
    brings the capsule back, once (the compaction cycle alone would never resend it)."""
    project = make_project(tmp_path / "proj")
    init_pi(project)
    (project / ".pi/extensions/fold.ts").write_text(FOLD)
    read = "src/core/config.py"

    def script(turn: int, rec: Recorded) -> list[Block]:
        if turn == 1:
            (project / "fold-now").touch()  # from the next request on
        return tool_use("read", {"path": read}, f"t{turn}") if turn < 3 else text("Read it.")

    with FakeAnthropic(script, main_tool="read") as fake:
        run = run_print(pi, project, pi_env(tmp_path, project, fake.url))
        requests = fake.main_requests()
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert len(requests) == 4
    assert requests[1].flat().count(CONFIG_CAPSULE) == 1  # surfaced after the first read
    assert CONFIG_CAPSULE not in requests[2].flat()  # folded away
    assert requests[3].flat().count(CONFIG_CAPSULE) == 1  # the next read brought it back
    departed = [d for d in decisions_of(tmp_path) if d["decision"] == "departed"]
    assert [d["governing"] for d in departed] == ["src/core/config"]


def test_missing_canon_warns_once_and_pi_carries_on(pi: list[str], tmp_path: Path) -> None:
    """SPEC §11.6: a canon that cannot run never breaks the Pi session: one warning, then
    silence, and the agent's turn completes."""
    project = make_project(tmp_path / "proj")
    init_pi(project)
    with FakeAnthropic(read_then_stop, main_tool="read") as fake:
        env = pi_env(tmp_path, project, fake.url, CANON_BIN=str(tmp_path / "no-such-canon"))
        run = run_print(pi, project, env)
        requests = fake.main_requests()
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "Read it." in run.stdout
    assert len(requests) == 2 and CONFIG_CAPSULE not in requests[1].flat()
    assert run.stderr.count("canon: ") == 1, run.stderr


def test_a_repository_shipped_canon_never_runs(pi: list[str], tmp_path: Path) -> None:
    """Issue 24 item 9: with an empty and relative entries on PATH (``, `.`, `node_modules/.bin`),
    the bridge must not run the `canon` a cloned repository ships in its tree: those entries are
    skipped, as the VS Code extension skips them, and the real canon answers."""
    project = make_project(tmp_path / "proj")
    init_pi(project)
    ran = tmp_path / "repo-canon-ran"
    for where in (project, project / "node_modules/.bin"):
        where.mkdir(parents=True, exist_ok=True)
        (where / "canon").write_text(f"#!/bin/sh\ntouch '{ran}'\nexit 1\n")
        (where / "canon").chmod(0o755)
    with FakeAnthropic(read_then_stop, main_tool="read") as fake:
        env = pi_env(tmp_path, project, fake.url)
        env["PATH"] = os.pathsep.join(["", ".", "node_modules/.bin", env["PATH"]])
        run = run_print(pi, project, env)
        requests = fake.main_requests()
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert not ran.exists(), "the repository's own canon ran"
    assert CONFIG_CAPSULE in requests[1].flat() and "canon: " not in run.stderr


def test_project_without_store_gets_nothing_but_the_tool(pi: list[str], tmp_path: Path) -> None:
    """SPEC §11.6: in a project without a store the extension surfaces nothing, keeps no
    state and creates no store; the canon tool is there for the first write."""
    project = tmp_path / "bare"
    (project / "src").mkdir(parents=True)
    (project / "src/core.py").write_text("x = 1\n")
    init_pi(project)
    shutil.rmtree(project / ".canon")  # `canon init pi` created it; a clone may carry none

    def script(turn: int, rec: Recorded) -> list[Block]:
        return tool_use("read", {"path": "src/core.py"}, "t1") if turn == 0 else text("Read it.")

    with FakeAnthropic(script, main_tool="read") as fake:
        run = run_print(pi, project, pi_env(tmp_path, project, fake.url))
        requests = fake.main_requests()
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert len(requests) == 2
    assert "canon" in {t["name"] for t in requests[0].body["tools"]}
    assert canon_messages(requests[1]) == []
    assert not (project / ".canon").exists()
    assert not (tmp_path / "state").exists() and not (tmp_path / "trace.jsonl").exists()


def test_continue_keeps_the_cycle_and_a_new_session_starts_one(
    pi: list[str], tmp_path: Path
) -> None:
    """SPEC §11.3/§11.6: `pi --continue` resumes the stored session with its context, so the
    capsule is not sent again; a fresh session gets it afresh."""
    project = make_project(tmp_path / "proj")
    init_pi(project)

    def script(turn: int, rec: Recorded) -> list[Block]:
        if turn % 2 == 0:
            return tool_use("read", {"path": "src/core/config.py"}, f"t{turn}")
        return text("Read it.")

    with FakeAnthropic(script, main_tool="read") as fake:
        env = pi_env(tmp_path, project, fake.url)
        for extra in ([], ["--continue"], []):
            run = subprocess.run(
                [*pi, "-p", *extra, "--provider", "fake", "--model", "fake-model", "Read it."],
                cwd=project, env=env, capture_output=True, text=True, timeout=300,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
            assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        requests = fake.main_requests()
    assert len(requests) == 6
    assert requests[1].flat().count(CONFIG_CAPSULE) == 1  # first session: shown
    assert requests[2].flat().count(CONFIG_CAPSULE) == 1  # continued: the old context holds it
    assert requests[3].flat().count(CONFIG_CAPSULE) == 1  # … and it is not sent again
    assert CONFIG_CAPSULE not in requests[4].flat()
    assert requests[5].flat().count(CONFIG_CAPSULE) == 1  # new session: shown afresh


def test_extension_type_checks_against_pi_s_own_types(pi: list[str]) -> None:
    """The shipped extension compiles under `tsc --strict` against the pinned Pi's published
    types (Pi loads it with jiti, which checks no types: an API drift would surface only at
    run time)."""
    from importlib.resources import files

    tsc = install("typescript", "5.9.3", "typescript/bin/tsc")
    prefix = Path(pi[1]).parents[4].parent  # the Pi install: node_modules resolves from here
    work = Path(tempfile.mkdtemp(prefix="canon-typecheck-", dir=prefix))
    try:
        source = files("canon_ls.agent").joinpath("pi_extension/index.ts").read_text("utf-8")
        (work / "index.ts").write_text(source, "utf-8")
        done = subprocess.run(
            [pi[0], str(tsc), "--noEmit", "--strict", "--skipLibCheck", "--module", "nodenext",
             "--moduleResolution", "nodenext", "--target", "es2022", "--types", "node",
             "index.ts"],
            cwd=work, capture_output=True, text=True, timeout=300,  # @types resolve from here
        )  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert done.returncode == 0, done.stdout + done.stderr
