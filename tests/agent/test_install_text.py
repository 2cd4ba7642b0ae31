"""Issue 27 item 8: every shipped text that tells a user how to install canon names the one
command that works (canon_ls.INSTALL), never `pip install canon-ls` (not on PyPI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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


CLONE_ROUTES = ("pipx install ./canon-ls", "uv tool install ./canon-ls", "pip install ./canon-ls")


def test_readme_install_routes_work_from_a_clone_and_name_no_invented_url() -> None:
    """Issue 41 item 7: pip, pipx and uv from a clone, a word on getting pipx and uv, and no
    repository address the project does not have."""
    readme = (REPO / "README.md").read_text("utf-8")
    install = readme[readme.index("## Install") : readme.index("Names, one per thing")]
    for route in CLONE_ROUTES:
        assert route in install, route
    assert "python3 -m pip install --user pipx" in install and "uv" in install
    for rel in ("README.md", "docs/GETTING-STARTED.md", "docs/AGENTS.md"):
        assert "github.com/canon-ls/canon-ls" not in (REPO / rel).read_text("utf-8"), rel
        assert "marketplace add canon-ls/canon-ls" not in (REPO / rel).read_text("utf-8"), rel


def test_no_help_text_manifest_or_doc_names_an_address_the_project_does_not_have() -> None:
    """The help texts, the plugin manifests canon writes, the editors' docs and every doc: no
    invented address (VS Code's package.json keeps a `repository`, which `vsce package` needs)."""
    shipped = [*REPO.glob("canon_ls/**/*.py"), *REPO.glob("docs/*.md"), *REPO.glob("plugins/**/*")]
    shipped += [*REPO.glob("editors/neovim/**/*"), REPO / "README.md"]
    for path in (p for p in shipped if p.is_file() and "__pycache__" not in p.parts):
        text = path.read_text("utf-8", errors="replace")
        assert "canon-ls/canon-ls" not in text, path.relative_to(REPO)


def _json_blocks(section: str) -> list[dict]:
    parts = section.split("```json\n")[1:]
    return [json.loads(part.split("\n```")[0]) for part in parts]


@pytest.mark.parametrize(("agent", "heading"), [("claude-code", "## Claude Code\n"),
                                                 ("codex", "## Codex CLI\n")])  # fmt: skip
def test_agents_doc_shows_each_agent_s_hook_payloads_and_real_replies(
    tmp_path: Path, agent: str, heading: str
) -> None:
    """Issue 41 item 8: docs/AGENTS.md shows Claude Code and Codex payloads, not only Pi's, and
    each documented reply is what `canon hook` answers to the documented input (in a project
    laid out as the example's)."""
    doc = (REPO / "docs/AGENTS.md").read_text("utf-8")
    section = doc[doc.index(heading) : doc.index("\n## ", doc.index(heading) + 3)]
    blocks = _json_blocks(section)
    assert len(blocks) >= 4 and all("hook_event_name" in b for b in blocks[::2])
    shop = tmp_path / "shop"
    for rel in ("src/billing/invoice.py", "src/api/routes.py"):
        (shop / rel).parent.mkdir(parents=True, exist_ok=True)
        (shop / rel).write_text("x=1\n", "utf-8")
    env = {**os.environ, "CANON_TODAY": "2026-12-01", "XDG_STATE_HOME": str(tmp_path / "st"),
           "XDG_CACHE_HOME": str(tmp_path / "ca")}  # fmt: skip
    canon = [str(Path(sys.executable).with_name("canon"))]
    for address, capsule in (
        ("src/billing", "Money is Decimal, rounded half-even once, at the invoice total."),
        ("src/api/routes.py", "Routes are thin: validate, call a service, map errors to 4xx."),
    ):
        args = [*canon, "write", address, "--capsule", capsule]
        subprocess.run(args, cwd=shop, env=env, check=True, capture_output=True)
    for asked, said in zip(blocks[::2], blocks[1::2], strict=True):
        text = json.dumps(asked).replace("/home/me/shop", str(shop))
        reply = subprocess.run(
            [*canon, "hook", agent], cwd=shop, env=env, input=text, capture_output=True,
            text=True, timeout=60,
        )  # fmt: skip
        assert json.loads(reply.stdout) == said, reply.stdout + reply.stderr
