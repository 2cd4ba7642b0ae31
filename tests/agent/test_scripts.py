"""The README's scripts on a bad day (issue 27 item 9): `scripts/setup.sh` (under demo.sh and
test.sh) rebuilds a .venv that does not run Python 3.11+, or says how to; fetching the agent
CLIs gives up in seconds, saying why, when the npm registry does not answer."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def stub(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_setup_rebuilds_a_broken_venv_or_says_how(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    stub(tmp_path / ".venv" / "bin" / "python", "exit 1")  # a venv whose Python is gone
    old = stub(tmp_path / "old" / "python3", "exit 1")  # an interpreter older than 3.11
    done = subprocess.run(
        ["bash", str(tmp_path / "scripts" / "setup.sh")],
        env={**os.environ, "PYTHON": str(old)}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "rebuilding it" in done.stdout
    assert not (tmp_path / ".venv").exists()
    (sentence,) = done.stderr.strip().splitlines()
    assert "Python 3.11 or newer" in sentence and "PYTHON=" in sentence


def test_an_unreachable_registry_fails_fast_and_says_so(tmp_path: Path) -> None:
    cache = os.environ.get("CANON_EDITOR_CACHE", str(ROOT / ".cache" / "editors"))
    path = os.pathsep.join((os.environ.get("PATH", ""), str(Path(cache) / "bin")))
    if shutil.which("npm", path=path) is None:
        pytest.fail("npm is needed (scripts/install_editor_deps.sh provides it)")
    env = {
        **os.environ,
        "PATH": path,
        "CANON_NPM_CACHE": str(tmp_path / "npm"),
        "npm_config_registry": "http://127.0.0.1:9/",  # nothing listens on the discard port
        "npm_config_cache": str(tmp_path / "npm-cache"),
    }
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "agent" / "npm_agents.py")],
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert time.monotonic() - started < 60
    assert "the npm registry is unreachable" in done.stderr.splitlines()[-1]
    assert "@anthropic-ai/claude-code" in done.stderr.splitlines()[-1]


def test_setup_leaves_the_sources_compiled() -> None:
    """Every start reads bytecode, also where PYTHONDONTWRITEBYTECODE keeps Python from
    writing it (setup.sh compiles the editable install's sources once)."""
    import canon_ls.core.storage.store
    import canon_ls.lsp.server

    for module in (canon_ls.core.storage.store, canon_ls.lsp.server):
        cached = module.__cached__
        assert cached is not None and Path(cached).is_file(), f"{module.__name__}: no {cached}"
