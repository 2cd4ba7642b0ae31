"""The history pass (SPEC §9, §9.1, §9.2): the delta cache it asks of git by the repository's
size, what it lists (the store's article commits too, for `canon history`), and its cache file.
Real git repositories in tmp dirs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import BinaryIO

import pytest

from canon_ls.core.git import changes, gitlog, gitrun
from canon_ls.core.git.changes import ChangeTimes, Commit

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
    """Twice the index file, between DELTA_CACHE_MIN and DELTA_CACHE_MAX; only for the pass
    over all of history."""
    index = os.path.getsize(repo / ".git" / "index")
    assert changes.delta_cache_limit(repo) == changes.DELTA_CACHE_MIN  # a small repository
    monkeypatch.setattr(changes, "DELTA_CACHE_MIN", 1)
    assert changes.delta_cache_limit(repo) == 2 * index
    args = changes.log_args(repo, "HEAD", whole=True)
    windows = list(changes.PACK_WINDOWS)  # the pack mapped in bounded windows (issue 40)
    assert args[:7] == [*windows, "-c", f"core.deltaBaseCacheLimit={2 * index}", "log"]
    assert changes.log_args(repo, "OLD..HEAD")[4] == "log"
    monkeypatch.setattr(changes, "DELTA_CACHE_MAX", 2)
    assert changes.delta_cache_limit(repo) == 2
    sub = repo / "src"  # from a subdirectory git names the index relative to it
    assert changes.delta_cache_limit(sub) == 2
    assert changes.delta_cache_limit(repo.parent) is None  # no repository: git's default


def test_a_mid_sized_repository_s_pass_keeps_a_small_delta_cache(
    repo: Path, tmp_path: Path
) -> None:
    """Issue 40 item 3: at 100k files (a 15 MB index) each half of the pass held git's default
    96 MB delta cache (136 / 171 MB peak RSS) where 32 MB takes the same time; the cache is
    now twice the index (30 MB), not git's default."""
    index = tmp_path / "index"
    with open(index, "wb") as fh:
        fh.truncate(15 * 1024 * 1024)  # a sparse stand-in for that index
    assert changes.delta_cache_limit(repo, str(index)) == 30 * 1024 * 1024
    args = changes.log_args(repo, "HEAD", whole=True, limit=30 * 1024 * 1024)
    assert f"core.deltaBaseCacheLimit={30 * 1024 * 1024}" in args


