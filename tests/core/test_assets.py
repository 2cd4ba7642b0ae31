"""SPEC §9: asset sets and change times, against real git repositories in tmp dirs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from renamed_repo import logging_git

from canon_ls.core.checking.assets import Assets, address_of_path
from canon_ls.core.git.changes import ChangeTimes
from canon_ls.core.git.gitlog import parse_outputs

DAY = 86400
T0 = 1_700_000_000  # 2023-11-14 22:13 UTC


def git(repo: Path, *args: str, when: int | None = None) -> str:
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
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


def write(root: Path, rel: str, text: str = "x\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def commit(repo: Path, when: int, *files: str, message: str = "c") -> None:
    for rel in files:
        write(repo, rel, f"{rel} at {when}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message, when=when)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return root


# -- addresses of paths -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "address"),
    [
        ("src/core/config.ts", "src/core/config"),
        ("src/core/config.test.ts", "src/core/config.test"),
        ("docs/v1.2/notes.md", "docs/v1.2/notes"),
        (".env", ".env"),
        ("src/.eslintrc.json", "src/.eslintrc"),
        ("src/core/", "src/core"),
        ("Makefile", "Makefile"),
        ("archive.tar.gz", "archive.tar"),
        ("文档/设计.md", "文档/设计"),
    ],
)
def test_spec_3_address_of_project_paths(path: str, address: str) -> None:
    """SPEC §3 table, on the fast path used for every listed file."""
    from canon_ls.core.storage.address import normalise

    assert address_of_path(path) == address
    assert normalise(path) == address


# -- Assets ---------------------------------------------------------------------------------


def test_spec_9_assets_from_git_skip_ignored_store_and_deleted(repo: Path) -> None:
    """SPEC §9: ignored are .git/, .canon/ and what .gitignore ignores; untracked files count,
    files deleted from the work tree do not."""
    write(repo, ".gitignore", "build/\n*.log\n")
    commit(repo, T0, "src/core/config.ts", "src/core/config.py", "src/gone.py")
    write(repo, ".canon/articles/src/core/config.md", "---\ncapsule: c\n---\n")
    write(repo, "build/out.js")
    write(repo, "debug.log")
    write(repo, "src/new_file.rs")
    (repo / "src/gone.py").unlink()

    assets = Assets(repo)
    assert assets.git
    assert sorted(assets.of("src/core/config")) == ["src/core/config.py", "src/core/config.ts"]
    assert assets.of("src/new_file") == ["src/new_file.rs"]
    assert assets.of("src/gone") == []
    assert assets.of("build/out") == [] and assets.of("debug") == []
    assert not any(f.startswith(".canon/") for f in assets.files())
    assert assets.of("src/core") == ["src/core/"]
    assert assets.is_dir("src/core") and not assets.is_dir("build")
    assert assets.any_mapped(["nothing", "src"]) and not assets.any_mapped(["nothing"])


def test_spec_9_file_and_directory_with_one_address_are_a_union(repo: Path) -> None:
    """SPEC §9 (decided in docs): `x.py` and `x/` both map to address `x`."""
    commit(repo, T0, "pkg/x.py", "pkg/x/inner.py")
    assert sorted(Assets(repo).of("pkg/x")) == ["pkg/x.py", "pkg/x/"]


def test_spec_9_cjk_file_names(repo: Path) -> None:
    commit(repo, T0, "文档/设计 说明.md", "src/模块/入口.py")
    assets = Assets(repo)
    assert assets.of("文档/设计 说明") == ["文档/设计 说明.md"]
    assert assets.of("src/模块") == ["src/模块/"]
    assert assets.under("src/模块") == ["src/模块/入口.py"]


def test_assets_without_git_walk_the_tree(tmp_path: Path) -> None:
    write(tmp_path, "a/b.py")
    write(tmp_path, ".git/config")
    write(tmp_path, ".canon/articles/a/b.md")
    assets = Assets(tmp_path)
    assert not assets.git
    assert assets.files() == ["a/b.py"]
    assert assets.of("a") == ["a/"]


def test_assets_skip_a_custom_store_root(repo: Path) -> None:
    commit(repo, T0, "memory/articles/a.md", "a.py")
    assets = Assets(repo, store_root=repo / "memory")
    assert assets.files() == ["a.py"]


def test_assets_under_does_not_leak_siblings(repo: Path) -> None:
    commit(repo, T0, "a/b/c.py", "a/b0.py", "a/b-x/d.py", "a/b.py")
    assert Assets(repo).under("a/b") == ["a/b/c.py"]


# -- ChangeTimes ----------------------------------------------------------------------------


def parse_log(out: bytes) -> tuple[dict[str, float], dict[str, float]]:
    """(changed, deleted): each path's newest committer time, split by whether that newest
    event kept the file or deleted it (parse_history, reduced to times)."""
    h = parse_outputs([out])
    changed = {p: h.commits[i].time for p, i in h.newest.items()}
    deleted = {p: h.commits[events[0]].time for p, events in h.gone.items()}
    return changed, deleted


def test_parse_log_keeps_newest_event_and_odd_names() -> None:
    out = (
        b"\x00400\x00\nD\x00old.py\x00"
        b"\x00300\x00\x00200\x00\nM\x00a.py\x00A\x00q\tz\x00A\x00"
        + "中文/文件.md".encode()
        + b"\x00\x00100\x00\nA\x00a.py\x00A\x00old.py\x00"
    )
    changed, deleted = parse_log(out)
    assert changed == {"a.py": 200, "q\tz": 200, "中文/文件.md": 200}
    assert deleted == {"old.py": 400}
    assert parse_log(b"") == ({}, {})


def test_spec_9_deleted_then_recreated_untracked_file_uses_mtime(repo: Path, tmp_path: Path):
    """A path whose newest commit deleted it is not tracked: a new untracked file there is
    judged by its mtime, not by the deleting commit."""
    commit(repo, T0, "a.py", "keep.py")
    git(repo, "rm", "-q", "a.py")
    git(repo, "commit", "-q", "-m", "rm", when=T0 + DAY)
    write(repo, "a.py", "back\n")
    os.utime(repo / "a.py", (T0 + 7 * DAY, T0 + 7 * DAY))
    times = ChangeTimes(repo, cache_dir=tmp_path / "cache")
    assert "a.py" not in times.committed()
    assert times.of("a.py") == T0 + 7 * DAY


def test_spec_9_change_time_is_committer_date_of_last_commit(repo: Path, tmp_path: Path) -> None:
    """SPEC §9: change time of a tracked, unmodified file = committer date of the last commit
    touching it (not its mtime)."""
    commit(repo, T0, "a.py", "b.py", "文档/说明.md")
    commit(repo, T0 + 5 * DAY, "a.py")
    times = ChangeTimes(repo, cache_dir=tmp_path / "cache")
    assert times.git and times.full_passes == 1
    assert times.of("a.py") == T0 + 5 * DAY
    assert times.of("b.py") == T0
    assert times.of("文档/说明.md") == T0
    assert times.of("missing.py") == 0.0


def test_spec_9_dirty_and_untracked_files_use_mtime(repo: Path, tmp_path: Path) -> None:
    """SPEC §9: else its mtime (modified or untracked files)."""
    commit(repo, T0, "a.py", "b.py")
    write(repo, "a.py", "edited\n")
    write(repo, "fresh/new.py")
    write(repo, "loose.py")
    for rel in ("a.py", "fresh/new.py", "loose.py"):
        os.utime(repo / rel, (T0 + 9 * DAY, T0 + 9 * DAY))
    times = ChangeTimes(repo, cache_dir=tmp_path / "cache")
    assert times.of("a.py") == T0 + 9 * DAY
    assert times.of("fresh/new.py") == T0 + 9 * DAY
    assert times.of("loose.py") == T0 + 9 * DAY
    assert times.of("b.py") == T0


def test_spec_9_no_git_means_mtime(tmp_path: Path) -> None:
    path = write(tmp_path, "a.py")
    os.utime(path, (T0, T0))
    times = ChangeTimes(tmp_path, cache_dir=tmp_path / "cache")
    assert not times.git
    assert times.of("a.py") == T0


def test_spec_9_repository_without_commits(repo: Path, tmp_path: Path) -> None:
    path = write(repo, "a.py")
    os.utime(path, (T0, T0))
    times = ChangeTimes(repo, cache_dir=tmp_path / "cache")
    assert times.git and times.head is None
    assert times.of("a.py") == T0


def test_spec_9_incremental_change_times_equal_a_full_pass(repo: Path, tmp_path: Path) -> None:
    """SPEC §9: one git log pass, cached by HEAD, then only the new commits are read; the
    result equals a full pass over the whole history."""
    cache = tmp_path / "cache"
    commit(repo, T0, "a.py", "b.py", "c/d.py")
    times = ChangeTimes(repo, cache_dir=cache)
    commit(repo, T0 + DAY, "b.py", "新/文件.py")
    commit(repo, T0 + 2 * DAY, "c/d.py")
    git(repo, "rm", "-q", "a.py")
    git(repo, "commit", "-q", "-m", "rm", when=T0 + 3 * DAY)
    times.refresh()
    assert times.full_passes == 1  # only the first construction read the whole history
    fresh = ChangeTimes(repo, cache_dir=tmp_path / "other-cache")
    assert fresh.full_passes == 1
    assert times.committed() == fresh.committed()
    assert times.of("新/文件.py") == T0 + DAY


def test_change_times_cache_survives_a_restart_outside_the_store(repo: Path, tmp_path: Path):
    """The cache lives under the cache dir, never inside .canon; a new process reuses it."""
    cache = tmp_path / "cache"
    commit(repo, T0, "a.py")
    ChangeTimes(repo, cache_dir=cache)
    commit(repo, T0 + DAY, "a.py")
    again = ChangeTimes(repo, cache_dir=cache)
    assert again.full_passes == 0
    assert again.of("a.py") == T0 + DAY
    assert list(cache.iterdir()) and not (repo / ".canon").exists()


def test_change_times_rewritten_history_falls_back_to_a_full_pass(repo: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    commit(repo, T0, "a.py")
    commit(repo, T0 + DAY, "b.py")
    times = ChangeTimes(repo, cache_dir=cache)
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    commit(repo, T0 + 2 * DAY, "c.py")
    times.refresh()
    assert times.full_passes == 2
    assert "b.py" not in times.committed()
    assert times.of("c.py") == T0 + 2 * DAY


def test_change_times_corrupt_cache_is_ignored(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    commit(repo, T0, "a.py")
    first = ChangeTimes(repo, cache_dir=cache)
    for f in cache.iterdir():
        f.write_text("{not json", encoding="utf-8")
    again = ChangeTimes(repo, cache_dir=cache)
    assert again.committed() == first.committed()


def test_change_times_for_a_project_inside_a_larger_repository(repo: Path, tmp_path: Path):
    commit(repo, T0, "outer.py", "sub/proj/a.py")
    write(repo, "sub/proj/b.py")
    os.utime(repo / "sub/proj/b.py", (T0 + DAY, T0 + DAY))
    project = repo / "sub/proj"
    times = ChangeTimes(project, cache_dir=tmp_path / "cache")
    assert set(times.committed()) == {"a.py"}
    assert times.of("a.py") == T0
    assert times.of("b.py") == T0 + DAY
    assert Assets(project).files() == ["a.py", "b.py"]


def test_change_times_cache_follows_the_cache_rules(repo: Path, tmp_path: Path, monkeypatch):
    """Same rules as the parse cache: $XDG_CACHE_HOME/canon-ls, never inside the project,
    and CANON_NO_CACHE turns it off."""
    commit(repo, T0, "a.py")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    ChangeTimes(repo)
    assert {p.name[:8] for p in (tmp_path / "xdg" / "canon-ls").iterdir()} == {"changes-"}
    monkeypatch.setenv("XDG_CACHE_HOME", str(repo / "inside"))
    assert ChangeTimes(repo).of("a.py") == T0
    assert not (repo / "inside").exists()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg2"))
    monkeypatch.setenv("CANON_NO_CACHE", "1")
    times = ChangeTimes(repo)
    assert times.cache_dir is None and times.of("a.py") == T0
    assert not (tmp_path / "xdg2").exists()


def test_without_a_git_executable_everything_falls_back(repo: Path, tmp_path: Path, monkeypatch):
    """No git on PATH: the walk lists files and mtimes date them; nothing raises."""
    commit(repo, T0, "a.py")
    os.utime(repo / "a.py", (T0 + DAY, T0 + DAY))
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assets = Assets(repo)
    assert not assets.git and assets.files() == ["a.py"]
    times = ChangeTimes(repo, cache_dir=tmp_path / "cache")
    assert not times.git and times.of("a.py") == T0 + DAY


def test_non_utf8_file_names_do_not_crash(repo: Path, tmp_path: Path):
    raw = os.fsencode(str(repo)) + b"/bad\xff.py"
    with open(raw, "wb") as f:
        f.write(b"x\n")
    commit(repo, T0, "ok.py")
    name = os.fsdecode(b"bad\xff.py")
    assets = Assets(repo)
    assert name in assets.files()
    assert assets.of(os.fsdecode(b"bad\xff")) == [name]
    times = ChangeTimes(repo, cache_dir=tmp_path / "cache")
    assert times.of(name) == T0
    again = ChangeTimes(repo, cache_dir=tmp_path / "cache")  # the cache holds such names too
    assert again.full_passes == 0 and again.of(name) == T0


def test_listing_merges_untracked_deleted_skipped_and_conflicted_paths(repo: Path) -> None:
    """git's sorted index listing is edited in place (untracked files merged in, deleted ones
    and every `.git`/`.canon` segment left out, a conflicted path once): the result equals the
    walk's sorted set, and every per-address answer equals the survey's one pass."""
    tracked = ["a.py", "a/b.py", "b.d/x.py", "c.py", "sub/.canon/x.md", "sub/.gitignore", "z.py"]
    commit(repo, T0, *tracked, ".canon/articles/a.md")
    write(repo, "a.md")  # untracked, sorts between tracked files
    write(repo, "b/new.py")
    (repo / "c.py").unlink()  # deleted from the work tree
    git(repo, "checkout", "-q", "-b", "side")
    commit(repo, T0 + DAY, "z.py", message="side")
    git(repo, "checkout", "-q", "main")
    write(repo, "z.py", "main\n")
    git(repo, "commit", "-qam", "main", when=T0 + DAY)
    subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True)  # conflict
    assets = Assets(repo)
    want = ["a.md", "a.py", "a/b.py", "b.d/x.py", "b/new.py", "sub/.gitignore", "z.py"]
    assert assets.files() == want
    articles = ["a", "b", "b/new", "sub", "zz"]
    survey = assets.survey(articles)
    assert survey.mapped == {a for a in articles if assets.of(a)} == {"a", "b", "b/new", "sub"}
    assert sorted(assets.of("b")) == ["b.d/", "b/"]
    assert assets.of("b.d") == []  # the directory `b.d/` has the address `b`
    governing = [articles[i] if i >= 0 else None for i in survey.governing]
    assert governing == ["a", "a", "a", None, "b/new", "sub", None]
    assert assets.dirs() == {"a", "b.d", "b", "sub"}


def test_backslash_in_a_file_name_is_a_separator_for_its_address(repo: Path) -> None:
    commit(repo, T0, "x\\y.py", "x/z.py")
    assets = Assets(repo)
    assert sorted(assets.of("x/y")) == ["x\\y.py"]
    survey = assets.survey(["x/y"])
    assert survey.mapped == {"x/y"}


# -- the history the pass keeps (SPEC §9.1 evidence, §9.2 history) --------------------------


def _history(times: ChangeTimes, *paths: str) -> dict[str, list[tuple[int, str, str]]]:
    return {p: [(c.time, c.author, c.subject) for c in times.commits_of(p)] for p in paths}


def test_spec_9_1_the_pass_keeps_every_commit_of_a_path_newest_first(repo: Path, tmp_path):
    """SPEC §9.1: the one pass knows which commits touched each path (time, hash, author,
    subject), newest first; deleted paths are set aside, a recreated path keeps its past."""
    commit(repo, T0, "a.py", "b.py", message="first: one")
    commit(repo, T0 + DAY, "a.py", message="second")
    git(repo, "rm", "-q", "b.py")
    git(repo, "commit", "-q", "-m", "drop b", when=T0 + 2 * DAY)
    commit(repo, T0 + 3 * DAY, "b.py", message="b is back")
    times = ChangeTimes(repo, cache_dir=tmp_path / "cache")
    assert _history(times, "a.py", "b.py", "gone.py") == {
        "a.py": [(T0 + DAY, "t", "second"), (T0, "t", "first: one")],
        "b.py": [
            (T0 + 3 * DAY, "t", "b is back"),
            (T0 + 2 * DAY, "t", "drop b"),
            (T0, "t", "first: one"),
        ],
        "gone.py": [],
    }
    short = git(repo, "log", "-1", "--format=%h").strip()
    assert times.commits_of("b.py")[0].hash == short


def test_spec_9_1_incremental_history_equals_a_full_pass(repo: Path, tmp_path: Path) -> None:
    """The history after OLD..HEAD laid over the cache equals a fresh full pass, deletions
    and re-creations included, and survives a restart from the cache file."""
    cache = tmp_path / "cache"
    commit(repo, T0, "a.py", "b.py", "c/d.py")
    times = ChangeTimes(repo, cache_dir=cache)
    commit(repo, T0 + DAY, "b.py", "新/文件.py", message="more")
    git(repo, "rm", "-q", "a.py")
    git(repo, "commit", "-q", "-m", "rm a", when=T0 + 2 * DAY)
    commit(repo, T0 + 3 * DAY, "a.py", "c/d.py", message="a again")
    times.refresh()
    fresh = ChangeTimes(repo, cache_dir=tmp_path / "other")
    restarted = ChangeTimes(repo, cache_dir=cache)
    paths = ("a.py", "b.py", "c/d.py", "新/文件.py")
    assert times.full_passes == 1 and restarted.full_passes == 0
    assert _history(times, *paths) == _history(fresh, *paths) == _history(restarted, *paths)
    assert [c.subject for c in fresh.commits_of("a.py")] == ["a again", "rm a", "c"]


def test_history_parsed_in_path_ranges_equals_one_pass(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big output is parsed in several passes, one range of paths each (memory): the same
    history as one pass, deletions, re-creations and every commit of a path included."""
    from canon_ls.core.git import gitlog

    names = [f"{d}/{n}.py" for d in ("a", "b", "c", "d") for n in range(6)]
    commit(repo, T0, *names)
    commit(repo, T0 + DAY, *names[::3], message="some")
    git(repo, "rm", "-q", names[1], names[7])
    git(repo, "commit", "-q", "-m", "rm", when=T0 + 2 * DAY)
    commit(repo, T0 + 3 * DAY, names[7], message="back")
    one = ChangeTimes(repo, cache_dir=tmp_path / "one")
    monkeypatch.setattr(gitlog, "_PART_BYTES", 64)
    out = subprocess.run(["git", "log", "-z", "--name-status"], cwd=repo, capture_output=True)
    assert len(gitlog._bounds([out.stdout])) > 3
    ranged = ChangeTimes(repo, cache_dir=tmp_path / "ranged")
    assert _history(ranged, *names) == _history(one, *names)
    assert ranged.committed() == one.committed() and names[1] not in ranged.committed()
    assert [c.subject for c in ranged.commits_of(names[7])] == ["back", "rm", "c"]


