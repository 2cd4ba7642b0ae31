"""SPEC §5 and §12 (issue 36 item 1): a front matter line canon cannot parse is kept byte for
byte by every writer, and a value it cannot read is reported, never treated as absent. pi-canon
0.3.0 writes a capsule holding a raw control character plain (it quotes only punctuation), and
a hand edit can leave `tags: [feed, http`; YAML refuses either line, so canon reads the front
matter one top-level key at a time: the broken key is a problem, the others read as usual."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from canon_ls.core import tool
from canon_ls.core.storage.store import Store
from tests.agent.test_cli import canon, write_article

C0 = [chr(c) for c in range(1, 32) if chr(c) not in "\t\n\r"] + ["\x7f"]  # 28 + DEL (NUL: binary)
CAPSULE = "capsule: feed\x01loader\n"
BROKEN = "tags: [feed, http\n"


def article(capsule_line: str = CAPSULE) -> str:
    return f"---\n{capsule_line}updated: 2026-11-20\n{BROKEN}owner: data-team\n---\n# App\n\nOld.\n"


def test_a_body_only_write_keeps_the_unreadable_capsule_and_the_broken_line(
    project: Path,
) -> None:
    path = write_article(project, "src/app", article())
    read = canon("read", "src/app.py", cwd=project)
    assert "problem: malformed front matter: capsule cannot be read" in read.out, read.out
    assert "problem: malformed front matter: tags cannot be read" in read.out, read.out
    assert "updated: 2026-11-20" in read.out  # the keys YAML can read still read
    w = canon("write", "src/app.py", "--body", "# App\n\nNew.", cwd=project)
    assert w.code == 0, w.err
    assert "no capsule" not in w.out, w.out  # unreadable is not absent
    text = path.read_text()
    assert CAPSULE in text and f"{BROKEN}owner: data-team\n" in text, text
    assert text.endswith("# App\n\nNew.\n")
    rows = json.loads(canon("check", "--format", "json", cwd=project).out)
    codes = [r["code"] for r in rows]
    assert codes.count("malformed-front-matter") == 2 and "capsule-missing" not in codes, rows


def test_a_capsule_write_replaces_the_unreadable_capsule_and_keeps_the_broken_line(
    project: Path,
) -> None:
    path = write_article(project, "src/app", article())
    assert canon("write", "src/app.py", "--capsule", "Feeds.", cwd=project).code == 0
    text = path.read_text()
    assert "capsule: Feeds.\n" in text and "\x01" not in text
    assert f"{BROKEN}owner: data-team\n" in text and text.endswith("# App\n\nOld.\n")
    assert "capsule: Feeds." in canon("read", "src/app.py", cwd=project).out


def test_review_mv_and_check_fix_keep_every_unreadable_line(project: Path) -> None:
    """Every other writer: `review` (sets `reviewed`), `mv` (rewrites links), `check --fix`
    (mends a duplicate owned key) keep the lines canon cannot read as they are."""
    write_article(project, "src/app", article("capsule:\n" + CAPSULE))  # + a blank duplicate
    write_article(project, "src/b", "---\ncapsule: B.\n---\n# B\n\nSee [[src/app]].\n")
    assert canon("review", "src/app.py", cwd=project).code == 0
    assert canon("check", "--fix", cwd=project).code in (0, 1)
    assert canon("mv", "src/app", "src/feed", cwd=project).code == 0
    text = (project / ".canon/articles/src/feed.md").read_text()
    assert text.count("capsule:") == 1 and CAPSULE in text, text
    assert f"{BROKEN}owner: data-team\n" in text and "reviewed: 2026-11-29" in text, text


def test_every_control_character_in_a_capsule_is_reported_and_kept(project: Path) -> None:
    store = Store(project)
    for ch in C0:
        line = f"capsule: a{ch}b\n"
        path = write_article(project, "src/c", f"---\n{line}owner: x\n---\n# C\n")
        read = tool.run(store, {"action": "read", "path": "src/c"})
        assert "capsule cannot be read" in read.text, (repr(ch), read.text)
        w = tool.run(store, {"action": "write", "path": "src/c", "body": "# C\n\nMore."})
        assert w.code == 0, w.text
        assert path.read_text().startswith(f"---\n{line}"), repr(ch)


@pytest.mark.parametrize("nl", ["\n", "\r\n"])
def test_a_broken_line_costs_only_its_own_key(project: Path, nl: str) -> None:
    text = article("capsule: Feeds.\n").replace("\n", nl)
    path = write_article(project, "src/app", text)
    store = Store(project)
    assert "capsule: Feeds." in tool.run(store, {"action": "read", "path": "src/app"}).text
    w = tool.run(store, {"action": "write", "path": "src/app", "body": "# App\n\nNew."})
    assert w.code == 0, w.text
    assert f"{BROKEN}owner: data-team\n".replace("\n", nl).encode() in path.read_bytes()


def test_import_into_an_article_keeps_its_unreadable_capsule(tmp_path: Path) -> None:
    """`canon import --write` merges a rule file into an existing article: a capsule it cannot
    read is the article's own capsule all the same, so the import does not put one in."""
    from tests.agent.rule_fixtures import make_project

    project = make_project(tmp_path / "p", ["agents-md"])
    path = write_article(project, "packages/web", article())
    assert canon("import", "--write", cwd=project).code == 0
    text = path.read_text()
    assert text.startswith("---\n" + CAPSULE) and text.count("capsule:") == 1, text
    assert f"{BROKEN}owner: data-team\n" in text and "## From packages/web/AGENTS.md" in text
