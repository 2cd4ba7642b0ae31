"""SPEC §6 read, §9.1: a read carries its article's staleness evidence. Once it was measured (by
the whole-store pass of `canon status` / `canon check`, or by an earlier read) a read in a new
process runs no git at all (core/git/evidence_cache.py), and a commit, a checkout, a reset, an
edit, a new or deleted file, or an edit of the article shows at once: the read then equals one
made with no cache.
A damaged cache costs git time, never a wrong answer. Git processes are counted through a `git` on
PATH that logs each call and runs the real one."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path

import pytest
from stale_repo import TODAY, Repo, build, git, noon, write

from canon_ls.agent.cli_store import status_line
from canon_ls.core import tool
from canon_ls.core.git import changes, indexprobe
from canon_ls.core.git.history import history
from canon_ls.core.storage import cache, freshness
from canon_ls.core.storage.address import may_name
from canon_ls.core.storage.store import Store

PATHS = ("src/feed/fetch.py", "src/feed/util.py", "notes/policy", "src/app.py")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CANON_TODAY", TODAY)
    monkeypatch.delenv("CANON_NO_CACHE", raising=False)
    monkeypatch.setattr(freshness, "RACY_NS", 0)  # files written just now count as settled
    shim = tmp_path / "bin" / "git"
    shim.parent.mkdir()
    real = shutil.which("git")
    shim.write_text(f'#!/bin/sh\necho "$*" >> "{tmp_path / "git.log"}"\nexec {real} "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    return build(tmp_path / "proj")


def gits(repo: Repo) -> int:
    """Git processes started since the last call."""
    log = repo.root.parent / "git.log"
    n = len(log.read_text().splitlines()) if log.exists() else 0
    log.unlink(missing_ok=True)
    return n


def read(root: Path, path: str) -> str:
    """A read as a new process makes it: a new Store, one tool call."""
    result = tool.run(Store(root), {"action": "read", "path": path})
    assert result.code == 0, result.text
    return result.text


def uncached(root: Path, path: str, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as m:
        m.setenv("CANON_NO_CACHE", "1")
        return read(root, path)


def test_spec_9_1_a_measured_read_runs_no_git(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    status_line(Store(repo.root))  # the whole-store pass
    gits(repo)
    texts = {path: read(repo.root, path) for path in PATHS}
    assert gits(repo) == 0
    assert "stale: 3 commits in 39 days since updated 2026-10-21" in texts["src/feed/fetch.py"]
    assert "1 file changed uncommitted: src/feed/util.py" in texts["src/feed/util.py"]
    assert "stale: stale_after 2026-11-01 passed" in texts["notes/policy"]
    assert "stale:" not in texts["src/app.py"]
    assert texts == {path: uncached(repo.root, path, monkeypatch) for path in PATHS}


def test_spec_9_1_one_read_measures_for_the_next(repo: Repo) -> None:
    first = read(repo.root, "src/feed/fetch.py")
    assert gits(repo) >= 1
    assert read(repo.root, "src/feed/fetch.py") == first
    assert gits(repo) == 0


def _commit(root: Path) -> None:
    write(root, "src/feed/fetch.py", "def fetch():\n    return 3\n")
    git(root, "commit", "-qam", "Three", date="2026-11-28")


def _ignore(root: Path) -> None:
    with open(root / ".gitignore", "a", encoding="utf-8") as fh:  # in place: no folder moves
        fh.write("src/feed/new.py\n")


MOVES = {
    "edit": lambda root: write(root, "src/feed/fetch.py", "def fetch():\n    return 2\n"),
    "commit": _commit,
    "new file": lambda root: write(root, "src/feed/new.py", "x = 1\n"),
    "deleted file": lambda root: (root / "src/feed/util.py").unlink(),
    "checkout": lambda root: git(root, "checkout", "-q", "HEAD~1"),
    "reset": lambda root: git(root, "reset", "-q", "--soft", "HEAD~2"),
    "ignore rule": _ignore,
    "article": lambda root: write(
        root, ".canon/articles/src/feed/fetch.md", "---\ncapsule: Now.\nupdated: 2026-11-28\n---\n"
    ),
}


@pytest.mark.parametrize("move", MOVES)
def test_spec_9_1_a_change_shows_at_once(
    repo: Repo, move: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if move == "ignore rule":  # an untracked file, then a rule that ignores it
        write(repo.root, "src/feed/new.py", "x = 1\n")
        write(repo.root, ".gitignore", "# rules\n")
    status_line(Store(repo.root))
    before = {path: read(repo.root, path) for path in PATHS}
    MOVES[move](repo.root)
    after = {path: read(repo.root, path) for path in PATHS}
    assert after != before
    assert after == {path: uncached(repo.root, path, monkeypatch) for path in PATHS}
    status_line(Store(repo.root))  # the whole-store pass measures them all: the same lines
    assert {path: read(repo.root, path) for path in PATHS} == after


@pytest.mark.parametrize("damage", ["flipped", "cut", "garbage"])
def test_spec_9_1_a_damaged_evidence_cache_costs_time_never_a_wrong_answer(
    repo: Repo, damage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    status_line(Store(repo.root))
    expected = {path: uncached(repo.root, path, monkeypatch) for path in PATHS}
    file = cache.cache_file(repo.root / ".canon", repo.root, "evidence")
    assert file is not None
    shards = list(file.parent.glob(file.stem + ".*.bin"))
    assert shards
    for shard in shards:
        data = shard.read_bytes()
        shard.write_bytes(
            {
                "flipped": data[:-5] + bytes([data[-5] ^ 1]) + data[-4:],
                "cut": data[: len(data) // 2],
                "garbage": b"\0" * 40,
            }[damage]
        )
    gits(repo)
    assert {path: read(repo.root, path) for path in PATHS} == expected
    assert gits(repo) > 0


def test_spec_9_1_a_nearer_article_takes_files_from_the_folder_article_at_once(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new article nearer to a file governs it from then on (SPEC §4): the folder article's
    cached evidence no longer names that file."""
    status_line(Store(repo.root))
    before = read(repo.root, "src/feed")
    assert "src/feed/util.py" in before
    write(repo.root, ".canon/articles/src/feed/util.md", "---\ncapsule: Helpers.\n---\n")
    after = read(repo.root, "src/feed")
    assert after == uncached(repo.root, "src/feed", monkeypatch)
    assert after != before


