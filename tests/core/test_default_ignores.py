"""Default ignores (SPEC §9 asset set, decided in core/checking/assets.py): in a project with no
`.gitignore`, or no git at all, `.venv`, `venv`, `node_modules`, `__pycache__`, `.tox`, `dist`,
`build` and `.mypy_cache` are not assets. With a `.gitignore`, git's rules alone decide.

Real files and real git in temporary directories.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_assets import T0, commit, git, write

from canon_ls.core.checking.assets import DEFAULT_IGNORES, Assets
from canon_ls.core.storage.project import open_store

NOISE = [
    ".venv/lib/python3.12/site-packages/pkg/__init__.py",
    "venv/bin/activate",
    "node_modules/left-pad/index.js",
    "web/node_modules/react/index.js",
    "src/__pycache__/app.cpython-312.pyc",
    ".tox/py312/log.txt",
    "dist/app-1.0.tar.gz",
    "build/lib/app.py",
    ".mypy_cache/3.12/app.meta.json",
]
KEPT = ["src/app.py", "scripts/build", "build.py", "docs/dist.md"]


def test_the_documented_list() -> None:
    assert {
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        ".tox",
        "dist",
        "build",
        ".mypy_cache",
    } == DEFAULT_IGNORES


def test_without_git_the_defaults_are_not_assets(tmp_path: Path) -> None:
    for rel in NOISE + KEPT:
        write(tmp_path, rel)
    assets = Assets(tmp_path)
    assert not assets.git and assets.default_ignores
    assert assets.files() == sorted(KEPT)  # a file named `build` is an asset, `build/` is not
    assert assets.dirs() == {"src", "scripts", "docs"}
    assert assets.of("build") == ["build.py"] and assets.of("node_modules") == []


def test_in_git_without_a_gitignore_untracked_defaults_are_not_assets(tmp_path: Path) -> None:
    """Untracked files under the defaults do not count; a file committed there does."""
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, T0, "src/app.py", "build/keep.sh")
    for rel in NOISE:
        write(repo, rel)
    assets = Assets(repo)
    assert assets.git and assets.default_ignores
    assert assets.files() == ["build/keep.sh", "src/app.py"]


def test_a_gitignore_hands_the_decision_to_git(tmp_path: Path) -> None:
    """With a .gitignore (here ignoring only *.log), an untracked .venv is git's business."""
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, ".gitignore", "*.log\n")
    commit(repo, T0, "src/app.py")
    write(repo, ".venv/bin/python")
    write(repo, "run.log")
    assets = Assets(repo)
    assert not assets.default_ignores
    assert ".venv/bin/python" in assets.files() and "run.log" not in assets.files()


def test_a_gitignore_above_a_project_inside_a_repository_counts(tmp_path: Path) -> None:
    """A project in a subdirectory of a work tree: the top's .gitignore applies to it."""
    repo = tmp_path / "mono"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, ".gitignore", "node_modules/\n")
    commit(repo, T0, "app/src/main.py")
    write(repo, "app/.venv/bin/python")
    assets = Assets(repo / "app")
    assert not assets.default_ignores
    assert assets.files() == [".venv/bin/python", "src/main.py"]


@pytest.mark.parametrize(
    ("scope", "files"),
    [("build", ["build.py"]), ("node_modules/left-pad", []), ("src/app", ["src/app.py"])],
)
def test_a_one_article_listing_agrees(tmp_path: Path, scope: str, files: list[str]) -> None:
    """The scoped listing `canon read` uses for staleness skips them too (no git here)."""
    for rel in NOISE + KEPT:
        write(tmp_path, rel)
    assert Assets(tmp_path, scope=scope).files() == files


def test_orphans_and_check_follow(tmp_path: Path) -> None:
    """SPEC §6.1 item 5 over the store: an article about something inside node_modules/ that
    is gone is an orphan; one whose directory is on disk is not, although the listing skips
    it (issue 36 item 8: `canon check` agrees with read, write and pi-canon, which look at
    the disk)."""
    write(tmp_path, "src/app.py")
    write(tmp_path, "node_modules/left-pad/index.js")
    write(tmp_path, ".canon/articles/src/app.md", "---\ncapsule: App.\nupdated: 2099-01-01\n---\n")
    write(
        tmp_path,
        ".canon/articles/node_modules/left-pad.md",
        "---\ncapsule: Pad.\nupdated: 2099-01-01\n---\n",
    )
    write(tmp_path, ".canon/articles/node_modules/gone.md", "---\ncapsule: Gone.\n---\n")
    store = open_store(tmp_path)
    from canon_ls.core.checking.check import orphans

    assert orphans(store, Assets(tmp_path, store.root)) == ["node_modules/gone"]
