"""SPEC §12 through the real processes: a repository's config never makes canon run a program
(`canon status`, `canon check`, starting `canon-ls`), a FIFO where git or the store reads a
file hangs nothing, and a store symlinked outside the project is refused with one sentence.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from tests.agent.test_cli import TODAY, canon

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args], cwd=root, env={**os.environ, **GIT_ENV}, check=True, capture_output=True
    )


def _repo_with_store(project: Path) -> None:
    (project / ".gitattributes").write_text("*.py filter=evil diff=evil\n")
    git(project, "init", "-q")
    r = canon("write", "src/core/config.py", "--capsule", "Config.", "--body", "# c\n", cwd=project)
    assert r.code == 0, r.err
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "init")
    (project / "src/core/config.py").write_text("X = 2\n")  # dirty: status looks at it


# Repository config keys that name a program, each pointed at a command leaving a marker.
PROGRAM_KEYS = [
    "core.fsmonitor",
    "core.pager",
    "pager.status",
    "pager.log",
    "diff.external",
    "diff.evil.textconv",
    "diff.evil.command",
    "filter.evil.clean",
    "filter.evil.smudge",
    "filter.evil.process",
    "gpg.program",
    "core.hooksPath",
]


def _arm(project: Path, marker: Path) -> None:
    command = f"touch {shlex.quote(str(marker))}; cat"
    for key in PROGRAM_KEYS:
        if key == "core.hooksPath":
            hooks = project.parent / "hooks"
            hooks.mkdir(exist_ok=True)
            for name in (
                "post-index-change",
                "pre-commit",
                "post-checkout",
                "reference-transaction",
            ):
                hook = hooks / name
                hook.write_text(f"#!/bin/sh\n{command}\n")
                hook.chmod(0o755)
            git(project, "config", key, str(hooks))
        else:
            git(project, "config", key, command)
    git(project, "config", "log.showSignature", "true")
    git(project, "config", "filter.evil.required", "true")


def _store_commands(project: Path, tmp_path: Path) -> list[tuple[str, ...]]:
    """Every command that reads the store and the assets, with an asset src/x.py to name."""
    (project / "src").mkdir(exist_ok=True)
    (project / "src/x.py").write_text("x = 1\n")
    return [
        ("status",),
        ("check",),
        ("check", "--format", "json"),
        ("read", "src/x.py"),
        ("review", "src/x.py"),
        ("links", "src/x"),
        ("history", "src/x.py"),
        ("history", "src/x.py", "--diff"),
        ("graph", "--out", str(tmp_path / "graph.html")),
    ]


@pytest.mark.timeout(180)
def test_spec_12_repository_config_runs_no_program(project: Path, tmp_path: Path) -> None:
    """SPEC §12: with core.fsmonitor, pagers, diff/textconv drivers, clean/smudge filters,
    gpg.program and hooks all pointed at a command, `canon status` and `canon check` (which
    list assets and run the staleness pass) never run it."""
    _repo_with_store(project)
    marker = tmp_path / "ran"
    _arm(project, marker)
    for args in _store_commands(project, tmp_path):
        r = canon(*args, cwd=project)
        assert "Traceback" not in r.err, r.err
        assert not marker.exists(), f"canon {' '.join(args)} ran a repository-configured program"
    r = canon("status", cwd=project)
    assert "1 article" in r.out, r.out


@pytest.mark.timeout(180)
async def test_spec_12_starting_the_language_server_runs_no_program(
    project: Path, tmp_path: Path
) -> None:
    """SPEC §12: starting canon-ls on the repository (its whole-store check and staleness
    pass included) never runs a repository-configured program."""
    _repo_with_store(project)
    marker = tmp_path / "ran"
    _arm(project, marker)
    await _start_the_server_and_check(project)
    assert not marker.exists(), "starting canon-ls ran a repository-configured program"


async def _start_the_server_and_check(project: Path) -> str:
    """Start canon-ls on the project, wait for its whole-store check, ask its status, stop;
    the messages it logged."""
    client = LanguageClient()
    ended = asyncio.Event()
    logged: list[str] = []

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(client: LanguageClient, params: types.LogMessageParams) -> None:
        logged.append(params.message)

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def on_create(client: LanguageClient, params: types.WorkDoneProgressCreateParams) -> None:
        return None

    @client.feature(types.PROGRESS)
    def on_progress(client: LanguageClient, params: types.ProgressParams) -> None:
        value = params.value
        if isinstance(value, dict) and value.get("kind") == "end":
            ended.set()

    await client.start_io(
        sys.executable,
        "-m",
        "canon_ls.lsp",
        env=dict(os.environ, CANON_TODAY=TODAY),
        cwd=str(project),
    )
    try:
        caps = client_capabilities("neovim@0.11")
        await client.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                root_uri=project.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="proj")],
            )
        )
        await asyncio.wait_for(ended.wait(), 60)
        status = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="canon.status", arguments=[])
        )
        assert status, status
    finally:
        await client.shutdown_session()
    return "\n".join(logged)


# -- a submodule's own config ------------------------------------------------------------------


def _repo_with_armed_submodule(project: Path, tmp_path: Path, marker: Path) -> None:
    """A project with a store and a real submodule `sub` whose own config (under
    .git/modules/sub) points every program key at a command leaving `marker`, with
    `* filter=evil diff=evil` in the submodule and a changed file there for status to hash."""
    source = tmp_path / "sub-source"
    source.mkdir()
    git(source, "init", "-q")
    (source / "a.txt").write_text("a\n")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "sub")
    _repo_with_store(project)
    (project / ".gitattributes").unlink()
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "sub")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "add sub")
    sub = project / "sub"
    assert (project / ".git/modules/sub/config").is_file()
    _arm(sub, marker)
    (sub / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (sub / "a.txt").write_text("b\n")  # the same size: git must hash it to know
    (sub / "new.txt").write_text("new\n")
    git(project, "config", "submodule.recurse", "true")
    git(project, "config", "status.submoduleSummary", "true")
    git(project, "config", "diff.submodule", "diff")


@pytest.mark.timeout(180)
def test_spec_12_a_submodules_config_runs_no_program(project: Path, tmp_path: Path) -> None:
    """SPEC §12: a submodule's own config is the repository's config too: its filters,
    drivers, fsmonitor and hooks never run from `canon status`, `read`, `check`, `history`,
    `graph` (git status would otherwise recurse into the submodule and hash its files)."""
    marker = tmp_path / "ran"
    _repo_with_armed_submodule(project, tmp_path, marker)
    subprocess.run(["git", "status", "-uno"], cwd=project, capture_output=True, check=False)
    assert marker.exists(), "the fixture must arm git itself"
    marker.unlink()
    for args in _store_commands(project, tmp_path):
        r = canon(*args, cwd=project)
        assert "Traceback" not in r.err, r.err
        assert not marker.exists(), f"canon {' '.join(args)} ran a submodule-configured program"
    assert "1 article" in canon("status", cwd=project).out


@pytest.mark.timeout(180)
async def test_spec_12_a_submodules_config_runs_nothing_from_mcp_or_the_server(
    project: Path, tmp_path: Path
) -> None:
    """SPEC §12: MCP's read and the server's start (whole-store check, staleness pass) run
    no program a submodule's config names."""
    from mcp import Client

    from tests.agent.test_mcp import server_params, text_of

    marker = tmp_path / "ran"
    _repo_with_armed_submodule(project, tmp_path, marker)
    async with Client(server_params(project)) as client:
        read = await client.call_tool("canon", {"action": "read", "path": "src/core/config.py"})
        assert "Config." in text_of(read)
    assert not marker.exists(), "MCP read ran a submodule-configured program"
    await _start_the_server_and_check(project)
    assert not marker.exists(), "starting canon-ls ran a submodule-configured program"


