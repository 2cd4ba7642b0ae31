"""Issue 27 item 8: every shipped text that tells a user how to install canon names the one
command that works (canon_ls.INSTALL), never `pip install canon-ls` (not on PyPI)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from canon_ls import INSTALL

REPO = Path(__file__).resolve().parents[2]
SHIPPED = [
    "README.md",
    "canon_ls/agent/pi_extension/index.ts",
    "editors/vscode/src/serverCommand.ts",
    "editors/neovim/lua/canon/health.lua",
]


def test_shipped_texts_name_the_one_install_command() -> None:
    for rel in SHIPPED:
        text = (REPO / rel).read_text("utf-8")
        assert INSTALL in text, rel
    tracked = subprocess.run(
        ["git", "ls-files", "canon_ls", "editors", "docs", "README.md", "scripts"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    for rel in tracked:
        path = REPO / rel
        if path.suffix in (".py", ".ts", ".js", ".lua", ".md", ".json", ".sh") and path.is_file():
            text = path.read_text("utf-8", "replace")
            for wrong in ("pip install canon-ls", "pipx install canon-ls"):
                assert wrong not in text.replace("`" + wrong + "` finds nothing", ""), rel


def test_the_plugin_readme_canon_init_writes_names_it(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("canon")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "canon_ls.agent.cli"]
    project = tmp_path / "proj"
    project.mkdir()
    run = subprocess.run(
        [*command, "init", "claude-plugin", str(tmp_path / "market")],
        cwd=project, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    readmes = list((tmp_path / "market").rglob("README.md"))
    assert any(INSTALL in r.read_text("utf-8") for r in readmes), readmes
    assert not any("pip install canon-ls" in r.read_text("utf-8") for r in readmes)