def test_the_bigger_delta_cache_reaches_git_and_changes_nothing(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `-c` pair goes before the subcommand (gitrun finds `log` past it)."""
    commit(repo, T0 + DAY, "src/a.py", "src/b.py", message="more")
    monkeypatch.setattr(changes, "DELTA_CACHE_MIN", 0)  # no `-c` pair: git's default cache
    monkeypatch.setattr(changes, "DELTA_CACHE_MAX", 0)
    default = ChangeTimes(repo, cache_dir=tmp_path / "default")
    monkeypatch.undo()
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


def _events(
    times: ChangeTimes,
) -> tuple[list[Commit], dict[bytes, list[int]], dict[str, list[int]]]:
    h = times._history
    kept = {p: [first, *rest] for p, first, rest in h.newest.rows()}
    return h.commits, kept, dict(h.gone)


def _linear_history(repo: Path, commits: int) -> None:
    for n in range(1, commits):
        files = [f"src/m{n % 7}.py", f"lib/{n % 3}/x.py"]
        commit(repo, T0 + n * DAY, *files, message=f"change {n}")
        if n % 5 == 0:
            git(repo, "rm", "-q", f"src/m{n % 7}.py")
            git(repo, "commit", "-q", "-m", f"drop {n}", when=T0 + n * DAY + 60)


def _with_merges_skew_and_empty_commits(repo: Path) -> None:
    """Side branches merged back (their commits older than mainline ones), a committer clock
    running backwards, commits that touch nothing."""
    _linear_history(repo, 9)
    git(repo, "checkout", "-q", "-b", "side", "HEAD~4")
    commit(repo, T0 + 5 * DAY + 1, "src/m1.py", "side/s.py", message="side one")
    commit(repo, T0 + 2 * DAY, "src/m2.py", message="side skewed")  # the clock ran back
    git(repo, "checkout", "-q", "main")
    commit(repo, T0 + 20 * DAY, "src/m1.py", message="main after")
    git(repo, "commit", "-q", "--allow-empty", "-m", "nothing", when=T0 + 21 * DAY)
    git(repo, "merge", "-q", "--no-ff", "-X", "theirs", "-m", "merge", "side", when=T0 + 22 * DAY)
    commit(repo, T0 + 3 * DAY, "src/m1.py", "lib/0/x.py", message="main skewed")
    _linear_history(repo, 4)


class _Spy:
    """Every git command ChangeTimes starts, and when its output is read (real git)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[tuple[str, tuple[str, ...]]] = []
        self.step_back: dict[tuple[str, ...], int] = {}
        real = gitrun.start
        seen = self.seen

        def start(cwd: Path, *args: str, step_back: int = 0) -> gitrun.Job:
            job = real(cwd, *args, step_back=step_back)
            seen.append(("start", args))
            self.step_back[args] = step_back
            file = job.file

            def read(timeout: float = gitrun.TIMEOUT) -> BinaryIO | None:
                seen.append(("read", args))
                return file(timeout)

            job.file = read  # type: ignore[method-assign]
            return job

        monkeypatch.setattr(gitrun, "start", start)

    def logs(self) -> list[tuple[str, ...]]:
        return [args for event, args in self.seen if event == "start" and "log" in args]

    def at(self, event: str, sub: str) -> int:
        return next(i for i, (e, args) in enumerate(self.seen) if e == event and sub in args)


def _whole_log(repo: Path) -> ChangeTimes:
    """The history as one `git log` with the root commit's diff gives it (parsed like the pass)."""
    out = gitrun.run(repo, *changes.log_args(repo, "HEAD", whole=True))
    assert out is not None
    times = ChangeTimes(repo, cache_dir=repo.parent / "unused")
    times._history = gitlog.parse_outputs([out])
    return times


@pytest.mark.parametrize("folders", [False, True], ids=["one log", "folders"])
@pytest.mark.parametrize("shape", ["linear", "merges", "two roots", "subfolder"])
def test_the_pass_is_one_log_then_the_root_s_tree_and_equals_the_log_of_all(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str, folders: bool
) -> None:
    """Issue 40 item 3: the whole pass runs one git at a time (two halves at once held ~500 MB
    at 500k files): one `log` without the root commit (or, for a big index, one log per group
    of folders and one of the rest, each with a small delta cache), then the root's tree
    listed (its diff against nothing held ~40 MB more). Every commit and every path's commits
    (kept, deleted, skewed clocks, merges, a folder gone since) are those of the one log with
    the root; with two roots, or a project in a subfolder, too."""
    if folders:
        monkeypatch.setattr(changes, "PART_INDEX_BYTES", 64)  # a few hundred bytes per log
    project = repo
    if shape == "two roots":  # an unrelated history merged in: the root stays in the log
        _linear_history(repo, 6)
        git(repo, "checkout", "-q", "--orphan", "other")
        git(repo, "rm", "-rq", "--cached", ".")
        commit(repo, T0 + 3 * DAY, "other/o.py", message="other root")
        git(repo, "checkout", "-q", "-f", "main")
        git(repo, "merge", "-q", "--allow-unrelated-histories", "-m", "join", "other")
    elif shape == "subfolder":
        commit(repo, T0 + 1, "pkg/src/b.py", "pkg/.canon/articles/src/b.md", "top.py")
        _linear_history(repo, 6)
        commit(repo, T0 + 9 * DAY, "pkg/src/b.py", message="pkg change")
        project = repo / "pkg"
    elif shape == "linear":
        _linear_history(repo, 12)
    else:
        _with_merges_skew_and_empty_commits(repo)
    git(repo, "rm", "-rq", "lib")  # a folder gone since: only the rest's log lists it
    git(repo, "commit", "-qm", "no lib", when=T0 + 40 * DAY)
    spy = _Spy(monkeypatch)
    times = ChangeTimes(project, cache_dir=tmp_path / "cache")
    assert times.full_passes == 1
    logs = [args for args in spy.logs() if "-s" not in args]
    assert all(spy.step_back[args] == changes.PASS_STEP_BACK for args in logs)
    assert (len(logs) > 2) == folders and (len(logs) == 1) == (not folders)
    for earlier, later in zip(logs, logs[1:], strict=False):  # one at a time
        assert spy.seen.index(("read", earlier)) < spy.seen.index(("start", later))
    if folders:
        assert all(
            "--full-history" in args and "core.deltaBaseCacheLimit=8388608" in args for args in logs
        )  # fmt: skip (a small index: the smallest cache)
        assert ":(exclude,literal)src" in logs[-1]
    if shape == "two roots":
        assert "--min-parents=1" not in logs[0] and not any("--format=A" in a for _, a in spy.seen)
    else:
        assert all("--min-parents=1" in args for args in logs)
        assert spy.at("read", "log") < spy.at("start", "--format=A%x00%(path)")
    whole = _whole_log(project)
    assert _events(times) == _events(whole)
    for path in ("src/a.py", "src/m1.py", "src/b.py", "other/o.py"):
        assert times.commits_of(path) == whole.commits_of(path)


def test_the_root_s_tree_is_listed_for_a_single_commit_repository(
    repo: Path, tmp_path: Path
) -> None:
    """A repository of one commit: the log lists nothing, the root's tree lists every file."""
    times = ChangeTimes(repo, cache_dir=tmp_path / "cache")
    assert times.committed() == {"src/a.py": T0, ".canon/articles/src/a.md": T0}
    assert _events(times) == _events(_whole_log(repo))


def test_without_ls_tree_format_the_root_s_own_diff_is_read(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A git before 2.36 has no `ls-tree --format`: the root's own diff stands in for it."""
    _linear_history(repo, 5)
    real = gitrun.start

    def old_git(cwd: Path, *args: str, step_back: int = 0) -> gitrun.Job:
        if "ls-tree" in args:
            args = (*args, "--no-such-option")
        return real(cwd, *args, step_back=step_back)

    monkeypatch.setattr(gitrun, "start", old_git)
    times = ChangeTimes(repo, cache_dir=tmp_path / "cache")
    assert times.commits_of("src/a.py") and _events(times) == _events(_whole_log(repo))


def test_the_whole_pass_starts_once_status_has_ended(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40 item 3: `git status` reads the whole index (~180 MB at 500k files), so the
    whole pass's log starts only once status's output is read: never both at once. One
    article's question still starts its log before status is read (no memory to spare there)."""
    _linear_history(repo, 4)
    spy = _Spy(monkeypatch)
    ChangeTimes(repo, cache_dir=tmp_path / "cache")
    assert spy.at("start", "status") < spy.at("read", "status") < spy.at("start", "log")
    spy.seen.clear()
    ChangeTimes(repo, cache_dir=tmp_path / "one", status_paths=["src"], only=["src"])
    assert spy.at("start", "status") < spy.at("start", "log") < spy.at("read", "status")


def test_a_failed_pass_dates_nothing_and_caches_nothing(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass git could not finish leaves every file to its mtime and no cache file, so the
    next start tries again."""
    _linear_history(repo, 3)
    monkeypatch.setattr(changes, "_LOG_FORMAT", "--no-such-option")
    cache = tmp_path / "cache"
    failed = ChangeTimes(repo, cache_dir=cache)
    assert failed.git and failed.committed() == {} and not cache.exists()
    monkeypatch.undo()
    assert ChangeTimes(repo, cache_dir=cache).committed()["src/m1.py"] == T0 + DAY


def test_the_parse_from_files_a_block_at_a_time_equals_the_parse_of_the_bytes(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outputs read from their files in blocks that cut fields anywhere, laid end to end,
    in several path ranges: the history of the joined bytes parsed at once."""
    _with_merges_skew_and_empty_commits(repo)
    whole = gitrun.run(repo, *changes.log_args(repo, "HEAD", whole=True))
    assert whole
    expected = gitlog.parse_outputs([whole])
    cut = whole.index(b"\0\0", len(whole) // 2) + 1  # the end of a commit's paths
    files = []
    for n, part in enumerate((whole[:cut], whole[cut:])):
        (tmp_path / f"part{n}").write_bytes(part)
        files.append(open(tmp_path / f"part{n}", "rb"))  # noqa: SIM115
    monkeypatch.setattr(gitlog, "CHUNK", 7)
    monkeypatch.setattr(gitlog, "_PART_BYTES", 200)
    try:
        assert len(gitlog._bounds(files)) > 3
        got = gitlog.parse_outputs(files)
    finally:
        for f in files:
            f.close()
    key = (expected.commits, list(expected.newest.rows()), expected.gone)
    assert (got.commits, list(got.newest.rows()), got.gone) == key
    assert len(got.newest) > 10 and got.gone


def test_paths_out_of_byte_order_still_land_in_their_ranges(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """git lists a commit's paths in byte order and the parse routes them to path ranges by
    slices; a commit listing them otherwise is routed path by path, to the same History."""
    names = sorted(f"{d}/{n}.py".encode() for d in "uvwxyz" for n in range(9))
    names[0], names[-1] = names[-1], names[0]  # in byte order but for these two
    out = b"".join(
        b"\0%d h%d\x1fAnn\x1fc%d\0\n" % (100 - k, k, k)
        + b"".join(
            b"%s\0%s\0" % (b"D" if (k + i) % 7 == 0 else b"M", n) for i, n in enumerate(names)
        )
        for k in range(3)
    )
    one = gitlog.parse_outputs([out])
    monkeypatch.setattr(gitlog, "_PART_BYTES", 150)
    assert len(gitlog._bounds([out])) > 3
    ranged = gitlog.parse_outputs([out])
    assert (ranged.commits, list(ranged.newest.rows()), ranged.gone) == (
        one.commits,
        list(one.newest.rows()),
        one.gone,
    )
    assert len(one.newest) + len(one.gone) == len(names) and one.gone


def test_a_big_repository_s_pass_stays_within_bounds(repo: Path, tmp_path: Path) -> None:
    """Issue 40 item 3: at 500k files (a 75 MB index) the cache grew to 216 MB and one half of
    the pass to 469 MB; it now stops at 128 MB, and the pack is mapped in bounded windows."""
    index = tmp_path / "index"
    with open(index, "wb") as fh:
        fh.truncate(100 * 1024 * 1024)  # a sparse stand-in for a big repository's index
    assert changes.delta_cache_limit(repo, str(index)) == 128 * 1024 * 1024
    args = changes.log_args(repo, "HEAD", whole=True, limit=128 * 1024 * 1024)
    assert "core.packedGitLimit=48m" in args and "core.packedGitWindowSize=8m" in args
