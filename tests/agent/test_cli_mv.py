"""`canon mv OLD NEW` (issue 27 item 5): the article moves, inbound links follow it (the rule
the editor's rename uses), nothing else changes; and the orphan advice names the command."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli import TODAY, canon, one_sentence, write_article


def make(project: Path) -> None:
    write_article(
        project,
        "src/core/loader",
        "---\ncapsule: Loads config.\nupdated: 2026-11-01\n---\n# config\n",
    )  # noqa: E501
    write_article(
        project,
        "src/core",
        "---\ncapsule: The core.\n---\nSee [[src/core/loader|the loader]] and "
        "[[src/core/loader#Keys]]; `[[src/core/loader]]` is code.\n",
    )


def test_mv_moves_the_article_and_rewrites_inbound_links(project: Path) -> None:
    make(project)
    check = canon("check", cwd=project)
    orphan = next(line for line in check.out.splitlines() if "[orphan]" in line)
    assert "`canon mv src/core/loader NEW_PATH`" in orphan, orphan

    run = canon("mv", "src/core/loader", "src/core/config.py", cwd=project)
    assert run.code == 0, run.err
    assert run.out.strip() == (
        "Moved src/core/loader to src/core/config; links rewritten in src/core."
    )
    articles = project / ".canon" / "articles" / "src" / "core"
    assert not (articles / "loader.md").exists()
    moved = (articles / "config.md").read_text("utf-8")
    assert moved.startswith("---\ncapsule: Loads config.\nupdated: 2026-11-01\n")
    assert (
        (project / ".canon/articles/src/core.md")
        .read_text("utf-8")
        .endswith(
            "See [[src/core/config|the loader]] and [[src/core/config#Keys]]; "
            "`[[src/core/loader]]` is code.\n"
        )
    )
    assert "[orphan]" not in canon("check", cwd=project).out
    assert "Loads config." in canon("read", "src/core/config.py", cwd=project).out


def test_mv_refuses_in_one_sentence_and_moves_nothing(project: Path) -> None:
    make(project)
    before = sorted(p.name for p in (project / ".canon/articles/src/core").iterdir())
    for args in (("src/nope", "src/x"), ("src/core/loader", "src/core"), ("", "src/x")):
        run = canon("mv", *args, cwd=project)
        assert run.code == 2, (args, run.out)
        one_sentence(run)
    assert sorted(p.name for p in (project / ".canon/articles/src/core").iterdir()) == before


# --------------------------------------------------------------- all or nothing (issue 35 #7)

KILLER = """
import os, signal, sys
from canon_ls.core.storage import fsio
calls = {"n": 0}
def dying(real, after):
    def wrapper(*args, **kwargs):
        result = real(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == after:
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    return wrapper
what, after = sys.argv[1], int(sys.argv[2])
setattr(fsio, what, dying(getattr(fsio, what), after))
from canon_ls.agent.cli import main
sys.exit(main(sys.argv[3:]))
"""


def _star(project: Path, n: int) -> list[Path]:
    """`src/target` and n articles linking to it."""
    write_article(project, "src/target", "---\ncapsule: The target.\n---\n# src/target\n")
    return [
        write_article(project, f"notes/n{i:03}", f"---\ncapsule: N{i}.\n---\nSee [[src/target]].\n")
        for i in range(n)
    ]


def _tree(project: Path) -> dict[str, bytes]:
    articles = project / ".canon"
    return {p.relative_to(articles).as_posix(): p.read_bytes() for p in articles.rglob("*.md")}


def test_mv_reads_every_backlink_before_changing_anything(project: Path) -> None:
    """SPEC §12: a move either completes or leaves the store as it was; a backlinking article
    that is not UTF-8 is refused up front, before the target moves or any link changes."""
    _star(project, 5)
    write_article(project, "src/c", b"---\ncapsule: C.\n---\n\xff\xfe [[src/target]]\n")
    before = _tree(project)
    run = canon("mv", "src/target", "src/moved", cwd=project)
    assert run.code == 2
    assert "src/c is not UTF-8" in one_sentence(run)
    assert _tree(project) == before
    assert not (project / ".canon/moving.json").exists()


@pytest.mark.parametrize(
    ("hook", "after"),
    [("link_new_in", 1), ("link_new_in", 2), ("replace_in", 1), ("replace_in", 37)],
    ids=["after-the-record", "after-the-new-file", "after-one-link", "after-37-links"],
)
def test_mv_killed_midway_is_finished_by_the_next_mv(project: Path, hook: str, after: int) -> None:
    """SPEC §12 (resumable, and says so): `canon mv` killed with SIGKILL at a fixed point
    (the process kills itself after its Nth file operation) leaves a record that `canon check`
    names and the next `canon mv` finishes: every link then names the new address."""
    notes = _star(project, 60)
    killed = subprocess.run(
        [sys.executable, "-c", KILLER, hook, str(after), "mv", "src/target", "src/moved"],
        cwd=project,
        env=dict(os.environ, CANON_TODAY=TODAY),
        capture_output=True,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    check = canon("check", cwd=project)
    assert check.code == 1
    assert "the move of src/target to src/moved was cut short" in check.err
    run = canon("mv", "src/target", "src/moved", cwd=project)
    assert run.code == 0, run.err
    assert run.out.strip() == "Finished the interrupted move of src/target to src/moved."
    articles = project / ".canon/articles"
    assert not (articles / "src/target.md").exists()
    assert (articles / "src/moved.md").read_text("utf-8").startswith("---\ncapsule: The target.")
    assert all(note.read_text("utf-8").endswith("See [[src/moved]].\n") for note in notes)
    assert not (project / ".canon/moving.json").exists()
    assert "cut short" not in canon("check", cwd=project).err


def test_a_move_cut_short_is_finished_before_another_move(project: Path) -> None:
    """The next `canon mv` of other articles first finishes the one cut short, and says so."""
    notes = _star(project, 3)
    write_article(project, "src/other", "---\ncapsule: Other.\n---\n# src/other\n")
    killed = subprocess.run(
        [sys.executable, "-c", KILLER, "replace_in", "1", "mv", "src/target", "src/moved"],
        cwd=project,
        env=dict(os.environ, CANON_TODAY=TODAY),
        capture_output=True,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL
    run = canon("mv", "src/other", "src/else", cwd=project)
    assert run.code == 0, run.err
    assert run.out.splitlines() == [
        "Finished the interrupted move of src/target to src/moved.",
        "Moved src/other to src/else; no article links to it.",
    ]
    assert all(note.read_text("utf-8").endswith("See [[src/moved]].\n") for note in notes)


# ------------------------------------------------- `..` is one rule wherever you stand (issue 35)


@pytest.mark.parametrize("where", [".", "src", "elsewhere"])
def test_a_path_leading_out_of_the_project_is_refused_from_anywhere(
    project: Path, where: str
) -> None:
    """SPEC §12: no command argument makes canon read or write outside the project. `..` is
    resolved against where the command stands (the project root included, or the root when
    --project names it from elsewhere), so leaving the project is refused in one sentence by
    write, read, mv and the rest alike, and a path that climbs out and back in names its
    article."""
    make(project)
    cwd = project / where if where != "elsewhere" else project.parent
    flags = ["--project", str(project)] if where == "elsewhere" else []
    ups = "../" * (where.count("/") + 1) if where == "src" else ""
    before = _tree(project)
    for args in (
        ("write", f"{ups}../../etc/passwd", "--capsule", "x"),
        ("read", f"{ups}../other/file.py"),
        ("mv", f"{ups}src/core/loader" if where != "src" else "core/loader", f"{ups}../x"),
        ("journal", "Noted.", "--subject", f"{ups}../x"),
        ("history", f"{ups}../x"),
    ):
        run = canon(*flags, *args, cwd=cwd)
        assert run.code == 2, (args, run.out)
        assert "outside the project" in one_sentence(run), args
    assert _tree(project) == before
    back = f"{ups}../{project.name}/src/core/loader" if where != "elsewhere" else "src/core/loader"
    run = canon(*flags, "read", back, cwd=cwd)
    assert run.code == 0 and "Loads config." in run.out, run.err


@pytest.mark.parametrize(
    "record", ['["src/target", "../../escape"]', "[1]", "{", '["/etc/x", "y"]']
)
def test_a_bad_move_record_is_refused_in_one_sentence(project: Path, record: str) -> None:
    """SPEC §12: a move record that a cloned repository carries (or that is damaged) makes
    canon read or write nothing outside the store: `canon mv` and `canon check` say so."""
    notes = _star(project, 2)
    (project / ".canon/moving.json").write_text(record)
    before = _tree(project)
    run = canon("mv", "src/target", "src/moved", cwd=project)
    assert run.code == 2
    assert "moving.json cannot be read; remove it by hand" in one_sentence(run)
    assert canon("check", cwd=project).code == 1
    assert _tree(project) == before and not (project.parent / "escape.md").exists()
    assert all(note.read_text("utf-8").endswith("See [[src/target]].\n") for note in notes)
