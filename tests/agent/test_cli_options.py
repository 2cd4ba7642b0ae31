"""SPEC §2 and §8 store options on the command line: --root and --mount (repeatable)."""

from __future__ import annotations

from pathlib import Path

from tests.agent.test_cli import canon, one_sentence, write_article


def test_spec_8_mount_serves_its_articles_by_name_and_by_absolute_path(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    lake = tmp_path / "lake"
    (lake / "prices.csv").parent.mkdir(parents=True)
    (lake / "prices.csv").write_text("day,price\n", encoding="utf-8")
    write_article(lake, "prices", "---\ncapsule: Daily prices from the lake.\n---\n# prices\n")

    by_name = canon("read", "lake:prices", "--mount", str(lake), cwd=project)
    by_path = canon("read", str(lake / "prices.csv"), "--mount", str(lake), cwd=project)
    assert by_name.code == 0 and "Daily prices from the lake." in by_name.out
    assert by_path.out == by_name.out
    listing = canon("map", "--mount", str(lake), cwd=project)
    assert "lake:prices: Daily prices from the lake." in listing.out


def test_spec_8_mount_journal_lands_in_the_project_store(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    lake = tmp_path / "lake"
    (lake / ".canon" / "articles").mkdir(parents=True)
    run = canon("journal", "Reloaded prices.", "--subject", "lake:prices", "--mount", str(lake),
                cwd=project)  # fmt: skip
    assert run.code == 0, run.err
    assert len(list((project / ".canon" / "journal").glob("*.md"))) == 1
    assert not (lake / ".canon" / "journal").exists()


def test_spec_8_missing_mount_directory_is_one_sentence_exit_2(tmp_path: Path) -> None:
    sentence = one_sentence(canon("map", "--mount", str(tmp_path / "nowhere"), cwd=tmp_path))
    assert "not a directory" in sentence


def test_spec_2_root_option_moves_the_store(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    run = canon("write", "src/a.py", "--capsule", "A.", "--root", "memory", cwd=project)
    assert run.code == 0, run.err
    assert (project / "memory" / "articles" / "src" / "a.md").is_file()
    assert not (project / ".canon").exists()
    assert "capsule: A." in canon("read", "src/a.py", "--root", "memory", cwd=project).out