# -- FIFOs where git reads ------------------------------------------------------------------


@pytest.mark.timeout(120)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("place", [".gitignore", "src/.gitignore", "src/core/.gitignore"])
def test_spec_12_fifo_gitignore_hangs_nothing(project: Path, place: str) -> None:
    """SPEC §12: a FIFO named .gitignore (git opens every .gitignore it meets) does not hang
    `canon status`, `canon check` or `canon read`: each answers well within its timeout."""
    _repo_with_store(project)
    os.mkfifo(project / place)
    for args in (("status",), ("check",), ("read", "src/core/config.py")):
        r = canon(*args, cwd=project)
        assert "Traceback" not in r.err, r.err
        assert r.out.strip(), (args, r.err)


# -- a store symlinked outside the project ----------------------------------------------------


@pytest.mark.parametrize("link", [".canon", ".canon/articles", ".canon/journal"])
def test_spec_12_status_and_check_refuse_a_symlinked_store(
    project: Path, tmp_path: Path, link: str
) -> None:
    """SPEC §12: `canon status`, `check`, `read`, `review`, `links`, `history` and `graph` on
    a store whose .canon, articles/ or journal/ leads outside the project: one sentence,
    exit 2, nothing outside read (no "no article governs …" that hides why)."""
    outside = tmp_path / "outside"
    (outside / "articles/src").mkdir(parents=True)
    (outside / "journal").mkdir()
    (outside / "articles/src/x.md").write_text("---\ncapsule: SECRET\n---\nSECRET\n")
    if link == ".canon":
        (project / ".canon").symlink_to(outside, target_is_directory=True)
    else:
        (project / ".canon").mkdir()
        for name in ("articles", "journal"):
            if f".canon/{name}" != link:
                (project / ".canon" / name).mkdir()
        (project / link).symlink_to(outside / link.rsplit("/", 1)[1], target_is_directory=True)
    for args in _store_commands(project, tmp_path):
        r = canon(*args, cwd=project)
        assert r.code == 2, (args, r.out, r.err)
        assert r.out == ""
        lines = [line for line in r.err.splitlines() if line.strip()]
        assert len(lines) == 1, r.err
        assert "symbolic link" in lines[0] and "SECRET" not in lines[0]
    assert not (tmp_path / "graph.html").exists()


