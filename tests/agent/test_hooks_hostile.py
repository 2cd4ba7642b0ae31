"""SPEC §12 in the hooks: a store whose .canon, articles/ or journal/ is a symbolic link leading
outside the project (a cloned repository can carry one) is refused; the hooks, which must never
break the agent's turn, stay quiet instead: nothing read through the link reaches the agent
(Claude Code, Codex and Pi hooks, real `canon hook` processes)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hookrun import Hook, make_project, payload
from test_hook_pi import call, event

LINKS = [".canon", ".canon/articles", ".canon/journal"]


def _linked_out(tmp_path: Path, link: str) -> Path:
    """The project with `link` moved outside and a symbolic link left in its place; the
    article of src/core/config (wherever articles/ now is) holds a SECRET capsule."""
    project = make_project(tmp_path / "proj")
    (project / ".canon/journal").mkdir(exist_ok=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    moved = outside / Path(link).name
    shutil.move(project / link, moved)
    (project / link).symlink_to(moved, target_is_directory=True)
    (project / ".canon/articles/src/core/config.md").write_text(
        "---\ncapsule: SECRET capsule\nupdated: 2026-01-01\n---\nSECRET body\n", "utf-8"
    )
    return project


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_hooks_surface_nothing_through_a_store_linked_outside(
    tmp_path: Path, agent: str, link: str
) -> None:
    project = _linked_out(tmp_path, link)
    hook = Hook(agent, tmp_path / "state")
    start = payload(agent, "session_start_startup", project)
    read = payload("claude-code", "post_tool_use_read", project)
    read["tool_input"] = {"file_path": str(project / "src/core/config.py")}
    if agent == "codex":
        read = payload(agent, "post_tool_use_apply_patch", project)
        read["tool_input"] = {
            "command": "*** Begin Patch\n*** Update File: src/core/config.py\n*** End Patch\n"
        }
    replies = [hook(start), hook(read), hook(payload(agent, "stop", project))]
    said = json.dumps(replies)
    assert all(r is None for r in replies), said


@pytest.mark.parametrize("link", LINKS)
def test_pi_hook_surfaces_nothing_through_a_store_linked_outside(tmp_path: Path, link: str) -> None:
    project = _linked_out(tmp_path, link)
    hook = Hook("pi", tmp_path / "state")
    start = hook(event(project, "session_start", reason="startup"))
    assert start is not None and not start.get("active"), start
    end = hook(event(project, "turn_end", calls=[call("read", path="src/core/config.py")]))
    assert "SECRET" not in json.dumps(end)


def test_odd_session_ids_keep_their_own_state(tmp_path: Path) -> None:
    """Issue 24 item 12: `.`, `..` and a missing id shared one state file, and ids cut at 120
    characters collided, so one session's surfaced capsule was withheld from another. Each id
    now has its own state (named by a hash of the whole id)."""
    from hookrun import context, isolated_hook

    claude = isolated_hook("claude-code", tmp_path)
    project = make_project(tmp_path / "proj")
    long = "s" * 130
    for session in (None, ".", "..", long + "1", long + "2", "a/b", "a_b"):
        read = payload("claude-code", "post_tool_use_read", project)
        read["session_id"] = session
        assert "Source root" in context(claude(read)), session


def test_an_article_file_linked_outside_is_not_read_by_a_hook(tmp_path: Path) -> None:
    """SPEC §4, §12: an article file whose link leads outside the articles folder still governs
    (it is there), but its capsule is never read: the agent is told to read the article instead.
    Holds the hooks' reads (now through the store's one read side, DiskReader) as they were."""
    project = make_project(tmp_path / "proj")
    secret = tmp_path / "outside.md"
    secret.write_text("---\ncapsule: SECRET capsule\nupdated: 2026-01-01\n---\nSECRET\n", "utf-8")
    config = project / ".canon/articles/src/core/config.md"
    config.unlink()
    config.symlink_to(secret)
    hook = Hook("claude-code", tmp_path / "state")
    read = payload("claude-code", "post_tool_use_read", project)
    read["tool_input"] = {"file_path": str(project / "src/core/config.py")}
    said = json.dumps(hook(read))
    assert "SECRET" not in said and "src/core/config" in said, said
