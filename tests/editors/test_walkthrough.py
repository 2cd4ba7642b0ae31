"""docs/GETTING-STARTED.md, run as written: its project block (a first article made with the real
`canon` CLI, SPEC §6 write) and its Neovim install, then a headless Neovim on that project
(SPEC §10 hover; §3/§4 through canon.resolve for :CanonOpen). Its VS Code step (npm run package,
install the .vsix) is what test_editor_vscode.py does before it drives code-server."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from editor_support import REPO, doc_block, tool_env, venv_bin
from test_editor_neovim import run_nvim

pytestmark = pytest.mark.editor

GUIDE = REPO / "docs" / "GETTING-STARTED.md"


def test_walkthrough_project_and_neovim(tmp_path: Path, canon_ls: Path) -> None:
    home = tmp_path / "home"
    env = tool_env(home)
    # step 1 leaves canon and canon-ls on PATH (pipx): this venv's, and the clone at ~/src/canon-ls
    env["PATH"] = os.pathsep.join([str(venv_bin()), "/usr/bin", "/bin"])
    (home / "src").mkdir(parents=True)
    (home / "src" / "canon-ls").symlink_to(REPO)

    project = doc_block(GUIDE, "# a project to try it on")
    done = subprocess.run(
        ["bash", "-euc", project], cwd=home, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    demo = home / "demo"
    article = demo / ".canon" / "articles" / "src" / "app.md"
    assert article.is_file(), done.stdout + done.stderr
    assert "Entry point: wires config and routes" in done.stdout  # what `canon read` printed

    subprocess.run(
        ["bash", "-euc", doc_block(GUIDE, "# Neovim: install the plugin")], env=env, check=True
    )
    init = home / "init.lua"
    init.write_text(doc_block(GUIDE, "-- Neovim: load the plugin"), encoding="utf-8")
    out = run_nvim(demo, home, env, init, "install")
    assert "ok - hover shows the capsule" in out