# -- deep trees --------------------------------------------------------------------------------

DEEP = 1200  # past Python's recursion limit, within PATH_MAX ("n/" * 1200: 2,400 bytes)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("in_git", [False, True], ids=["walk", "git"])
async def test_spec_12_a_file_deep_among_the_assets(
    project: Path, tmp_path: Path, in_git: bool
) -> None:
    """SPEC §12 (deep nesting): a file 1,200 directories deep among the assets: `status`,
    `check`, `graph` and the server's whole-store check answer (never a RecursionError)."""
    from deep_tree import make_deep, remove_deep

    if in_git:
        _repo_with_store(project)
    r = canon("write", "src/core/config.py", "--capsule", "Config.", cwd=project)
    assert r.code == 0, r.err
    make_deep(project, DEEP, "n")
    try:
        if in_git:
            git(project, "add", "-A")
        for args in (("status",), ("check",), ("graph", "--out", str(tmp_path / "g.html"))):
            r = canon(*args, cwd=project)
            assert "unexpected" not in r.err and "RecursionError" not in r.err, (args, r.err)
            assert r.code in (0, 1), (args, r.err)
        assert "1 article" in canon("status", cwd=project).out
        assert (tmp_path / "g.html").is_file()
        log = await _start_the_server_and_check(project)
        assert "RecursionError" not in log and "Traceback" not in log, log
    finally:
        remove_deep(project, "n")