def test_parse_history_clock_skew_and_odd_subjects() -> None:
    """A commit listed later with a later committer time is the newest; subjects keep spaces,
    colons and the separator-free rest; empty commits leave no trace."""
    out = (
        b"\x00100 aaa\x1fAnn\x1fold: one\x00\nM\x00x.py\x00"
        b"\x00150 eee\x1fEve\x1fempty\x00"
        b"\x00200 bbb\x1fBob Ray\x1fskewed \x1f subject\x00\nM\x00x.py\x00"
    )
    h = parse_outputs([out])
    assert [c.hash for c in h.commits] == ["aaa", "bbb"]
    assert h.commits[h.newest["x.py"]].subject == "skewed \x1f subject"
    assert [h.commits[i].author for i in h.newest.extra("x.py")] == ["Ann"]


def test_a_packed_listing_answers_as_before(repo: Path) -> None:
    """pack() compresses the listing while it waits (the check child's git wait); the next
    question restores it."""
    commit(repo, T0, "a.py", "a/b.py", "c.d/e.py")
    assets = Assets(repo)
    before = (assets.files(), assets.of("a"), assets.under("a"), assets.is_dir("c.d"))
    assets.pack()
    assert assets._packed is not None and not assets._data
    assert (assets.files(), assets.of("a"), assets.under("a"), assets.is_dir("c.d")) == before


