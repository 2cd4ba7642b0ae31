"""Quick capture (SPEC §11.5) through the real `canon hook claude-code|codex|pi` entry: a prompt
that starts with `remember:` / `note:` / `记住：` is journaled as received before the model
answers, with one line in the reply; anything else is an ordinary prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hookrun import Hook, make_project, payload

LINE = "canon: the user's note above was journaled verbatim as journal/"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


def _hook(tmp_path: Path, agent: str) -> Hook:
    return Hook(agent, tmp_path / "state", tmp_path / "trace.jsonl", tmp_path / "config")


def _entries(project: Path) -> list[Path]:
    folder = project / ".canon" / "journal"
    return sorted(folder.glob("*.md")) if folder.is_dir() else []


def _prompt(agent: str, project: Path, prompt: str, session: str = "s-1") -> dict[str, Any]:
    if agent == "pi":
        return {"event": "prompt", "cwd": str(project), "session": session, "prompt": prompt}
    return payload(agent, "user_prompt_submit", project, session, prompt=prompt)


def _said(agent: str, reply: dict[str, Any] | None) -> str:
    if reply is None:
        return ""
    if agent == "pi":
        return str(reply["message"])
    spec = reply["hookSpecificOutput"]
    assert spec["hookEventName"] == "UserPromptSubmit"
    return str(spec["additionalContext"])


@pytest.mark.parametrize("agent", ["claude-code", "codex", "pi"])
def test_remember_prompt_is_one_verbatim_entry_with_source_and_subject(
    tmp_path: Path, project: Path, agent: str
) -> None:
    hook = _hook(tmp_path, agent)
    prompt = "  Remember: rounding in src/core/config.py is half-even,\n  never half-up.  "
    said = _said(agent, hook(_prompt(agent, project, prompt)))
    [entry] = _entries(project)
    assert said.splitlines() == [f"{LINE}{entry.name}; it is recorded, do not record it again."]
    text = entry.read_text("utf-8")
    head, body = text.split("---\n", 2)[1:]
    assert body == "rounding in src/core/config.py is half-even,\n  never half-up.\n"
    assert f"harness: {agent}\nsession: s-1\n" in head
    assert head.startswith("subject: [src/core/config")
    trace = [json.loads(x) for x in (tmp_path / "trace.jsonl").read_text().splitlines()]
    [captured] = [t for t in trace if t["decision"] == "captured"]
    assert captured["file"] == f"journal/{entry.name}" and captured["chars"] == len(said)
    assert captured["agent"] == agent and captured["event"] == "UserPromptSubmit"


@pytest.mark.parametrize(
    "prompt",
    ["记住：这个项目使用 pnpm 作为包管理器", "记住:src/a.py 用 pnpm", "NOTE : keep it", "note：x"],
)
def test_every_prefix_and_colon_captures(tmp_path: Path, project: Path, prompt: str) -> None:
    hook = _hook(tmp_path, "claude-code")
    assert _said("claude-code", hook(_prompt("claude-code", project, prompt))).startswith(LINE)
    [entry] = _entries(project)
    note = prompt.split(":", 1)[-1].split("：", 1)[-1].strip()
    assert entry.read_text("utf-8").endswith(f"---\n{note}\n")


def test_cjk_punctuation_around_a_path_still_names_it(tmp_path: Path, project: Path) -> None:
    hook = _hook(tmp_path, "codex")
    hook(_prompt("codex", project, "记住：改动src/a.py，以及 docs/guide.md。还有 nowhere/x.py"))
    [entry] = _entries(project)
    text = entry.read_text("utf-8")
    assert "subject: [src/a, docs/guide]\n" in text and "harness: codex\n" in text


@pytest.mark.parametrize(
    "prompt",
    [
        "Please remember: the build uses pnpm",
        "remember to run the tests",
        "Notes: nothing",
        "what does note: mean?",
        "remember:",
        "记住   ",
        "",
    ],
)
def test_a_prompt_that_only_contains_the_word_is_not_a_capture(
    tmp_path: Path, project: Path, prompt: str
) -> None:
    for agent in ("claude-code", "pi"):
        assert _said(agent, _hook(tmp_path, agent)(_prompt(agent, project, prompt))) == ""
    assert _entries(project) == []


def test_capture_works_with_surface_off(tmp_path: Path, project: Path) -> None:
    (project / "canon.toml").write_text("surface = false\n")
    hook = _hook(tmp_path, "claude-code")
    assert _said("claude-code", hook(_prompt("claude-code", project, "note: pnpm only")))
    assert len(_entries(project)) == 1


def test_the_same_prompt_seen_twice_at_once_is_one_entry(tmp_path: Path, project: Path) -> None:
    """Two installed hooks (a plugin and the project settings) see one prompt: one note."""
    hook = _hook(tmp_path, "claude-code")
    first = _said("claude-code", hook(_prompt("claude-code", project, "remember: one")))
    again = _said("claude-code", hook(_prompt("claude-code", project, "remember: one")))
    assert first == again and len(_entries(project)) == 1
    hook(_prompt("claude-code", project, "remember: two"))
    hook(_prompt("claude-code", project, "remember: one", session="s-2"))
    assert len(_entries(project)) == 3


@pytest.mark.parametrize("agent", ["claude-code", "pi"])
def test_the_same_note_in_a_second_project_is_written_there(tmp_path: Path, agent: str) -> None:
    """The repeat guard is one store's: the same note in the same session, seconds later, in
    another project is journaled there too; and a note whose entry is gone (deleted by hand)
    is written again, never claimed as journaled."""
    hook = _hook(tmp_path, agent)
    first, second = make_project(tmp_path / "one"), make_project(tmp_path / "two")
    said_one = _said(agent, hook(_prompt(agent, first, "remember: deploys go out on Tuesdays")))
    said_two = _said(agent, hook(_prompt(agent, second, "remember: deploys go out on Tuesdays")))
    [one], [two] = _entries(first), _entries(second)
    assert one.name in said_one and two.name in said_two
    assert "Tuesdays" in two.read_text("utf-8")
    one.unlink()
    again = _said(agent, hook(_prompt(agent, first, "remember: deploys go out on Tuesdays")))
    [rewritten] = _entries(first)
    assert rewritten.name in again and "Tuesdays" in rewritten.read_text("utf-8")


def test_no_store_no_capture_and_nothing_created(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    for agent in ("claude-code", "codex", "pi"):
        assert _hook(tmp_path, agent)(_prompt(agent, bare, "remember: x")) is None
    assert not (bare / ".canon").exists()


def test_an_unwritable_journal_says_so_and_never_breaks_the_turn(
    tmp_path: Path, project: Path
) -> None:
    (project / ".canon" / "journal").write_text("not a directory")
    said = _said("codex", _hook(tmp_path, "codex")(_prompt("codex", project, "remember: x")))
    assert said.startswith("canon: the user's note could not be journaled (")
    assert len(said.splitlines()) == 1


@pytest.mark.parametrize("agent", ["claude-code", "codex", "pi"])
@pytest.mark.parametrize("prefix", ["记一下：", "记一下:", "请记住：", "请记住:", " 请记住 ："])
def test_the_other_chinese_phrasings_capture(
    tmp_path: Path, project: Path, agent: str, prefix: str
) -> None:
    """SPEC §11.5: `记一下：` and `请记住：` (either colon) are captures too."""
    said = _said(agent, _hook(tmp_path, agent)(_prompt(agent, project, f"{prefix}发布前先跑迁移")))
    assert said.startswith(LINE)
    [entry] = _entries(project)
    assert entry.read_text("utf-8").endswith("---\n发布前先跑迁移\n")


@pytest.mark.parametrize("agent", ["claude-code", "codex", "pi"])
def test_a_path_that_does_not_exist_yet_is_still_a_subject(
    tmp_path: Path, project: Path, agent: str
) -> None:
    """A note about a file to be created names it (its folder exists), as the §11.3 scan does."""
    hook = _hook(tmp_path, agent)
    hook(_prompt(agent, project, "remember: src/refunds.py will hold the refund rules"))
    [entry] = _entries(project)
    assert "subject: [src/refunds]\n" in entry.read_text("utf-8")


@pytest.mark.parametrize("agent", ["claude-code", "codex", "pi"])
def test_a_word_ending_a_sentence_is_not_a_path(tmp_path: Path, project: Path, agent: str) -> None:
    """SPEC §11.3/§11.5: a word is path-shaped by a slash or an extension, not by the full stop
    after it: `half-up.` and `it.` in prose name no file to be created."""
    hook = _hook(tmp_path, agent)
    note = "remember: src/core/config.py rounds half-even, never half-up. Keep it."
    hook(_prompt(agent, project, note))
    [entry] = _entries(project)
    assert "subject: [src/core/config]\n" in entry.read_text("utf-8")
