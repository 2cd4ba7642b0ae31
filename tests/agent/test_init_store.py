"""`canon init` with no agent creates the store (SPEC §11.1, §2, §7) and prints the next three
commands. The real `canon` process in a temporary project."""

from __future__ import annotations

import os
from pathlib import Path

from test_cli import canon
from test_init import snapshot

from canon_ls.core.checking import schema


def tree(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix() + ("/" if p.is_dir() else "") for p in root.rglob("*")
    )


def test_init_creates_the_store_and_says_what_next(tmp_path: Path) -> None:
    run = canon("init", cwd=tmp_path)
    assert run.code == 0, run.err
    assert tree(tmp_path) == [
        ".canon/",
        ".canon/articles/",
        ".canon/journal/",
        ".canon/schema.json",
    ]
    assert (tmp_path / ".canon/schema.json").read_text("utf-8") == schema.default_text()
    lines = run.out.splitlines()
    assert lines[0] == "Created the canon store .canon/: articles/, journal/, schema.json."
    commands = [line.split("#")[0].strip() for line in lines if line.startswith("  canon ")]
    assert commands == [
        'canon write PATH --capsule "What it is; what must stay true."',
        "canon read PATH",
        "canon init claude-code",
    ]
    status = canon("status", cwd=tmp_path)
    assert status.out.startswith("canon store ") and "0 articles" in status.out


def test_init_is_idempotent(tmp_path: Path) -> None:
    canon("init", cwd=tmp_path)
    canon("write", "notes.md", "--capsule", "Notes.", cwd=tmp_path)
    before = snapshot(tmp_path)
    run = canon("init", cwd=tmp_path)
    assert run.code == 0
    assert run.out.splitlines()[0] == (
        "The canon store .canon/ is already set up (1 article); nothing to create."
    )
    assert snapshot(tmp_path) == before


def test_init_completes_a_store_and_never_brings_back_a_deleted_schema(tmp_path: Path) -> None:
    """SPEC §7: deleting schema.json opts out of schema checks; nothing writes it back. A
    store written before journal/ existed gets journal/ only."""
    (tmp_path / ".canon/articles").mkdir(parents=True)
    run = canon("init", cwd=tmp_path)
    assert run.out.splitlines()[0] == "Added journal/ to the canon store .canon/."
    assert tree(tmp_path) == [".canon/", ".canon/articles/", ".canon/journal/"]


def test_init_from_a_subdirectory_uses_the_project_store(tmp_path: Path) -> None:
    """SPEC §2: the nearest ancestor holding .canon/ is the project."""
    canon("init", cwd=tmp_path)
    sub = tmp_path / "src" / "deep"
    sub.mkdir(parents=True)
    run = canon("init", cwd=sub)
    assert "already set up" in run.out
    assert not (sub / ".canon").exists()


def test_init_honours_root(tmp_path: Path) -> None:
    """SPEC §2, §13: option root (here canon.toml) moves the store; init creates it there."""
    (tmp_path / "canon.toml").write_text('root = "memory"\n', "utf-8")
    run = canon("init", cwd=tmp_path)
    assert run.code == 0, run.err
    assert run.out.startswith("Created the canon store memory/:")
    assert (tmp_path / "memory/articles").is_dir() and not (tmp_path / ".canon").exists()


def test_init_refuses_a_store_leading_outside(tmp_path: Path) -> None:
    """SPEC §12: a journal/ symlinked out of the store is not created through (one sentence,
    exit 2) and nothing lands outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "proj"
    (project / ".canon/articles").mkdir(parents=True)
    os.symlink(outside / "gone", project / ".canon/journal")  # dangling: mkdir would follow
    run = canon("init", cwd=project)
    assert run.code == 2 and run.out == ""
    (line,) = run.err.strip().splitlines()
    assert line.startswith("The store directory .canon/journal is a symbolic link leading outside")
    assert line.endswith("replace the link with a real directory.")
    assert list(outside.iterdir()) == []


def test_init_with_an_agent_also_creates_the_store(tmp_path: Path) -> None:
    """SPEC §11.1: with a project-level agent (claude-code, codex, pi) `canon init` also
    creates the store when it is missing; a second run says nothing about it."""
    for agent in ("claude-code", "codex", "pi"):
        project = tmp_path / agent
        project.mkdir()
        run = canon("init", agent, cwd=project)
        assert run.code == 0, run.err
        assert run.out.splitlines()[-2] == (
            "Created the canon store .canon/: articles/, journal/, schema.json."
        ), run.out
        assert (project / ".canon/schema.json").read_text("utf-8") == schema.default_text()
        assert [p for p in tree(project) if p.startswith(".canon/")] == [
            ".canon/",
            ".canon/articles/",
            ".canon/journal/",
            ".canon/schema.json",
        ]
        again = canon("init", agent, cwd=project)
        assert again.code == 0 and "canon store" not in again.out, again.out


def test_init_with_an_agent_leaves_an_existing_store_as_it_is(tmp_path: Path) -> None:
    """A store that already has its articles/ gets nothing added by `canon init AGENT` (no
    journal/ appears: the agent's configuration is all it writes)."""
    (tmp_path / ".canon/articles").mkdir(parents=True)
    run = canon("init", "claude-code", cwd=tmp_path)
    assert run.code == 0 and "canon store" not in run.out, run.out
    assert tree(tmp_path / ".canon") == ["articles/"]


def test_init_with_an_agent_keeps_a_deleted_schema_deleted(tmp_path: Path) -> None:
    """SPEC §7: an existing store whose schema.json was deleted stays without one."""
    assert canon("init", cwd=tmp_path).code == 0
    (tmp_path / ".canon/schema.json").unlink()
    run = canon("init", "claude-code", cwd=tmp_path)
    assert run.code == 0 and "canon store" not in run.out, run.out
    assert not (tmp_path / ".canon/schema.json").exists()


def test_init_for_every_project_creates_no_store_here(tmp_path: Path) -> None:
    """`canon init claude-plugin DIR` and `canon init pi --global` configure the agent for
    every project: they create no store in the directory they were run from."""
    home = tmp_path / "home"
    env = {"HOME": str(home), "PI_CODING_AGENT_DIR": str(home / ".pi/agent")}
    assert canon("init", "pi", "--global", cwd=tmp_path, env=env).code == 0
    assert canon("init", "claude-plugin", str(tmp_path / "market"), cwd=tmp_path).code == 0
    assert not (tmp_path / ".canon").exists()


def test_init_with_an_agent_refuses_a_store_leading_outside(tmp_path: Path) -> None:
    """SPEC §12: the store's refusal stands with an agent too, and nothing lands outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "proj"
    project.mkdir()
    os.symlink(outside, project / ".canon")
    run = canon("init", "claude-code", cwd=project)
    assert run.code == 2, run.out
    assert "symbolic link leading outside" in run.err and run.out == ""
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in project.iterdir()) == [".canon"]  # no agent config either


def test_a_file_where_the_store_belongs_is_named_as_such(tmp_path: Path) -> None:
    """A plain file named .canon: `canon init` and `canon write` say it is not a directory
    (not that it is a symbolic link), exit 2, and leave it alone."""
    (tmp_path / ".canon").write_text("mine\n")
    for args in (("init",), ("write", "src/a.py", "--capsule", "A."), ("init", "claude-code")):
        run = canon(*args, cwd=tmp_path)
        assert run.code == 2, run.out
        assert "not a directory" in run.err and "symbolic link" not in run.err, run.err
    assert (tmp_path / ".canon").read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".canon"]  # no agent config either
