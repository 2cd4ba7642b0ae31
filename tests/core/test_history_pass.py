"""The history pass leaves out what nobody dates from git (the store's journal, the stores of
mounts inside the project) and lists the same commits for everything else; its cache stays
valid (SPEC §9, §9.1, §9.2). Real git repositories in tmp dirs."""

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


def test_a_commit_touching_only_the_journal_is_no_change(repo: Path, tmp_path: Path) -> None:
    """The journal is left out; assets and the store's articles (canon history's article side)
    keep every commit."""
    commit(repo, T0 + DAY, ".canon/journal/2023-11-15-note.md", message="journal only")
    commit(repo, T0 + 2 * DAY, "src/a.py", ".canon/journal/2023-11-16-x.md", message="asset")
    commit(repo, T0 + 3 * DAY, ".canon/articles/src/a.md", message="article")
    times = ChangeTimes(repo, cache_dir=tmp_path / "cache")
    assert times.of("src/a.py") == T0 + 2 * DAY
    assert subjects(times, "src/a.py") == ["asset", "start"]
    assert subjects(times, ".canon/articles/src/a.md") == ["article", "start"]
    assert not [p for p in times.committed() if p.startswith(".canon/journal/")]
    hits, _ = times.touched_since(["src/a.py"], T0 + DAY)
    assert [c.subject for c in hits] == ["asset"]
    # the journal entry is still dated (by its mtime, as an untracked file would be)
    assert times.of(".canon/journal/2023-11-15-note.md") > 0


def test_the_configured_root_and_mount_stores_are_left_out(repo: Path, tmp_path: Path) -> None:
    (repo / "canon.toml").write_text('root = "memory"\nmounts = ["data/lake"]\n', "utf-8")
    commit(repo, T0 + DAY, "memory/journal/2023-11-15-n.md", message="journal")
    commit(repo, T0 + 2 * DAY, "data/lake/.canon/articles/prices.md", message="mount store")
    commit(repo, T0 + 3 * DAY, "data/lake/prices.csv", "memory/articles/x.md", message="kept")
    assert changes.excluded_paths(repo) == [".canon/journal", "memory/journal", "data/lake/.canon"]
    times = ChangeTimes(repo, cache_dir=tmp_path / "cache")
    committed = times.committed()
    assert "memory/journal/2023-11-15-n.md" not in committed
    assert "data/lake/.canon/articles/prices.md" not in committed
    assert committed["data/lake/prices.csv"] == committed["memory/articles/x.md"] == T0 + 3 * DAY


def test_a_store_outside_the_project_excludes_nothing_of_it(repo: Path) -> None:
    (repo / "canon.toml").write_text('root = "../elsewhere"\n', "utf-8")
    assert changes.excluded_paths(repo) == [".canon/journal"]


def test_a_side_branch_change_a_merge_discarded_still_counts(repo: Path, tmp_path: Path) -> None:
    """The pathspec must not turn on git's history simplification: the pass lists the same
    commits as a pass over the whole tree would."""
    git(repo, "checkout", "-q", "-b", "side")
    commit(repo, T0 + DAY, "src/a.py", message="on the side")
    git(repo, "checkout", "-q", "main")
    commit(repo, T0 + 2 * DAY, "src/b.py", message="on main")
    git(repo, "merge", "-q", "-s", "ours", "--no-edit", "side", when=T0 + 3 * DAY)
    times = ChangeTimes(repo, cache_dir=tmp_path / "cache")
    assert subjects(times, "src/a.py") == ["on the side", "start"]
    assert times.of("src/a.py") == T0 + DAY


def test_the_cache_still_serves_and_follows_new_commits(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = ChangeTimes(repo, cache_dir=cache)
    assert first.full_passes == 1 and list(cache.iterdir())
    commit(repo, T0 + DAY, ".canon/journal/2023-11-15-n.md", "src/a.py", message="more")
    again = ChangeTimes(repo, cache_dir=cache)
    assert again.full_passes == 0  # OLD..HEAD only, from the cache file
    assert subjects(again, "src/a.py") == ["more", "start"]
    assert "src/a.py" in again.committed()
    assert not [p for p in again.committed() if "journal" in p]
    fresh = ChangeTimes(repo, cache_dir=tmp_path / "other")
    assert fresh.committed() == again.committed()


def test_the_cache_is_keyed_by_what_the_pass_leaves_out(repo: Path, tmp_path: Path) -> None:
    """A cache written while `memory/` was the store must not serve once it is plain files."""
    cache = tmp_path / "cache"
    (repo / "canon.toml").write_text('root = "memory"\n', "utf-8")
    commit(repo, T0 + DAY, "memory/journal/n.md", message="then a journal")
    assert "memory/journal/n.md" not in ChangeTimes(repo, cache_dir=cache).committed()
    (repo / "canon.toml").unlink()
    times = ChangeTimes(repo, cache_dir=cache)
    assert times.full_passes == 1
    assert times.committed()["memory/journal/n.md"] == T0 + DAY
    assert len(list(cache.iterdir())) == 2


def test_a_big_repository_gets_the_bigger_delta_cache(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The knob reaches git (a `-c` pair before the subcommand) and changes nothing else."""
    small = ChangeTimes(repo, cache_dir=tmp_path / "small").committed()
    assert "core.deltaBaseCacheLimit" not in " ".join(changes.log_args(repo, "HEAD", True))
    monkeypatch.setattr(changes, "BIG_INDEX_BYTES", 1)
    args = changes.log_args(repo, "HEAD", whole=True)
    assert args[:2] == ["-c", f"core.deltaBaseCacheLimit={changes.BIG_DELTA_CACHE}"]
    assert "core.deltaBaseCacheLimit" not in " ".join(changes.log_args(repo, "HEAD~0"))
    argv = gitrun.command(repo, args)
    assert argv.index("log") < argv.index("--no-ext-diff") < argv.index("--no-renames")
    big = ChangeTimes(repo, cache_dir=tmp_path / "big")
    assert big.full_passes == 1 and big.committed() == small and small
