"""The history pass (SPEC §9, §9.1, §9.2): the delta cache it asks of git by the repository's
size, what it lists (the store's article commits too, for `canon history`), and its cache file.
Real git repositories in tmp dirs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from canon_ls.core import changes, gitrun
from canon_ls.core.changes import ChangeTimes

T0 = 1_700_000_000
DAY = 86400


def git(repo: Path, *args: str, when: int | None = None) -> str:
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    if when is not None:
        env["GIT_COMMITTER_DATE"] = env["GIT_AUTHOR_DATE"] = f"{when} +0000"
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def commit(repo: Path, when: int, *files: str, message: str = "c") -> None:
    for rel in files:
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{rel} at {when}\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message, when=when)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(root, T0, "src/a.py", ".canon/articles/src/a.md", message="start")
    return root


def subjects(times: ChangeTimes, path: str) -> list[str]:
    return [c.subject for c in times.commits_of(path)]


def test_the_pass_lists_asset_and_article_commits(repo: Path, tmp_path: Path) -> None:
    """`canon history` reads the article file's commits from the same pass, so the store is
    not left out of it."""
    commit(repo, T0 + DAY, ".canon/journal/2023-11-15-note.md", message="journal only")
    commit(repo, T0 + 2 * DAY, "src/a.py", message="asset")
    commit(repo, T0 + 3 * DAY, ".canon/articles/src/a.md", message="article")
    times = ChangeTimes(repo, cache_dir=tmp_path / "cache")
    assert subjects(times, "src/a.py") == ["asset", "start"]
    assert subjects(times, ".canon/articles/src/a.md") == ["article", "start"]
    hits, _ = times.touched_since(["src/a.py"], T0 + DAY)
    assert [c.subject for c in hits] == ["asset"]


def test_the_delta_cache_grows_with_the_index(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three times the index file, never below git's default, at most DELTA_CACHE_MAX; only
    for the pass over all of history."""
    index = os.path.getsize(repo / ".git" / "index")
    assert changes.delta_cache_limit(repo) is None  # a small repository keeps git's default
    assert not any("deltaBaseCacheLimit" in a for a in changes.log_args(repo, "HEAD", True))
    monkeypatch.setattr(changes, "GIT_DEFAULT_DELTA_CACHE", 1)
    assert changes.delta_cache_limit(repo) == 3 * index
    args = changes.log_args(repo, "HEAD", whole=True)
    assert args[:3] == ["-c", f"core.deltaBaseCacheLimit={3 * index}", "log"]
    assert changes.log_args(repo, "OLD..HEAD")[0] == "log"
    monkeypatch.setattr(changes, "DELTA_CACHE_MAX", 2)
    assert changes.delta_cache_limit(repo) == 2
    sub = repo / "src"  # from a subdirectory git names the index relative to it
    assert changes.delta_cache_limit(sub) == 2
    assert changes.delta_cache_limit(repo.parent) is None  # no repository: git's default


def test_the_bigger_delta_cache_reaches_git_and_changes_nothing(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `-c` pair goes before the subcommand (gitrun finds `log` past it)."""
    commit(repo, T0 + DAY, "src/a.py", "src/b.py", message="more")
    default = ChangeTimes(repo, cache_dir=tmp_path / "default")
    monkeypatch.setattr(changes, "GIT_DEFAULT_DELTA_CACHE", 1)
    argv = gitrun.command(repo, changes.log_args(repo, "HEAD", whole=True))
    assert argv.index("-c", argv.index("core.pager=cat")) < argv.index("log")
    assert argv.index("log") < argv.index("--no-ext-diff") < argv.index("--no-renames")
    big = ChangeTimes(repo, cache_dir=tmp_path / "big")
    assert big.full_passes == 1
    assert big.committed() == default.committed() and "src/b.py" in big.committed()
    assert subjects(big, "src/a.py") == subjects(default, "src/a.py") == ["more", "start"]


def test_the_cache_still_serves_and_follows_new_commits(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(changes, "GIT_DEFAULT_DELTA_CACHE", 1)  # the bigger cache's pass too
    cache = tmp_path / "cache"
    first = ChangeTimes(repo, cache_dir=cache)
    assert first.full_passes == 1 and list(cache.iterdir())
    commit(repo, T0 + DAY, ".canon/journal/2023-11-15-n.md", "src/a.py", message="more")
    again = ChangeTimes(repo, cache_dir=cache)
    assert again.full_passes == 0  # OLD..HEAD only, from the cache file
    assert subjects(again, "src/a.py") == ["more", "start"]
    fresh = ChangeTimes(repo, cache_dir=tmp_path / "other")
    assert fresh.committed() == again.committed()
    assert ChangeTimes(repo, cache_dir=cache).full_passes == 0
