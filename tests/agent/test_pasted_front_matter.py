"""SPEC §6 write and journal: a body pasted with its own front matter block (an agent pasting a
whole article file) is stored as body text today, a second `---` block inside the article
(issue 22 item 7). The pasted block is stripped, its owned values kept only where the call gave
none, and the reply says so; the same for a journal entry. CLI, tool JSON and MCP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from canon_ls.core.storage.article import parse
from tests.agent.test_cli import TODAY, canon
from tests.agent.test_mcp import server_params, text_of

PASTED = (
    "---\ncapsule: Loads layered config.\nupdated: 2026-01-01\ntags: [config]\n---\n"
    "# Config\n\nEnv beats file.\n"
)


def stored(project: Path, address: str) -> str:
    return (project / ".canon/articles" / f"{address}.md").read_text(encoding="utf-8")


def test_a_pasted_block_is_stripped_and_its_capsule_kept(project: Path) -> None:
    wrote = canon("write", "src/core/config", "--body", PASTED, cwd=project)
    assert wrote.code == 0, wrote.err
    assert "front matter" in wrote.out, wrote.out
    assert stored(project, "src/core/config") == (
        f"---\ncapsule: Loads layered config.\nupdated: {TODAY}\n---\n# Config\n\nEnv beats file.\n"
    )


def test_the_call_s_capsule_wins_over_the_pasted_one(project: Path) -> None:
    action = {"action": "write", "path": "src/a", "capsule": "Given.", "body": PASTED}
    wrote = canon("tool", json.dumps(action), cwd=project)
    assert "front matter" in wrote.out, wrote.out
    article = parse(stored(project, "src/a"), "src/a")
    assert article.capsule == "Given."
    assert article.body == "# Config\n\nEnv beats file.\n"


def test_a_body_with_a_rule_in_it_is_not_front_matter(project: Path) -> None:
    body = "# Notes\n\n---\n\nA section after a rule.\n"
    assert canon("write", "src/b", "--capsule", "B.", "--body", body, cwd=project).code == 0
    assert stored(project, "src/b").endswith("---\n# Notes\n\n---\n\nA section after a rule.\n")


def test_a_journal_body_loses_its_pasted_block(project: Path) -> None:
    body = "---\nsubject: [src/a]\nlogged: 2026-01-01T00:00:00.000Z\n---\nChose env over file.\n"
    run = canon("journal", body, "--subject", "src/a", cwd=project)
    assert run.code == 0, run.err
    assert "front matter" in run.out, run.out
    (entry,) = (project / ".canon/journal").glob("*.md")
    text = entry.read_text()
    assert text.count("---\n") == 2 and text.endswith("---\nChose env over file.\n"), text


@pytest.mark.timeout(120)
async def test_mcp_says_the_block_was_stripped(project: Path) -> None:
    async with Client(server_params(project)) as client:
        wrote = await client.call_tool(
            "canon", {"action": "write", "path": "src/c", "body": PASTED}
        )
    assert "front matter" in text_of(wrote)
    assert parse(stored(project, "src/c"), "src/c").capsule == "Loads layered config."
