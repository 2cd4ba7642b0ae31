"""SPEC §10 diagnostics from an article's unsaved text, and "Move article to …" after a rename
in place (§6.1 item 5): real stores in real git repositories, real check passes."""

from __future__ import annotations

from pathlib import Path

from renamed_repo import ARTICLE, logging_git, project, renamed
from stale_repo import git, write

from canon_ls.core.checking.check import article_findings, run
from canon_ls.core.checking.recheck import recheck
from canon_ls.core.git import renames
from canon_ls.core.storage.cache import project_cache_file
from canon_ls.core.storage.project import open_store


def test_findings_from_unsaved_text_leave_the_file_alone(tmp_path: Path):
    """A broken link typed into the buffer is found from the text; the stored file is not
    read for it nor written; deleting the link clears it."""
    root = project(tmp_path)
    store = open_store(root, {})
    typed = ARTICLE + "See [[src/not/there]].\n"
    found = article_findings(store, "src/auth/login", text=typed)
    broken = [f for f in found if f.code == "broken-link"]
    assert [(f.line, f.start, f.end) for f in broken] == [(7, 4, 21)]
    assert article_findings(store, "src/auth/login", text=ARTICLE) == []
    assert article_findings(store, "src/auth/login") == []
    assert (root / ".canon/articles/src/auth/login.md").read_text() == ARTICLE
    done = recheck(store, "src/auth/login", text="---\ncapsule: x\n")
    assert done is not None
    assert "malformed-front-matter" in [f.code for f in done.findings]


def test_unsaved_text_of_an_article_not_yet_on_disk(tmp_path: Path):
    root = project(tmp_path)
    store = open_store(root, {})
    found = article_findings(store, "src/auth/new", text=ARTICLE + "[[nowhere]]\n")
    assert [f.code for f in found] == ["broken-link"]


def orphan_moves(root: Path) -> dict[str, list[str]]:
    done = run(root, {}, staleness=True)
    assert "src/auth/login" in [f.address for f in done.findings if f.code == "orphan"]
    return done.moves


def test_a_committed_rename_in_place_is_offered(tmp_path: Path):
    """git's rename detection: login.ts became signin.ts in a commit; nothing named login
    exists anywhere else, so the name-alike guesses find nothing."""
    root = project(tmp_path)
    git(root, "mv", "src/auth/login.ts", "src/auth/signin.ts")
    git(root, "commit", "-qm", "rename")
    write(root, "src/auth/unrelated.ts", "x\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "later")
    assert orphan_moves(root)["src/auth/login"] == ["src/auth/signin"]


def test_an_uncommitted_rename_in_place_is_offered(tmp_path: Path):
    """The work tree: login.ts is gone and signin.ts, new since HEAD, has no article."""
    root = project(tmp_path)
    (root / "src/auth/login.ts").rename(root / "src/auth/signin.ts")
    assert orphan_moves(root)["src/auth/login"] == ["src/auth/signin"]


def test_a_renamed_file_that_has_an_article_is_no_guess(tmp_path: Path):
    root = project(tmp_path)
    (root / "src/auth/login.ts").rename(root / "src/auth/signin.ts")
    write(root, ".canon/articles/src/auth/signin.md", ARTICLE.replace("login", "signin"))
    assert "src/auth/login" not in orphan_moves(root)


def test_the_rename_search_asks_git_for_bounded_memory(tmp_path: Path, monkeypatch):
    """Issue 40 item 3: the rename search's `git log -M` mapped the whole pack with git's
    default delta cache (166 MB at 500k files); it now maps at most 16 MB of the pack with a 16
    MB cache (68 MB at 500k files, 37 at 100k, as fast), and still finds the rename."""
    root = renamed(tmp_path)
    log = logging_git(tmp_path, monkeypatch)
    assert orphan_moves(root)["src/auth/login"] == ["src/auth/signin"]
    renames = [line for line in log.read_text().splitlines() if " -M " in line]
    assert renames, log.read_text()
    for flag in ("packedGitLimit=16m", "packedGitWindowSize=8m", "deltaBaseCacheLimit=16m"):
        assert f"core.{flag}" in renames[0].split()


def test_the_rename_search_is_kept_for_its_head_and_folders(tmp_path: Path, monkeypatch):
    """Issue 40 item 3: a check again at the same HEAD (a re-check, the next start) answers the
    rename search from the cache directory, with no `git log -M` beside the check's store; a
    new commit asks git again, and so does a damaged cache file."""
    root = renamed(tmp_path)
    log = logging_git(tmp_path, monkeypatch)

    def searches() -> int:
        return sum(" -M " in line for line in log.read_text().splitlines())

    assert orphan_moves(root)["src/auth/login"] == ["src/auth/signin"] and searches() == 1
    assert orphan_moves(root)["src/auth/login"] == ["src/auth/signin"] and searches() == 1
    write(root, "README.md", "x\n")
    git(root, "add", "README.md")
    git(root, "commit", "-qm", "more")
    assert orphan_moves(root)["src/auth/login"] == ["src/auth/signin"] and searches() == 2
    kept = project_cache_file(root, "renames")
    assert kept is not None and kept.is_file()
    kept.write_bytes(b"damaged")
    monkeypatch.setattr(renames, "_kept", {})  # as in a new process
    assert orphan_moves(root)["src/auth/login"] == ["src/auth/signin"] and searches() == 3
