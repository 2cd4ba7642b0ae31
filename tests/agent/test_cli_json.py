"""`--format json` on the commands that print data (issue 27 item 3): read, map, search,
links, history, review, status and tool each print one JSON value whose keys docs/FORMAT.md
("JSON output") documents, with the same facts as the text (the stale evidence is check's)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from stale_repo import Repo, build
from test_cli import canon

DOC = (Path(__file__).resolve().parents[2] / "docs" / "FORMAT.md").read_text("utf-8")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return build(tmp_path_factory.mktemp("json") / "proj")


def as_json(repo: Repo, *args: str) -> object:
    run = canon(*args, "--format", "json", cwd=repo.root)
    assert run.code == 0, run.err
    return json.loads(run.out)


def documented(command: str) -> set[str]:
    """The keys FORMAT.md's "JSON output" table lists for `canon COMMAND --format json`."""
    section = DOC.split("## JSON output", 1)[1].split("\n## ", 1)[0]
    row = next(line for line in section.splitlines() if line.startswith(f"| `{command}"))
    return set(re.findall(r"`([a-z_]+)`", row.split("|")[2]))


def keys(value: object) -> set[str]:
    return set(value) if isinstance(value, dict) else set(value[0]) if value else set()


def test_read_carries_the_article_and_check_s_evidence(repo: Repo) -> None:
    read = as_json(repo, "read", "src/feed/fetch.py")
    assert isinstance(read, dict)
    assert read["governing"] == "src/feed/fetch" and read["article"]["updated"] == "2026-10-21"
    check = json.loads(canon("check", "--format", "json", cwd=repo.root).out)
    (finding,) = [f for f in check if f["code"] == "stale" and f["address"] == "src/feed/fetch"]
    assert read["stale"] == finding["evidence"]
    assert keys(read) | keys(read["article"]) <= documented("read")


def test_every_command_s_keys_are_documented(repo: Repo) -> None:
    cases = {
        "map": ["map", "src"],
        "search": ["search", "retry", "--journal"],
        "links": ["links", "src/feed/fetch.py"],
        "history": ["history", "src/feed/fetch.py"],
        "status": ["status"],
        "tool": ["tool", '{"action": "map", "path": "src"}'],
    }
    for command, args in cases.items():
        value = as_json(repo, *args)
        assert keys(value) and keys(value) <= documented(command), command
    history = as_json(repo, "history", "src/feed/fetch.py", "--since-updated")
    assert isinstance(history, dict)
    assert [c["subject"] for c in history["changes"] if c["side"] != "article"][:1] == [
        "Retry on 429"
    ]
    assert all(c["after_reference"] for c in history["changes"])
    status = as_json(repo, "status")
    assert isinstance(status, dict)
    assert status["stale"] == ["notes/policy", "src/feed", "src/feed/fetch"]


def test_review_reports_what_it_cleared(tmp_path: Path) -> None:
    repo = build(tmp_path / "proj")
    review = as_json(repo, "review", "src/feed/fetch.py")
    assert isinstance(review, dict)
    assert review["reviewed"] == "2026-11-29" and review["stale"] is None
    assert review["was_stale"]["commits"] == 3
    assert keys(review) <= documented("review")


def test_bad_input_stays_one_sentence(repo: Repo) -> None:
    run = canon("history", "src/feed/fetch.py", "--diff", "--format", "json", cwd=repo.root)
    assert run.code == 2 and run.out == "" and len(run.err.strip().splitlines()) == 1