def test_the_listing_reads_the_index_once_and_names_like_tags_stay_whole(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40 item 3: the whole listing is one `git ls-files -t` (four, two at once, held
    ~360 MB at 500k files), and its tags never eat a name: files named like tags (`H x`, `? y`,
    `R z`), tracked, untracked and deleted, a skip-worktree file and a deleted one list as the
    four plain listings say."""
    tracked = ["H x.py", "R z.py", "keep.py", "gone.py", "skip.py", "d/H  two.py"]
    commit(repo, T0, *tracked)
    write(repo, "? y.py")
    write(repo, "new/R q.py")
    (repo / "gone.py").unlink()
    (repo / "R z.py").unlink()
    git(repo, "update-index", "--skip-worktree", "skip.py")
    (repo / "skip.py").unlink()  # skip-worktree: still listed, never 'deleted'

    def plain(*args: str) -> set[str]:
        return {p for p in git(repo, "ls-files", "-z", *args).split("\0") if p}

    want = (plain("--cached") | plain("--others", "--exclude-standard")) - plain("--deleted")
    argv = logging_git(tmp_path, monkeypatch)
    assert Assets(repo).files() == sorted(want)
    assert want >= {"H x.py", "? y.py", "new/R q.py", "skip.py", "d/H  two.py"}
    listings = [line for line in argv.read_text().splitlines() if " ls-files " in line]
    assert len(listings) == 1 and " ls-files -z -t -c -o -d " in listings[0]
