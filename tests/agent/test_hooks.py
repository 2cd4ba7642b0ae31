"""`canon hook claude-code|codex` end to end: recorded payloads into the real CLI, real stores.

Payload shapes under payloads/ were captured from Claude Code 2.1.332 (`claude -p` against a
loopback Messages API) and, for Codex 0.171.0, taken from the JSON schemas in its binary
(research notes §2.2). Every test runs `canon hook …` as a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hookrun import PAYLOADS, Hook, article, canon_command, context, make_project, payload

ALL_PAYLOADS = sorted(
    (p.parent.name, p.stem) for p in PAYLOADS.glob("*/*.json") if p.parent.name != "."
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


@pytest.fixture
def claude(tmp_path: Path) -> Hook:
    return Hook("claude-code", tmp_path / "state", tmp_path / "trace.jsonl")


@pytest.fixture
def codex(tmp_path: Path) -> Hook:
    return Hook("codex", tmp_path / "state", tmp_path / "trace.jsonl")


@pytest.mark.parametrize(("agent", "name"), ALL_PAYLOADS)
def test_every_recorded_payload_keeps_the_hook_contract(
    tmp_path: Path, project: Path, agent: str, name: str
) -> None:
    """SPEC §11.3: each event of both agents exits 0 with nothing or a well-formed reply."""
    hook = Hook(agent, tmp_path / "state")
    reply = hook(payload(agent, name, project))
    event = payload(agent, name, project)["hook_event_name"]
    if reply is None:
        return
    if event in ("PostToolUse", "PostToolBatch"):
        assert set(reply) == {"hookSpecificOutput"}
        assert reply["hookSpecificOutput"]["hookEventName"] == event
        assert reply["hookSpecificOutput"]["additionalContext"]
    elif event == "Stop":
        assert reply.keys() == {"decision", "reason"}  # Codex: no hookSpecificOutput on Stop
        assert reply["decision"] == "block" and reply["reason"]
    else:
        pytest.fail(f"{event} must print nothing, got {reply}")


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact"])
def test_session_start_surfaces_nothing(tmp_path: Path, project: Path, agent: str, source: str):
    """SPEC §11.3: nothing is replayed or surfaced by the session event itself."""
    assert (
        Hook(agent, tmp_path / "state")(payload(agent, f"session_start_{source}", project)) is None
    )


def test_pre_tool_use_does_nothing(claude: Hook, codex: Hook, project: Path) -> None:
    """PreToolUse is a no-op (docs/AGENTS.md): surfacing waits for the result (SPEC §11.3)."""
    assert claude(payload("claude-code", "pre_tool_use_read", project)) is None
    assert codex(payload("codex", "pre_tool_use_apply_patch", project)) is None
    # The slot was not spent: the PostToolUse still surfaces.
    assert "Source root" in context(claude(payload("claude-code", "post_tool_use_read", project)))


def test_read_surfaces_the_ancestor_capsule_once_per_cycle(claude: Hook, project: Path) -> None:
    """SPEC §11.3 + §4: `src` governs src/a.py; at most once per compaction cycle."""
    claude(payload("claude-code", "session_start_startup", project))
    first = context(claude(payload("claude-code", "post_tool_use_read", project)))
    assert "- src (governs src/a.py): Source root, one module per concern." in first
    assert claude(payload("claude-code", "post_tool_use_read", project)) is None
    assert claude(payload("claude-code", "post_tool_use_edit", project)) is None
    claude(payload("claude-code", "session_start_resume", project))
    assert claude(payload("claude-code", "post_tool_use_read", project)) is None


@pytest.mark.parametrize("source", ["startup", "clear", "compact"])
def test_new_cycle_surfaces_again(claude: Hook, project: Path, source: str) -> None:
    """SPEC §11.3: session start, clear and compaction drop the touched state."""
    assert context(claude(payload("claude-code", "post_tool_use_read", project)))
    claude(payload("claude-code", f"session_start_{source}", project))
    assert "Source root" in context(claude(payload("claude-code", "post_tool_use_read", project)))


def test_exact_article_and_pointer_without_capsule(claude: Hook, project: Path) -> None:
    """SPEC §11.3: a pointer naming the address when the article has no capsule."""
    data = payload("claude-code", "post_tool_use_read", project)
    data["tool_input"] = {"file_path": str(project / "src/core/config.py")}
    assert "- src/core/config: Loads layered config; env beats file." in context(claude(data))
    data["tool_input"] = {"file_path": str(project / "docs/guide.md")}
    text = context(claude(data))
    assert "- docs/guide: article without a capsule" in text
    assert 'action "read", path "docs/guide"' in text


def test_ungoverned_and_outside_paths_surface_nothing(claude: Hook, project: Path) -> None:
    """Only tokens inside the project that exist (or whose parent exists) resolve."""
    data = payload("claude-code", "post_tool_use_read", project)
    for path in ("/etc/passwd", str(project / "README.md"), str(project / "nope/deeper/x.py")):
        data["tool_input"] = {"file_path": path}
        assert claude(data) is None


@pytest.mark.parametrize(
    ("agent", "name"),
    [
        ("claude-code", "post_tool_use_mcp_canon_read"),
        ("claude-code", "post_tool_use_plugin_canon_read"),
    ],
)
def test_canon_read_withdraws_the_article(
    tmp_path: Path, project: Path, agent: str, name: str
) -> None:
    """SPEC §11.3: reading an article through the tool withdraws its pending line."""
    hook = Hook(agent, tmp_path / "state")
    assert hook(payload(agent, name, project)) is None
    assert hook(payload(agent, "post_tool_use_read", project)) is None


def test_codex_canon_read_withdraws(codex: Hook, project: Path) -> None:
    """SPEC §11.3 for Codex (`mcp__canon__canon`): the patch then surfaces nothing."""
    assert codex(payload("codex", "post_tool_use_mcp_canon_read", project)) is None
    assert codex(payload("codex", "post_tool_use_apply_patch", project)) is None


def test_reading_the_asset_does_not_withdraw(claude: Hook, project: Path) -> None:
    """SPEC §11.3: reading the asset file is what surfaces, not what withdraws."""
    assert "Source root" in context(claude(payload("claude-code", "post_tool_use_read", project)))


def test_stop_reminds_once_after_an_edit(claude: Hook, project: Path) -> None:
    """SPEC §11.3: after a successful edit of a governed asset, block once, naming the article."""
    claude(payload("claude-code", "post_tool_use_edit", project))
    reply = claude(payload("claude-code", "stop", project))
    assert reply and reply["decision"] == "block"
    assert "- src (you changed src/a.py)" in reply["reason"]
    assert claude(payload("claude-code", "stop", project)) is None


def test_stop_hook_active_never_blocks(claude: Hook, project: Path) -> None:
    """SPEC §11.3: `stop_hook_active` prevents loops."""
    claude(payload("claude-code", "post_tool_use_edit", project))
    assert claude(payload("claude-code", "stop_active", project)) is None


def test_read_only_session_stops_quietly(claude: Hook, project: Path) -> None:
    """SPEC §11.3: read-only sessions exit quietly."""
    claude(payload("claude-code", "post_tool_use_read", project))
    claude(payload("claude-code", "post_tool_use_mcp_canon_read", project))
    assert claude(payload("claude-code", "stop", project)) is None


def test_write_through_the_tool_settles_the_reminder(claude: Hook, project: Path) -> None:
    """SPEC §11.3: no reminder when the article was written since the edit (MCP write).

    The recorded call wrote `src/a.py`, i.e. created the nearer article `src/a` (the MCP
    server's effect is reproduced on disk), which now governs the edited asset."""
    claude(payload("claude-code", "post_tool_use_edit", project))
    article(project, "src/a", "hi")
    claude(payload("claude-code", "post_tool_use_mcp_canon_write", project))
    assert claude(payload("claude-code", "stop", project)) is None


def test_tool_write_of_the_governing_address_settles(claude: Hook, project: Path) -> None:
    """A write whose path is the governing address settles even if nothing changed on disk."""
    claude(payload("claude-code", "post_tool_use_edit", project))
    data = payload("claude-code", "post_tool_use_mcp_canon_write", project)
    data["tool_input"] = {"action": "write", "path": "src", "capsule": "Source root."}
    claude(data)
    assert claude(payload("claude-code", "stop", project)) is None


def test_refused_tool_write_does_not_settle(claude: Hook, project: Path) -> None:
    claude(payload("claude-code", "post_tool_use_edit", project))
    data = payload("claude-code", "post_tool_use_mcp_canon_write", project)
    data["tool_input"] = {"action": "write", "path": "src", "capsule": "x"}
    data["tool_response"] = [{"type": "text", "text": "Refused by schema: capsule is required."}]
    claude(data)
    assert claude(payload("claude-code", "stop", project))


def test_article_written_by_hand_settles_the_reminder(claude: Hook, project: Path) -> None:
    """SPEC §11.3 'unless it was written since': any write route counts (mtime check)."""
    claude(payload("claude-code", "post_tool_use_edit", project))
    path = article(project, "src", "Source root, revised.")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert claude(payload("claude-code", "stop", project)) is None


def test_a_same_tick_rewrite_settles_the_reminder(claude: Hook, project: Path) -> None:
    """SPEC §11.3 'written since', decided by core's one stat key (core/storage/freshness.py): an
    atomic rewrite that keeps the size and the mtime (same clock tick) still counts."""
    path = project / ".canon/articles/src.md"
    claude(payload("claude-code", "post_tool_use_edit", project))
    before = path.stat()
    text = path.read_text("utf-8")
    fresh = path.with_name("src.md.new")
    fresh.write_text(text.replace("e", "E", 1) if "e" in text else text + "")
    os.utime(fresh, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(fresh, path)
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert claude(payload("claude-code", "stop", project)) is None


def test_edit_of_the_article_file_settles_the_reminder(claude: Hook, project: Path) -> None:
    """Editing `.canon/articles/src.md` with the agent's own Edit tool counts as a write."""
    claude(payload("claude-code", "post_tool_use_edit", project))
    data = payload("claude-code", "post_tool_use_edit", project)
    data["tool_input"]["file_path"] = str(project / ".canon/articles/src.md")
    assert claude(data) is None
    assert claude(payload("claude-code", "stop", project)) is None


def test_new_file_under_a_governed_folder_is_remembered(claude: Hook, project: Path) -> None:
    """Write of a new file (parent exists) and `mv` through Bash both name governed assets."""
    assert "Source root" in context(claude(payload("claude-code", "post_tool_use_write", project)))
    claude(payload("claude-code", "post_tool_use_bash", project))
    reason = claude(payload("claude-code", "stop", project))["reason"]  # type: ignore[index]
    assert "- src (you changed src/b.py, src/c.py)" in reason


def test_codex_apply_patch_surfaces_and_reminds(codex: Hook, project: Path) -> None:
    """SPEC §11.3 for Codex: apply_patch headers name the assets; Stop blocks without
    hookSpecificOutput."""
    codex(payload("codex", "session_start_startup", project))
    text = context(codex(payload("codex", "post_tool_use_apply_patch", project)))
    assert "- src/core/config: Loads layered config; env beats file." in text
    reply = codex(payload("codex", "stop", project))
    assert reply == {"decision": "block", "reason": reply["reason"]} if reply else False
    assert "src/core/config (you changed src/core/config.py)" in reply["reason"]
    assert codex(payload("codex", "stop", project)) is None


def test_codex_shell_read_surfaces_but_does_not_remind(codex: Hook, project: Path) -> None:
    assert "src/core/config" in context(codex(payload("codex", "post_tool_use_bash_read", project)))
    assert codex(payload("codex", "stop", project)) is None


def test_codex_mutating_shell_reminds(codex: Hook, project: Path) -> None:
    """A recognised mutating shell command (`sed -i`) counts as a write (SPEC §11.3)."""
    codex(payload("codex", "post_tool_use_bash_mutating", project))
    assert "src/core/config" in codex(payload("codex", "stop", project))["reason"]  # type: ignore[index]


def test_codex_write_through_the_tool_settles(codex: Hook, project: Path) -> None:
    codex(payload("codex", "post_tool_use_apply_patch", project))
    codex(payload("codex", "post_tool_use_mcp_canon_write", project))
    assert codex(payload("codex", "stop", project)) is None


def test_canon_cli_through_the_shell_counts_like_the_tool(claude: Hook, project: Path) -> None:
    """`canon read PATH` in Bash withdraws; `canon write PATH …` settles a reminder."""
    data = payload("claude-code", "post_tool_use_bash", project)
    data["tool_input"] = {"command": "canon read src/core/config.py"}
    assert claude(data) is None
    edit = payload("claude-code", "post_tool_use_edit", project)
    edit["tool_input"]["file_path"] = str(project / "src/core/config.py")
    claude(edit)
    data["tool_input"] = {"command": "canon write src/core/config.py --capsule 'New.'"}
    claude(data)
    assert claude(payload("claude-code", "stop", project)) is None


def test_failed_mutation_is_not_remembered(claude: Hook, codex: Hook, project: Path) -> None:
    """Only a successful mutating call is remembered (SPEC §11.3)."""
    data = payload("claude-code", "post_tool_use_bash", project)
    data["tool_response"]["interrupted"] = True
    claude(data)
    assert claude(payload("claude-code", "stop", project)) is None
    data = payload("codex", "post_tool_use_apply_patch", project)
    data["tool_response"] = "Exit code: 1\nWall time: 0 seconds\nOutput:\nerror: no such file\n"
    codex(data)
    assert codex(payload("codex", "stop", project)) is None


def test_no_store_no_output_nothing_created(tmp_path: Path) -> None:
    """SPEC §11.3 / §2: without `.canon/articles` the hooks do nothing and create nothing."""
    bare = tmp_path / "bare"
    (bare / "src").mkdir(parents=True)
    (bare / "src/a.py").write_text("x\n")
    hook = Hook("claude-code", tmp_path / "state", tmp_path / "trace.jsonl")
    for name in ("session_start_startup", "post_tool_use_read", "post_tool_use_edit", "stop"):
        assert hook(payload("claude-code", name, bare)) is None
    assert not (bare / ".canon").exists()
    assert not (tmp_path / "state").exists()
    assert not (tmp_path / "trace.jsonl").exists()


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
@pytest.mark.parametrize(
    "stdin",
    [
        "",
        "   \n",
        "{not json",
        "[1, 2]",
        "null",
        '{"hook_event_name": "Nope"}',
        '{"hook_event_name": "PostToolUse"}',
        '{"hook_event_name": "PostToolUse", "tool_name": 3, "tool_input": "x", "cwd": 5}',
        '{"hook_event_name": "Stop", "cwd": "/nonexistent/dir"}',
        b"\xff\xfe\x00garbage",
    ],
)
def test_bad_input_exits_zero_silently(tmp_path: Path, agent: str, stdin: str | bytes) -> None:
    """SPEC §11.3: empty stdin, invalid JSON, unknown events never break the agent."""
    done = Hook(agent, tmp_path / "state").run_raw(stdin, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, b"")


def test_odd_tool_inputs_exit_zero(claude: Hook, project: Path) -> None:
    """Odd tool inputs never break the hook (it exits 0, see Hook), and each gets the reply
    its paths call for: the argv form names src/a.py and surfaces its article once; the
    others name no file (or only the one already shown this session) and say nothing."""
    data = payload("claude-code", "post_tool_use_bash", project)
    surfaced = "- src (governs src/a.py): Source root, one module per concern."
    for tool_input, says in (
        ({"command": "echo 'unbalanced"}, None),
        ({"command": ["bash", "-lc", "cat src/a.py"]}, surfaced),
        ({"command": "x" * 100_000}, None),
        ({"nested": {"deep": [[["src/a.py"]]]}}, None),
        (None, None),
    ):
        data["tool_input"] = tool_input
        reply = claude(data)
        if says is None:
            assert reply is None, (tool_input, reply)
        else:
            assert reply is not None, tool_input
            assert says in reply["hookSpecificOutput"]["additionalContext"], reply


def test_unknown_agent_is_a_sentence(tmp_path: Path) -> None:
    done = Hook("vim", tmp_path / "state").run_raw("{}")
    assert done.returncode != 0 and done.stdout == b""
    assert b"vim" in done.stderr


def test_trace_records_each_decision(claude: Hook, project: Path, tmp_path: Path) -> None:
    """SPEC §11.3: CANON_TRACE=<file> appends one JSON line per surfacing decision."""
    claude(payload("claude-code", "session_start_startup", project))
    claude(payload("claude-code", "post_tool_use_read", project))
    claude(payload("claude-code", "post_tool_use_read", project))
    claude(payload("claude-code", "post_tool_use_edit", project))
    claude(payload("claude-code", "stop", project))
    lines = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert [line["decision"] for line in lines] == [
        "cycle",
        "surfaced",
        "already",
        "already",
        "remind",
    ]
    assert lines[1]["governing"] == "src" and lines[1]["session"] == "s-1"


def test_state_lives_under_xdg_state_home(claude: Hook, project: Path, tmp_path: Path) -> None:
    """State is per session under $XDG_STATE_HOME/canon, never inside the store."""
    before = sorted(p.relative_to(project) for p in (project / ".canon").rglob("*"))
    claude(payload("claude-code", "post_tool_use_edit", project, session="abc/../x"))
    files = sorted(p.name for p in (tmp_path / "state" / "canon").iterdir())
    assert any(f.endswith(".json") for f in files) and all("/" not in f for f in files)
    assert sorted(p.relative_to(project) for p in (project / ".canon").rglob("*")) == before


def test_sessions_are_independent(claude: Hook, project: Path) -> None:
    assert context(claude(payload("claude-code", "post_tool_use_read", project, session="one")))
    assert context(claude(payload("claude-code", "post_tool_use_read", project, session="two")))


def test_concurrent_hook_processes_surface_each_article_once(
    claude: Hook, project: Path, tmp_path: Path
) -> None:
    """Hook processes of one session running at once (parallel tool calls) share the state."""
    files = [f"src/m{i}.py" for i in range(6)] + [
        f"src/core/config{'' if i == 0 else i}.py" for i in range(1)
    ]
    for rel in files:
        (project / rel).write_text("y\n")

    def run(rel: str) -> str:
        data = payload("claude-code", "post_tool_use_edit", project)
        data["tool_input"]["file_path"] = str(project / rel)
        return context(claude(data))

    with ThreadPoolExecutor(max_workers=len(files)) as pool:
        texts = list(pool.map(run, files * 2))
    assert sum(t.count("- src (governs") for t in texts) == 1
    assert sum(t.count("- src/core/config:") for t in texts) == 1
    state = next((tmp_path / "state" / "canon").glob("*.json"))
    data = json.loads(state.read_text())
    assert sorted(data["pending"]) == ["src", "src/core/config"]
    assert len(data["pending"]["src"]["assets"]) == 6


def test_hook_path_imports_neither_pygls_nor_mcp(project: Path, tmp_path: Path) -> None:
    """The hook runs per tool call: the CLI path must not import pygls or the MCP SDK."""
    probe = (
        "import sys, json\n"
        "from canon_ls.agent.cli import main\n"
        "sys.argv = ['canon', 'hook', 'claude-code']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = ('pygls', 'mcp', 'lsprotocol')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in heavy)\n"
        "sys.stderr.write(json.dumps(bad))\n"
    )
    data = payload("claude-code", "post_tool_use_read", project)
    env = Hook("claude-code", tmp_path / "state").env()
    done = subprocess.run(
        [sys.executable, "-c", probe],
        input=json.dumps(data).encode(),
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert b"Source root" in done.stdout
    assert json.loads(done.stderr.decode().strip().splitlines()[-1]) == []


def test_canon_command_is_the_installed_script() -> None:
    assert canon_command()


def test_old_session_state_is_pruned_at_startup(claude: Hook, project: Path, tmp_path: Path):
    """Session files do not pile up: a startup deletes state untouched for two weeks."""
    claude(payload("claude-code", "post_tool_use_read", project, session="old"))
    folder = tmp_path / "state" / "canon"
    old = list(folder.iterdir())
    for path in old:
        os.utime(path, (1_000_000_000, 1_000_000_000))
    claude(payload("claude-code", "session_start_startup", project, session="new"))
    names = sorted(p.name for p in folder.iterdir())
    assert all("old" not in n for n in names) and any("new" in n for n in names)


def test_paths_in_long_prose_are_not_crowded_out(claude: Hook, project: Path) -> None:
    """A path after many ordinary words (a subagent prompt, say) still resolves."""
    data = payload("claude-code", "post_tool_use_read", project)
    data["tool_name"] = "Agent"
    words = " ".join(f"word{i}" for i in range(500))
    data["tool_input"] = {"prompt": f"{words} then look at src/core/config.py please"}
    assert "src/core/config" in context(claude(data))


def test_subagent_context_is_separate(claude: Hook, project: Path) -> None:
    """A subagent's calls (`agent_id`) surface into its own context; the main agent still
    gets the capsule, and the subagent's edits still count for the session's Stop."""
    sub = payload("claude-code", "post_tool_use_edit", project, agent_id="a-1", agent_type="x")
    assert "Source root" in context(claude(sub))
    assert claude(sub) is None
    assert "Source root" in context(claude(payload("claude-code", "post_tool_use_read", project)))
    assert (
        "- src (you changed src/a.py)" in claude(payload("claude-code", "stop", project))["reason"]
    )


def test_relative_paths_follow_the_event_cwd(claude: Hook, project: Path) -> None:
    """A shell in a subdirectory: its relative paths resolve from the event's `cwd`, and the
    project is the nearest ancestor holding `.canon/` (SPEC §2)."""
    data = payload("claude-code", "post_tool_use_bash", project, cwd=str(project / "src"))
    data["tool_input"] = {"command": "head -n 3 core/config.py"}
    assert "- src/core/config: Loads layered config" in context(claude(data))


def test_unwritable_state_never_breaks_the_agent(tmp_path: Path, project: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    done = Hook("claude-code", blocker).run_raw(
        json.dumps(payload("claude-code", "post_tool_use_read", project))
    )
    assert (done.returncode, done.stdout) == (0, b"")
