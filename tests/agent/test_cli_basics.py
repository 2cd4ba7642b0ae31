"""The CLI's basics (issue 27 item 3): `canon --version`, `canon help [COMMAND]`, and shell
completion through argcomplete for bash, zsh and fish."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from test_cli import canon, canon_command, one_sentence


def test_version_prints_the_installed_version(project: Path) -> None:
    run = canon("--version", cwd=project)
    assert run.code == 0, run.err
    assert run.out == f"canon {version('canon-ls')}\n"


def test_help_and_help_command_match_dash_dash_help(project: Path) -> None:
    whole = canon("help", cwd=project)
    assert whole.code == 0 and "mv" in whole.out and "journal" in whole.out
    assert whole.out == canon("--help", cwd=project).out
    for command in ("journal", "graph", "mv"):
        run = canon("help", command, cwd=project)
        assert run.code == 0, run.err
        assert run.out == canon(command, "--help", cwd=project).out
        assert run.out.startswith(f"usage: canon {command}")
    bad = canon("help", "frobnicate", cwd=project)
    assert bad.code == 2
    assert "canon help" in one_sentence(bad)


def complete(line: str, tmp_path: Path) -> list[str]:
    """What argcomplete answers a shell for the command line `line` (cursor at its end)."""
    out = tmp_path / "completions"
    env = dict(
        os.environ,
        _ARGCOMPLETE="1",
        _ARGCOMPLETE_IFS="\n",
        COMP_LINE=line,
        COMP_POINT=str(len(line)),
        _ARGCOMPLETE_STDOUT_FILENAME=str(out),
    )
    run = subprocess.run(
        canon_command(), env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    return [word.strip() for word in out.read_text("utf-8").split("\n")]


def test_completion_names_commands_and_options(tmp_path: Path) -> None:
    assert {"history", "help"} <= set(complete("canon h", tmp_path))
    assert "--since-updated" in complete("canon history --si", tmp_path)
    assert "--open" in complete("canon graph --o", tmp_path)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_documented_install_line_makes_a_script(shell: str) -> None:
    register = Path(sys.executable).with_name("register-python-argcomplete")
    run = subprocess.run(
        [str(register), "--shell", shell, "canon"], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert "canon" in run.stdout and len(run.stdout) > 100
    docs = (Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")
    assert "register-python-argcomplete" in docs