def _logs(repo: Repo) -> list[str]:
    """The `git log` calls made since the last gits() (their arguments)."""
    log = repo.root.parent / "git.log"
    calls = log.read_text().splitlines() if log.exists() else []
    return [c for c in calls if " log " in f" {c} "]


def test_spec_9_1_a_first_read_asks_git_about_its_own_paths_only(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no history cache at all, a read logs the history of its article's files and its own
    file, never all of history (11.6 s at 50k articles), and keeps no history cache; its lines
    are those the whole-store pass measures."""
    gits(repo)
    texts = {path: read(repo.root, path) for path in PATHS}
    logs = _logs(repo)
    assert logs and all(":(literal)" in c and "--full-history" in c for c in logs), logs
    assert not list((repo.root.parent / "cache").rglob("changes-*"))
    status_line(Store(repo.root))
    for file in (repo.root.parent / "cache").rglob("evidence-*"):
        file.unlink()
    assert {path: read(repo.root, path) for path in PATHS} == texts


def test_spec_9_1_a_read_loads_only_the_history_chunks_its_paths_lie_in(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole pass keeps its history in chunks of rows; a read of one article loads the
    chunks holding its files and its own file (the others may be gone) and runs no git log."""
    monkeypatch.setattr(changes, "CHUNK_ROWS", 1)
    status_line(Store(repo.root))
    expected = {path: read(repo.root, path) for path in PATHS}
    chunks = list((repo.root.parent / "cache").rglob("changes-*.*.bin"))
    assert len(chunks) > 4
    for file in (repo.root.parent / "cache").rglob("evidence-*"):
        file.unlink()
    for file in chunks:
        if b"src/feed/fetch" not in file.read_bytes():
            file.unlink()
    gits(repo)
    assert read(repo.root, "src/feed/fetch.py") == expected["src/feed/fetch.py"]
    assert gits(repo) > 0 and not _logs(repo)


def test_spec_9_1_an_article_naming_no_file_is_measured_without_git(repo: Repo) -> None:
    """An article with no file or folder of its name governs nothing (SPEC §4, §9): only its
    stale_after date can make it stale, so its first read runs no git, and says what the
    whole-store pass says."""
    gits(repo)
    text = read(repo.root, "notes/policy")
    assert gits(repo) == 0
    assert "stale: stale_after 2026-11-01 passed" in text
    status_line(Store(repo.root))
    assert read(repo.root, "notes/policy") == text


def test_spec_9_1_after_a_commit_a_read_logs_only_the_new_commits_of_its_paths(
    repo: Repo,
) -> None:
    """The history cache behind HEAD by a commit: a read loads its chunks and adds the commits
    since of its own paths (`git log OLD..HEAD -- its paths`), keeping nothing; the whole-store
    pass then says the same."""
    status_line(Store(repo.root))
    _commit(repo.root)
    gits(repo)
    text = read(repo.root, "src/feed/fetch.py")
    logs = _logs(repo)
    assert logs and all(".." in c and ":(literal)" in c for c in logs), logs
    assert "stale: 4 commits" in text
    status_line(Store(repo.root))
    assert read(repo.root, "src/feed/fetch.py") == text


def test_spec_9_2_a_history_asks_git_about_its_own_paths_only(repo: Repo) -> None:
    """`canon history` with no history cache logs its article's paths alone, never all of
    history, and says what it says from the whole pass's cache."""
    gits(repo)
    text = history(Store(repo.root), "src/feed/fetch.py")
    logs = _logs(repo)
    assert logs and all(":(literal)" in c for c in logs), logs
    assert "6 commits, 3 after updated 2026-10-21" in text
    status_line(Store(repo.root))
    assert history(Store(repo.root), "src/feed/fetch.py") == text


def test_spec_9_1_a_store_outside_the_project_reads_its_commits(repo: Repo, tmp_path: Path) -> None:
    """A store kept outside the project (SPEC §13 root): its article files are no project
    paths, so git is asked about the governed files alone (git refuses a path outside the
    repository); the read says what the whole-store pass says."""
    outside = tmp_path / "elsewhere"
    shutil.copytree(repo.root / ".canon", outside)

    def reads() -> dict[str, str]:
        return {
            p: tool.run(Store(repo.root, outside), {"action": "read", "path": p}).text
            for p in PATHS
        }

    texts = reads()
    assert "stale: 3 commits" in texts["src/feed/fetch.py"]
    assert "1 file changed uncommitted: src/feed/util.py" in texts["src/feed/util.py"]
    status_line(Store(repo.root, outside))
    assert reads() == texts


def quiet(root: Path, address: str, own: str, nearer: Iterable[str] = ()) -> list[bytes] | None:
    """The files of the index probe's answer (None: it left the question to git)."""
    found = indexprobe.quiet_files(root, address, own, nearer)
    return None if found is None else found.files


def _settle(root: Path) -> None:
    """Every file older than the index git writes next (as in any checkout a minute old)."""
    for rel in git(root, "ls-files").splitlines():
        os.utime(root / rel, (noon("2026-11-20"), noon("2026-11-20")))
    git(root, "status")  # refreshes the index's stat data and writes it


def _asked(repo: Repo) -> list[str]:
    log = repo.root.parent / "git.log"
    return log.read_text().splitlines() if log.exists() else []


def _with_git_only(root: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Each read as git alone answers it (status and ls-files), for comparison."""
    with monkeypatch.context() as m:
        m.setattr(indexprobe, "quiet_files", lambda *a, **k: None)
        m.setenv("CANON_NO_CACHE", "1")
        return {path: read(root, path) for path in PATHS}


def test_spec_9_1_a_read_of_files_as_committed_runs_neither_git_status_nor_ls_files(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each of git status and git ls-files parses the whole index (60-90 ms at 500k files); a
    read whose files match the index and HEAD learns that from the index's few entries, and says
    what git says. A dirty file still goes to git."""
    _settle(repo.root)
    status_line(Store(repo.root))
    for file in (repo.root.parent / "cache").rglob("evidence-*"):
        file.unlink()
    gits(repo)
    text = read(repo.root, "src/feed/fetch.py")
    asked = _asked(repo)
    assert asked and not [c for c in asked if " status " in f" {c} " or "ls-files" in c], asked
    assert len([c for c in asked if "rev-parse" in c]) == 1, asked  # the probe's, passed on
    assert "stale: 3 commits in 39 days" in text
    gits(repo)
    assert "1 file changed uncommitted" in read(repo.root, "src/feed/util.py")
    assert [c for c in _asked(repo) if "status" in c]
    assert text == _with_git_only(repo.root, monkeypatch)["src/feed/fetch.py"]


def _same_size_edit(root: Path) -> None:
    before = (root / "src/feed/fetch.py").stat()
    write(root, "src/feed/fetch.py", (root / "src/feed/fetch.py").read_text().replace("3", "4"))
    os.utime(root / "src/feed/fetch.py", ns=(before.st_atime_ns, before.st_mtime_ns))


def _staged(root: Path) -> None:
    """A change in the index alone: the file as the index holds it, and no racily clean entry
    (its mtime well before the index's), so only the comparison with HEAD can find it."""
    write(root, "src/feed/fetch.py", "def fetch():\n    return 9\n")
    os.utime(root / "src/feed/fetch.py", (noon("2026-11-20"), noon("2026-11-20")))
    git(root, "add", "src/feed/fetch.py")


def _racy(root: Path) -> None:
    soon = noon(TODAY) + 10**6  # recorded by the index, yet newer than the index file
    os.utime(root / "src/feed/fetch.py", (soon, soon))
    git(root, "status")


UNSURE = {
    "same-size edit, mtime kept": _same_size_edit,
    "staged edit": _staged,
    "untracked sibling": lambda root: write(root, "src/feed/fetch.txt", "x\n"),
    "ignored sibling": lambda root: (
        write(root, ".git/info/exclude", "*.log\n"),
        write(root, "src/feed/fetch.log", "x\n"),
    ),
    "racily clean": _racy,
    "assume-unchanged": lambda root: (
        git(root, "update-index", "--assume-unchanged", "src/feed/fetch.py"),
        write(root, "src/feed/fetch.py", "def fetch():\n    return 7\n"),
    ),
    "skip-worktree": lambda root: git(root, "update-index", "--skip-worktree", "src/feed/fetch.py"),
    "index v4": lambda root: git(root, "update-index", "--index-version", "4"),
    "split index": lambda root: git(root, "update-index", "--split-index"),
    "article edited": MOVES["article"],
}


@pytest.mark.parametrize("case", UNSURE)
def test_spec_9_1_what_the_index_cannot_vouch_for_goes_to_git(
    repo: Repo, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An edit git would find, a staged change, a file git may or may not ignore, a racily clean
    entry, an index flag, an index layout other than v2/v3: no quiet answer, and the read says
    exactly what git alone says."""
    _settle(repo.root)
    own = ".canon/articles/src/feed/fetch.md"
    assert quiet(repo.root, "src/feed/fetch", own) == [b"src/feed/fetch.py"]
    UNSURE[case](repo.root)
    assert quiet(repo.root, "src/feed/fetch", own) is None
    assert {path: read(repo.root, path) for path in PATHS} == _with_git_only(repo.root, monkeypatch)


def test_spec_9_1_the_index_is_searched_by_bisection_exactly(tmp_path: Path) -> None:
    """The entries an address names, found by bisecting the index's bytes, are those git lists:
    first and last entries, names sharing a prefix (`a.b`, `a-b`, `a/b`, `ab`), long paths,
    and names that sort before or after every entry."""
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    names = [f"d{i % 37}/{'x' * (i % 90)}f{i}.py" for i in range(3000)]
    names += [
        "a.b",
        "a-b",
        "a/b",
        "a/c.d",
        "ab",
        "0first",
        "~last",
        "d3/" + ("y" * 200 + "/") * 3 + "z",
    ]
    for rel in names:
        write(root, rel, rel)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Files")
    _settle(root)
    addresses = ["a", "a/b", "a/c", "0first", "~last", "!before", "~~after", "d3", "d3/f3"]
    addresses += [n.rpartition(".")[0] for n in names[::97] if "." in n[1:]]
    for address in addresses:
        parent, _, leaf = address.rpartition("/")
        listed = git(root, "ls-files", "-z", "--", f":(literal){address}", f":(glob){address}.*")
        wanted = sorted(
            p.encode()
            for p in listed.split("\0")
            if p and may_name(p[len(parent) + 1 if parent else 0 :].split("/")[0], leaf)
        )
        assert quiet(root, address, "a.b") == wanted, address


def test_spec_9_1_the_index_is_read_for_a_project_below_the_work_trees_top(tmp_path: Path) -> None:
    """The index names paths from the work tree's top; the answer names them from the project."""
    top = tmp_path / "outer"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    for rel in ("proj/src/a.py", "proj/src/a/one.py", "proj/src/ab.py", "top.txt", "proj/own.md"):
        write(top, rel, rel)
    git(top, "add", "-A")
    git(top, "commit", "-qm", "Files")
    _settle(top)
    assert quiet(top / "proj", "src/a", "own.md") == [b"src/a.py", b"src/a/one.py"]


def test_spec_9_1_a_damaged_index_never_breaks_the_probe(tmp_path: Path) -> None:
    """Cut, flipped or random bytes in git's index (a crash, a disk that lost a write): the
    probe answers None or the true listing, never raises (it found an IndexError once)."""
    import random

    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for rel in [f"src/f{i}.py" for i in range(40)] + ["src/a.py", "own.md"]:
        write(root, rel, rel)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Files")
    _settle(root)
    good = (root / ".git/index").read_bytes()
    draw = random.Random(7)
    for i in range(600):
        data = bytearray(good[: draw.randrange(len(good))] if i % 3 == 0 else good)
        for _ in range(5 if i % 3 == 1 else 0):
            data[draw.randrange(len(data))] = draw.randrange(256)
        if i % 3 == 2:
            data[12:] = draw.randbytes(draw.randrange(20_000))
        (root / ".git/index").write_bytes(bytes(data))
        assert quiet(root, "src/a", "own.md") in (None, [b"src/a.py"])


def test_spec_9_1_a_folder_article_asks_the_index_past_its_nearer_articles_folders(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a nearer article's folder holds is that article's (SPEC §4): the probe passes over it
    by bisection and does not walk it, so an untracked file there leaves the folder article's
    answer to the index, while one among its own files sends it to git. Both say what git says."""
    for rel in ("src/feed/parsers/rss.py", "src/feed/parsers/atom.py"):
        write(repo.root, rel, rel)
    write(repo.root, ".canon/articles/src/feed/parsers.md", "---\ncapsule: Parsers.\n---\n")
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-qm", "Parsers", date="2026-11-28")
    _settle(repo.root)
    own = ".canon/articles/src/feed.md"
    nearer = {"src/feed/fetch", "src/feed/parsers"}
    assert quiet(repo.root, "src/feed", own, nearer) == [
        b"src/feed/fetch.py",  # (for the read to sort out: src/feed/fetch.md takes it)
        b"src/feed/parse.py",
        b"src/feed/util.py",
    ]
    write(repo.root, "src/feed/parsers/new.py", "x = 1\n")  # the nearer article's
    assert quiet(repo.root, "src/feed", own, nearer) is not None
    expected = _with_git_only(repo.root, monkeypatch)
    assert {path: read(repo.root, path) for path in PATHS} == expected
    write(repo.root, "src/feed/new.py", "x = 1\n")  # the folder article's own
    assert quiet(repo.root, "src/feed", own, nearer) is None
    assert quiet(repo.root, "src/feed", own) is None  # nothing skipped


def test_spec_9_1_a_first_read_of_a_folder_article_logs_its_own_files_not_its_folder(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no history cache, a folder article answered from the index logs the few files it
    governs itself, not its whole folder (1,996 of 2,000 commits touched a 31k-file folder at
    50k: 1.6 s), and says what the whole-store pass says."""
    git(repo.root, "commit", "-qam", "Util", date="2026-11-28")
    _settle(repo.root)
    gits(repo)
    text = read(repo.root, "src/feed/util.py")  # src/feed governs it
    logs = _logs(repo)
    assert logs and all(":(literal)src/feed/util.py" in c for c in logs), logs
    assert not [c for c in logs if ":(literal)src/feed " in f"{c} "], logs
    status_line(Store(repo.root))
    for file in (repo.root.parent / "cache").rglob("evidence-*"):
        file.unlink()
    assert read(repo.root, "src/feed/util.py") == text
    assert text == _with_git_only(repo.root, monkeypatch)["src/feed/util.py"]


def test_spec_9_1_a_smudged_entry_is_no_quiet_answer(tmp_path: Path) -> None:
    """Git writes a size of 0 over an entry it found racily clean ("smudged"), and then reads the
    file whatever its stat says, unless the entry is the empty blob: so does the probe."""
    empty = tmp_path / "empty.py"
    empty.write_bytes(b"")
    st = os.lstat(empty)
    fields = (
        *divmod(st.st_ctime_ns, 10**9),
        *divmod(st.st_mtime_ns, 10**9),
        st.st_dev,
        st.st_ino & 0xFFFFFFFF,
        0o100644,
        st.st_uid,
        st.st_gid,
        0,
    )
    later = st.st_mtime_ns + 10**9
    empty_blob = bytes.fromhex("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")
    other_blob = bytes(20)
    assert indexprobe._settled(str(tmp_path), (b"empty.py", 0o100644, empty_blob, fields), later)
    assert not indexprobe._settled(
        str(tmp_path), (b"empty.py", 0o100644, other_blob, fields), later
    )


def test_spec_9_1_a_sha256_repository_goes_to_git(tmp_path: Path) -> None:
    """Its index entries carry 32-byte object ids, which the probe does not read."""
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main", "--object-format=sha256")
    for rel in ("src/a.py", "own.md"):
        write(root, rel, rel)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Files")
    _settle(root)
    assert quiet(root, "src/a", "own.md") is None


def test_spec_9_1_a_history_saved_in_fewer_chunks_leaves_no_old_ones(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The history cache's chunk files beyond the ones its head names are removed when it is
    saved again (a repository that shrank, or a larger chunk size): none is left behind."""
    monkeypatch.setattr(changes, "CHUNK_ROWS", 1)
    status_line(Store(repo.root))
    cache_dir = repo.root.parent / "cache"
    assert len(list(cache_dir.rglob("changes-*.*.bin"))) > 4
    monkeypatch.setattr(changes, "CHUNK_ROWS", 4096)
    _commit(repo.root)
    status_line(Store(repo.root))
    assert [f.name.split(".")[1] for f in cache_dir.rglob("changes-*.*.bin")] == ["0"]
    for file in cache_dir.rglob("evidence-*"):
        file.unlink()
    assert {p: read(repo.root, p) for p in PATHS} == {
        p: uncached(repo.root, p, monkeypatch) for p in PATHS
    }
