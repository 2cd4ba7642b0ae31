"""SPEC §12: special files are never opened for reading, caches included. A FIFO left where a
cache file lies (`search-*.idx`, `lane-*.bin`, `store-*.bin`, a session's state) hung
`canon search` and the hooks, which opened those files without the bounded regular-file
reader; each command here must end (the subprocess timeout is the failure) and do its work."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hookrun import Hook, canon_command, payload
from test_hooks_lane import RULE_LINE, lane_project, prompt, said

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def _fifos_for(folder: Path) -> list[str]:
    """Every file under `folder` replaced by a FIFO of the same name; their names."""
    names = []
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        file.unlink()
        os.mkfifo(file)
        names.append(file.name)
    return names


def test_fifos_in_the_cache_and_state_hang_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    project = lane_project(tmp_path / "proj")
    hook = Hook("claude-code", tmp_path / "state", None, tmp_path / "config")

    def search() -> str:
        command = [*canon_command(), "search", "money rounding"]
        done = subprocess.run(
            command, cwd=project, env=hook.env(), capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    question = "How should the invoice total handle money rounding?"
    assert RULE_LINE in said(hook(prompt(project, question)))
    assert "conventions/money-rounding" in search()
    names = _fifos_for(cache) + _fifos_for(tmp_path / "state")
    assert any(n.startswith("search-") for n in names) and any(n.startswith("lane-") for n in names)
    assert any(n.endswith(".json") for n in names)
    assert "conventions/money-rounding" in search()
    assert RULE_LINE in said(hook(prompt(project, question, session="s-2")))
    hook(payload("claude-code", "session_start_startup", project, session="s-1"))  # its state


def test_fifos_in_the_read_caches_hang_no_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The caches a read of one article uses (the staleness evidence; at scale also the history
    pass and the journal's), each replaced by a FIFO: the read ends, with the same text."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    project = lane_project(tmp_path / "proj")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}

    def canon(*args: str) -> str:
        done = subprocess.run(
            [*canon_command(), *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    canon("status")
    read = '{"action": "read", "path": "conventions/money-rounding"}'
    expected = canon("tool", read)
    names = _fifos_for(tmp_path / "cache")
    assert any(n.startswith("evidence-") for n in names), names
    assert canon("tool", read) == expected
