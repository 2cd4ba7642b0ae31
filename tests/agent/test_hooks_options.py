"""The hooks follow the project's options (SPEC §13, §2, §8, §11.3): `root`, `mounts`, bad files,
`surface`, `resurface`, through the real `canon hook …` with JSON on stdin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hookrun import Hook, article, context, isolated_hook, make_project, payload

from tests.agent.test_cli import canon


@pytest.fixture
def claude(tmp_path: Path) -> Hook:
    return isolated_hook("claude-code", tmp_path)


@pytest.fixture
def codex(tmp_path: Path) -> Hook:
    return isolated_hook("codex", tmp_path)


def _read(project: Path, path: Path | str) -> dict:
    data = payload("claude-code", "post_tool_use_read", project)
    data["tool_input"] = {"file_path": str(path)}
    return data


def _user_settings(tmp_path: Path, data: dict | str) -> Path:
    path = tmp_path / "config" / "canon" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_spec_2_hooks_follow_a_store_moved_with_root(tmp_path: Path, claude: Hook) -> None:
    """canon.toml `root = "memory"`: the hooks find the project by its canon.toml and resolve
    against memory/articles (no `.canon` anywhere)."""
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "src/a.py").write_text("x\n")
    (project / "canon.toml").write_text('root = "memory"\n')
    article(project, "src", "Source root, moved.", store="memory")
    sub = payload("claude-code", "post_tool_use_bash", project, cwd=str(project / "src"))
    sub["tool_input"] = {"command": "cat a.py"}
    assert "- src (governs src/a.py): Source root, moved." in context(claude(sub))
    # The article file itself, under the moved store, is an article hit (withdraws, no line).
    assert claude(_read(project, project / "memory/articles/src.md")) is None
    assert not (project / ".canon").exists()


def _trust(project: Path, tmp_path: Path) -> str:
    """`canon trust` through the real CLI, recorded in the hooks' user config."""
    run = canon("trust", cwd=project, env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert run.code == 0, run.err
    return run.out


def test_spec_2_absolute_root_outside_the_project(tmp_path: Path, claude: Hook) -> None:
    project = make_project(tmp_path / "proj")
    elsewhere = tmp_path / "shared-memory"
    (project / "canon.toml").write_text(f'root = "{elsewhere}"\n')
    article(tmp_path, "src/core/config", "Config, from the shared store.", store="shared-memory")
    _trust(project, tmp_path)
    text = context(claude(_read(project, project / "src/core/config.py")))
    assert "- src/core/config: Config, from the shared store." in text
    assert "Source root" not in text  # the default .canon store is not the store any more


def test_spec_8_hooks_surface_and_remind_for_mounted_stores(tmp_path: Path, claude: Hook) -> None:
    """canon.toml `mounts`: a file of the mount resolves to `lake:<address>` in the mount's
    own store; an edit there is reminded like any other."""
    project = make_project(tmp_path / "proj")
    lake = tmp_path / "lake"
    (lake / "prices").mkdir(parents=True)
    (lake / "prices/daily.csv").write_text("day,price\n")
    article(lake, "prices", "Daily prices, one row per day.")
    (project / "canon.toml").write_text('mounts = ["../lake"]\n')
    _trust(project, tmp_path)
    text = context(claude(_read(project, lake / "prices/daily.csv")))
    assert "- lake:prices (governs " in text and "Daily prices, one row per day." in text
    edit = payload("claude-code", "post_tool_use_edit", project)
    edit["tool_input"]["file_path"] = str(lake / "prices/daily.csv")
    assert claude(edit) is None  # already surfaced this cycle
    reason = claude(payload("claude-code", "stop", project))["reason"]  # type: ignore[index]
    assert f"- lake:prices (you changed {lake / 'prices/daily.csv'})" in reason
    # A canon read of the mount article (by its mount address) withdraws it in a new cycle.
    claude(payload("claude-code", "session_start_startup", project))
    read = payload("claude-code", "post_tool_use_mcp_canon_read", project)
    read["tool_input"] = {"action": "read", "path": "lake:prices"}
    claude(read)
    assert claude(_read(project, lake / "prices/daily.csv")) is None


def test_issue_24_untrusted_canon_toml_cannot_lead_the_hooks_elsewhere(
    tmp_path: Path, claude: Hook
) -> None:
    """A cloned repository's canon.toml pointing at another project's store and mounting a
    directory: until `canon trust`, the hooks surface from the project's own store only and
    tell the person once, at the session's start (Claude Code's systemMessage); the trace
    names the file. Trusted, the other store is followed; an edit of the file undoes that."""
    project = make_project(tmp_path / "proj")
    other = tmp_path / "other"
    article(other, "src/core/config", "PRIVATE capsule of another project.")
    lake = tmp_path / "lake"
    (lake / "prices").mkdir(parents=True)
    (lake / "prices/daily.csv").write_text("day,price\n")
    article(lake, "prices", "PRIVATE lake capsule.")
    toml = project / "canon.toml"
    toml.write_text(f'root = "{other / ".canon"}"\nmounts = ["../lake"]\n')
    start = claude(payload("claude-code", "session_start_startup", project))
    assert start is not None and "canon trust" in start["systemMessage"]
    assert str(toml) in start["systemMessage"] and "hookSpecificOutput" not in start
    for path in (project / "src/core/config.py", lake / "prices/daily.csv"):
        assert "PRIVATE" not in context(claude(_read(project, path)))
    lines = [json.loads(x) for x in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert any("canon trust" in x.get("problem", "") for x in lines)
    assert "sha256" in _trust(project, tmp_path)
    assert claude(payload("claude-code", "session_start_startup", project)) is None
    assert "PRIVATE capsule" in context(claude(_read(project, project / "src/core/config.py")))
    toml.write_text(toml.read_text() + "# changed after trusting\n")
    start = claude(payload("claude-code", "session_start_startup", project))
    assert start is not None and "canon trust" in start["systemMessage"]


@pytest.mark.parametrize(
    "text",
    ["root = \n", "standout = 0.2\nretrieval = 7\n", "mounts = ['/nonexistent/place']\n", "x=1\n"],
)
def test_spec_13_bad_canon_toml_never_breaks_the_turn(
    tmp_path: Path, claude: Hook, text: str
) -> None:
    """Defaults apply; the hook still surfaces; the trace says what is wrong, naming the file."""
    project = make_project(tmp_path / "proj")
    (project / "canon.toml").write_text(text)
    claude(payload("claude-code", "session_start_startup", project))
    assert "Source root" in context(claude(payload("claude-code", "post_tool_use_read", project)))
    lines = [json.loads(x) for x in (tmp_path / "trace.jsonl").read_text().splitlines()]
    problems = [x["problem"] for x in lines if x["decision"] == "settings"]
    assert problems and all(str(project / "canon.toml") in p for p in problems)


def test_spec_13_bad_user_settings_never_break_the_turn(tmp_path: Path, codex: Hook) -> None:
    project = make_project(tmp_path / "proj")
    _user_settings(tmp_path, "{ nope")
    codex(payload("codex", "session_start_startup", project))
    reply = codex(payload("codex", "post_tool_use_apply_patch", project))
    assert "src/core/config" in context(reply)


@pytest.mark.parametrize("where", ["project", "user"])
def test_spec_11_3_surface_false_silences_spine_and_reminder(
    tmp_path: Path, claude: Hook, where: str
) -> None:
    project = make_project(tmp_path / "proj")
    if where == "project":
        (project / "canon.toml").write_text("surface = false\n")
    else:
        _user_settings(tmp_path, {"surface": False})
    assert claude(payload("claude-code", "post_tool_use_read", project)) is None
    assert claude(payload("claude-code", "post_tool_use_edit", project)) is None
    assert claude(payload("claude-code", "stop", project)) is None


def test_spec_13_user_settings_beat_the_project_file(tmp_path: Path, claude: Hook) -> None:
    project = make_project(tmp_path / "proj")
    (project / "canon.toml").write_text("surface = false\n")
    _user_settings(tmp_path, {"surface": True})
    assert "Source root" in context(claude(payload("claude-code", "post_tool_use_read", project)))


@pytest.mark.parametrize("resurface", [True, False])
def test_spec_11_3_resurface(tmp_path: Path, claude: Hook, resurface: bool) -> None:
    """Default: a compaction starts a new cycle (the capsule comes back on the next touch).
    `resurface = false`: at most once per session, even across compactions."""
    project = make_project(tmp_path / "proj")
    (project / "canon.toml").write_text(f"resurface = {str(resurface).lower()}\n")
    assert "Source root" in context(claude(payload("claude-code", "post_tool_use_read", project)))
    claude(payload("claude-code", "session_start_compact", project))
    again = context(claude(payload("claude-code", "post_tool_use_read", project)))
    assert ("Source root" in again) is resurface
    # A new session (startup) shows it again either way: nothing persists across sessions.
    fresh = payload("claude-code", "post_tool_use_read", project, session="s-2")
    assert "Source root" in context(claude(fresh))
