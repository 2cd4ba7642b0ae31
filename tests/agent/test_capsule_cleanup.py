"""SPEC §5 capsule cleanup, as pi-canon does it (issue 22 item 4): a capsule is trimmed of
leading/trailing blanks on write; an empty capsule writes no `capsule:` key; a blank owned key
left by a hand edit is replaced in place."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agent.test_cli import TODAY, canon, write_article


def article_text(project: Path, address: str) -> str:
    return (project / ".canon/articles" / f"{address}.md").read_text(encoding="utf-8")


def test_a_capsule_is_trimmed_and_written_plain(project: Path) -> None:
    assert canon("write", "src/a", "--capsule", "  Loads config.\t ", cwd=project).code == 0
    assert article_text(project, "src/a").startswith("---\ncapsule: Loads config.\nupdated: ")
    again = canon("write", "src/a", "--capsule", "Loads config.  ", cwd=project)
    assert "up to date" in again.out, again.out


def test_an_empty_capsule_writes_no_capsule_key(project: Path) -> None:
    assert canon("write", "src/b", "--body", "# b\n\nText.", cwd=project).code == 0
    assert article_text(project, "src/b") == f"---\nupdated: {TODAY}\n---\n# b\n\nText.\n"
    action = {"action": "write", "path": "src/c", "capsule": "   ", "body": "# c"}
    assert canon("tool", json.dumps(action), cwd=project).code == 0
    assert "capsule" not in article_text(project, "src/c")


def test_a_blank_capsule_left_by_a_hand_edit_is_replaced_in_place(project: Path) -> None:
    write_article(project, "src/d", "---\ntitle: D\ncapsule:\nupdated: 2026-01-01\n---\n# d\n")
    assert canon("write", "src/d", "--capsule", "Does d.", cwd=project).code == 0
    assert article_text(project, "src/d") == (
        f"---\ntitle: D\ncapsule: Does d.\nupdated: {TODAY}\n---\n# d\n"
    )
    write_article(project, "src/e", '---\ncapsule: "  padded  "\nupdated: 2026-01-01\n---\n# e\n')
    assert canon("write", "src/e", "--body", "# e\n\nMore.", cwd=project).code == 0
    assert article_text(project, "src/e").startswith("---\ncapsule: padded\n")
