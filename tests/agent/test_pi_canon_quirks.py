"""SPEC §5 reading what pi-canon wrote (issue 22 item 8). pi-canon 0.3.0 quotes a capsule only
when it holds one of `: # [ ] { } " ' ` , & * ! | > % @ \\` or edge blanks, so `- x`, `? x`,
`yes`, `42` and dates are written plain; and a blank `capsule:` it read as a foreign line rides
along beside the `capsule:` it writes. canon reads the text after `capsule: `, keeps every
other key, and `canon check` reports a duplicate owned key that `canon check --fix` mends.
The fixtures are hand-written in pi-canon's bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent.test_cli import TODAY, canon, write_article

PLAIN_CAPSULES = ["- starts like a list item", "? x marks it", "yes", "42", "2026-01-01", "~"]


def pi_canon_article(capsule: str) -> str:
    # pi-canon writes owned keys first, then the foreign ones it carried, then the body
    return (
        f"---\ncapsule: {capsule}\nupdated: 2026-11-20\nowner: data-team\n"
        "tags:\n  - config\n  - startup\n---\n# Config\n\nEnv beats file.\n"
    )


@pytest.mark.parametrize("capsule", PLAIN_CAPSULES)
def test_a_plain_capsule_reads_as_the_text_after_the_key(project: Path, capsule: str) -> None:
    write_article(project, "src/core/config", pi_canon_article(capsule))
    read = canon("read", "src/core/config", cwd=project)
    lines = read.out.splitlines()
    assert lines[1:3] == [f"capsule: {capsule}", "updated: 2026-11-20"], read.out
    assert not [line for line in lines if line.startswith("problem:")], read.out
    assert f"src/core/config: {capsule}" in canon("map", cwd=project).out.splitlines()
    rows = json.loads(canon("check", "--format", "json", cwd=project).out)
    assert not [r for r in rows if r["code"] == "malformed-front-matter"], rows
    # a body-only write keeps the capsule (now quoted where YAML needs it) and the other keys
    assert canon("write", "src/core/config", "--body", "# Config\n\nNew.", cwd=project).code == 0
    text = (project / ".canon/articles/src/core/config.md").read_text()
    assert "owner: data-team\ntags:\n  - config\n  - startup\n" in text
    assert (
        canon("read", "src/core/config", cwd=project).out.splitlines()[1] == f"capsule: {capsule}"
    )


DUPLICATE = (
    "---\ncapsule:\nupdated: 2026-11-20\nowner: data-team\ncapsule: Loads layered config.\n"
    "---\n# Config\n"
)


def test_a_blank_capsule_beside_a_second_one_reads_the_non_empty_value(project: Path) -> None:
    write_article(project, "src/core/config", DUPLICATE)
    assert canon("read", "src/core/config", cwd=project).out.splitlines()[1] == (
        "capsule: Loads layered config."
    )
    write_article(
        project,
        "src/b",
        DUPLICATE.replace("capsule:\n", "capsule: Kept.\n", 1).replace(
            "capsule: Loads layered config.\n", "capsule:\n"
        ),
    )
    assert canon("read", "src/b", cwd=project).out.splitlines()[1] == "capsule: Kept."


def test_check_reports_a_duplicate_owned_key_and_fix_keeps_the_value(project: Path) -> None:
    path = write_article(project, "src/core/config", DUPLICATE)
    rows = json.loads(canon("check", "--format", "json", cwd=project).out)
    dup = [r for r in rows if r["code"] == "duplicate-key"]
    assert len(dup) == 1 and dup[0]["address"] == "src/core/config", rows
    assert "capsule" in dup[0]["message"]
    assert "[duplicate-key]" in canon("check", cwd=project).out
    fixed = canon("check", "--fix", cwd=project)
    assert "[duplicate-key]" not in fixed.out, fixed.out
    assert "Fixed src/core/config" in fixed.out + fixed.err
    assert path.read_text() == (
        "---\ncapsule: Loads layered config.\nupdated: 2026-11-20\nowner: data-team\n---\n"
        "# Config\n"
    )
    assert TODAY not in path.read_text(), "a fix is not an update"


def test_an_article_without_capsule_is_listed_without_one(project: Path) -> None:
    """pi-canon writes no `capsule:` key for an empty capsule and its read prints no line for
    it; canon's read of that article says the same (no blank `capsule: ` line)."""
    write_article(project, "src/core/config", "---\nupdated: 2026-11-20\n---\n# Config\n")
    lines = canon("read", "src/core/config", cwd=project).out.splitlines()
    assert lines[:2] == ["src/core/config", "updated: 2026-11-20"], lines
    # map names it bare and search shows the body's opening words, as pi-canon lists them
    assert canon("map", cwd=project).out.splitlines() == ["src/core/config"]
    found = canon("search", "config", cwd=project).out.splitlines()
    assert "src/core/config: # Config" in found, found


def test_a_capsule_holding_a_unicode_line_separator_keeps_the_other_keys(project: Path) -> None:
    """pi-canon folds only "\\n" out of a capsule, so a pasted U+2028 is written plain, and
    YAML breaks the line there. canon reads the capsule with the break as a blank (as canon
    writes it) and loses no other key."""
    write_article(
        project,
        "src/core/config",
        "---\ncapsule: Loads\u2028layered config.\nupdated: 2026-11-20\nowner: data-team\n---\n"
        "# Config\n",
    )
    read = canon("read", "src/core/config", cwd=project).out.splitlines()
    assert read[1:3] == ["capsule: Loads layered config.", "updated: 2026-11-20"], read
    assert not [line for line in read if line.startswith("problem:")], read


def test_a_capsule_block_pi_canon_carried_beside_its_capsule_reads_the_capsule(
    project: Path,
) -> None:
    """pi-canon reads `capsule:` with an indented list under it (Obsidian's shape) as foreign
    lines and carries them along after the `capsule:` it writes. canon reads that capsule,
    keeps the other keys, reports one duplicate key, and `check --fix` leaves one capsule."""
    path = write_article(
        project,
        "src/core/config",
        "---\ncapsule: Loads layered config.\nupdated: 2026-11-20\ncapsule:\n  - one\n  - two\n"
        "owner: data-team\n---\n# Config\n",
    )
    read = canon("read", "src/core/config", cwd=project).out.splitlines()
    assert read[1:3] == ["capsule: Loads layered config.", "updated: 2026-11-20"], read
    codes = [r["code"] for r in json.loads(canon("check", "--format", "json", cwd=project).out)]
    assert codes.count("duplicate-key") == 1 and "malformed-front-matter" not in codes, codes
    assert "capsule-missing" not in codes, codes
    assert canon("check", "--fix", cwd=project).code in (0, 1)
    text = path.read_text()
    assert text.count("capsule:") == 1 and "capsule: Loads layered config.\n" in text, text
    assert "owner: data-team\n" in text, text
