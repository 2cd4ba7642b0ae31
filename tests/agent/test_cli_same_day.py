"""Same-day staleness from the CLI (SPEC §9, §9.1, §9.2): a change counts when it comes after
the article's own last change (its commit, or its mtime when uncommitted), even on the
reference day itself; the commit that wrote the article and its code together never counts."""

from __future__ import annotations

import json
import os
from pathlib import Path

from same_day_repo import at, build, commit, x_article
from stale_repo import git
from test_cli import canon

UTC = {"TZ": "UTC"}


def stale_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("stale:")]


def test_spec_9_1_the_article_s_own_commit_is_not_evidence(tmp_path: Path) -> None:
    """Issue 24's blind spot: a code-and-article commit on the reference day, then one later
    change, reads "1 commit" (never the article's own commit)."""
    root = tmp_path / "proj"
    hashes = build(root, later_day="2026-11-25")
    run = canon("read", "src/x.py", cwd=root, env=UTC)
    assert run.code == 0, run.err
    assert stale_lines(run.out) == [
        "stale: 1 commit in 9 days since updated 2026-11-20 touched src/x.py "
        f'(newest {hashes["Change x"]} 2026-11-25 "Change x")'
    ]


def test_spec_9_a_later_commit_the_same_day_makes_it_stale(tmp_path: Path) -> None:
    """Issue 27: write the article, then edit and commit the code the same day: stale, with
    that one commit, and every interface says so in the same words."""
    root = tmp_path / "proj"
    hashes = build(root, later_day="2026-11-20")
    line = (
        "stale: 1 commit in 9 days since updated 2026-11-20 touched src/x.py "
        f'(newest {hashes["Change x"]} 2026-11-20 "Change x")'
    )
    assert stale_lines(canon("read", "src/x.py", cwd=root, env=UTC).out) == [line]
    check = canon("check", "--format", "json", cwd=root, env=UTC)
    (finding,) = [f for f in json.loads(check.out) if f["code"] == "stale"]
    assert finding["evidence"]["line"] == line and finding["evidence"]["commits"] == 1
    assert "1 stale" in canon("status", cwd=root, env=UTC).out
    history = canon("history", "src/x.py", "--since-updated", cwd=root, env=UTC).out
    assert history.splitlines()[0].endswith("2 commits, 1 after updated 2026-11-20.")
    assert f"{hashes['Change x']} 2026-11-20 asset" in history
    assert hashes["Write x and its article"] not in history


def test_spec_9_2_diff_starts_at_the_article_s_own_change(tmp_path: Path) -> None:
    """`history --diff` compares with the article's own last change, not the day's last commit."""
    root = tmp_path / "proj"
    hashes = build(root, later_day="2026-11-20")
    run = canon("history", "src/x.py", "--diff", cwd=root, env=UTC)
    assert run.code == 0, run.err
    assert f"base: {hashes['Write x and its article']}" in run.out
    assert "-X = 1" in run.out and "+X = 2" in run.out


def test_spec_9_uncommitted_article_then_a_commit_the_same_day(tmp_path: Path) -> None:
    """The article written but not committed (its mtime is its change), then the code
    committed later that day: stale; before that commit, not."""
    root = tmp_path / "proj"
    build(root, later_day="2026-11-20")
    art = root / ".canon/articles/src/x.md"
    art.write_text(x_article("2026-11-21", "Loads x, now 2.\n"), encoding="utf-8")
    os.utime(art, (at("2026-11-21", 10), at("2026-11-21", 10)))
    assert stale_lines(canon("read", "src/x.py", cwd=root, env=UTC).out) == []
    later = commit(root, "Change x again", at("2026-11-21", 14), {"src/x.py": "X = 3\n"})
    assert stale_lines(canon("read", "src/x.py", cwd=root, env=UTC).out) == [
        "stale: 1 commit in 8 days since updated 2026-11-21 touched src/x.py "
        f'(newest {later} 2026-11-21 "Change x again")'
    ]


def test_spec_9_a_commit_in_the_article_s_second_that_descends_from_it_is_later(
    tmp_path: Path,
) -> None:
    """Issue 41 item 10: a script commits the article, then the code, in one second: the code
    commit descends from the article's, so it is later (stale); committed the other way round
    (code first, then the article, one second) it is not. A refresh that reads only the new
    commits (the cached history goes on) orders them the same."""
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    when = at("2026-11-20", 10)
    article = {".canon/articles/src/x.md": x_article("2026-11-20")}
    commit(root, "Write x and its article", when, {"src/x.py": "X = 1\n", **article})
    assert stale_lines(canon("read", "src/x.py", cwd=root, env=UTC).out) == []
    later = commit(root, "Change x", when, {"src/x.py": "X = 2\n"})
    assert stale_lines(canon("read", "src/x.py", cwd=root, env=UTC).out) == [
        "stale: 1 commit in 9 days since updated 2026-11-20 touched src/x.py "
        f'(newest {later} 2026-11-20 "Change x")'
    ]
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    commit(other, "Write x", when, {"src/x.py": "X = 1\n"})
    commit(other, "Change x", when, {"src/x.py": "X = 2\n"})
    commit(other, "Its article", when, article)
    assert stale_lines(canon("read", "src/x.py", cwd=other, env=UTC).out) == []
