"""`canon mv OLD NEW` (issue 27 item 5): the article moves, inbound links follow it (the rule
the editor's rename uses), nothing else changes; and the orphan advice names the command."""

from __future__ import annotations

from pathlib import Path

from test_cli import canon, one_sentence, write_article


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