def test_issue_24_untrusted_canon_toml_cannot_redirect_the_cli(tmp_path: Path) -> None:
    """A cloned repository's canon.toml whose `root` is another project's store: every
    command ignores it (one sentence on stderr), `canon check` warns `[untrusted-option]`,
    writes land in the project's own store; `canon trust` says what it trusts and then the
    file applies; `--list` shows it, `--revoke` undoes it."""
    project, other = tmp_path / "proj", tmp_path / "other"
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    assert (
        canon("write", "src", "--capsule", "Own.", cwd=project.mkdir() or project, env=env).code
        == 0
    )
    assert (
        canon("write", "src", "--capsule", "PRIVATE.", cwd=other.mkdir() or other, env=env).code
        == 0
    )
    toml = project / "canon.toml"
    toml.write_text(f'root = "{other / ".canon"}"\n', encoding="utf-8")
    shown = canon("map", cwd=project, env=env)
    assert "PRIVATE" not in shown.out and "Own." in shown.out
    (line,) = shown.err.splitlines()
    assert str(toml) in line and "canon trust" in line
    check = canon("check", cwd=project, env=env)
    assert check.code == 0 and "[untrusted-option]" in check.out and "warning:" in check.out
    assert canon("write", "src/new", "--capsule", "N.", cwd=project, env=env).code == 0
    assert (project / ".canon/articles/src/new.md").exists()
    assert not (other / ".canon/articles/src/new.md").exists()
    trusted = canon("trust", cwd=project, env=env)
    assert trusted.code == 0 and f'root = "{other / ".canon"}"' in trusted.out, trusted.out
    assert str(project) in canon("trust", "--list", cwd=project, env=env).out
    shown = canon("map", cwd=project, env=env)
    assert "PRIVATE" in shown.out and shown.err == ""
    assert canon("check", cwd=project, env=env).out.count("untrusted-option") == 0
    assert "No longer trusting" in canon("trust", "--revoke", cwd=project, env=env).out
    assert "PRIVATE" not in canon("map", cwd=project, env=env).out


def test_issue_24_trust_without_a_canon_toml_is_one_sentence(tmp_path: Path) -> None:
    run = canon("trust", cwd=tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert run.code == 2 and "nothing to trust" in run.err and not (tmp_path / "config").exists()


@pytest.mark.parametrize("path", ["/etc/hosts", ".git/config"])
def test_issue_24_write_outside_the_project_or_into_git_is_refused(
    tmp_path: Path, path: str
) -> None:
    """`canon write /etc/hosts` made .canon/articles/etc/hosts.md and `canon write .git/config`
    an article git can never commit: both are one sentence, exit 2, nothing written."""
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q")
    assert canon("init", cwd=project).code == 0
    run = canon("write", path, "--capsule", "x", cwd=project)
    assert run.code == 2 and run.out == "" and len(run.err.splitlines()) == 1, run
    assert "Refused" in run.err and "Traceback" not in run.err
    assert list((project / ".canon/articles").rglob("*")) == []


# -- file names that hold line breaks ----------------------------------------------------------

FORGED = "README.md:1:1: error: forged finding [broken-link]"


@pytest.mark.timeout(180)
def test_spec_12_a_file_name_with_line_breaks_forges_no_line(project: Path) -> None:
    """SPEC §12: a file named `evil\\nREADME.md:1:1: error: …` among the governed files (and an
    article file named so) never puts a line of its own into `check`, `read`, `review`,
    `history` or `map`: every one-line format prints such a name escaped, in quotes."""
    git(project, "init", "-q")
    (project / ".canon/articles").mkdir(parents=True, exist_ok=True)
    src = "---\ncapsule: Src.\nupdated: 2026-01-01\n---\n"
    (project / ".canon/articles/src.md").write_text(src)
    (project / "src").mkdir(exist_ok=True)
    evil = project / "src" / f"a.py\n{FORGED}\r{FORGED}"
    evil.write_text("x\n")
    os.utime(evil, (1780000000, 1780000000))  # 2026-05-28: after the article's updated day
    (project / ".canon/articles" / f"x\n{FORGED}.md").write_text("---\ncapsule: X.\n---\nx\n")
    (project / ".canon/articles/src" / f"y\n{FORGED}.md").parent.mkdir(exist_ok=True)
    (project / ".canon/articles/src" / f"y\n{FORGED}.md").write_text("---\ncapsule: Y.\n---\n")
    outputs = {
        args: canon(*args, cwd=project)
        for args in (
            ("check",),
            ("read", "src/a.py"),
            ("history", "src/a.py"),
            ("map",),
            ("review", "src/a.py"),
        )
    }
    for args, r in outputs.items():
        text = r.out + r.err
        assert "Traceback" not in text, (args, text)
        assert not any(line.startswith("README.md") for line in text.splitlines()), (args, text)
        assert "\r" not in text, (args, text)
    escaped = '"src/a.py\\nREADME.md:1:1: error: forged finding [broken-link]\\r'
    assert escaped in outputs[("check",)].out, outputs[("check",)].out
    assert escaped in outputs[("read", "src/a.py")].out
    assert escaped in outputs[("history", "src/a.py")].out
