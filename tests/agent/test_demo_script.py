"""`bash scripts/demo.sh` (the README's first command) and its tour's last hint: the hint
names a command that works, and `--graph FILE` reaches the tour through the script, relative
to where it was run. The real script, its setup step and the real CLI and server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HINT = "(to keep the page: bash scripts/demo.sh --graph FILE)"


def test_the_tour_hints_at_the_demo_script() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "tour.py")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith(HINT)


def test_demo_script_passes_graph_through(tmp_path: Path) -> None:
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "demo.sh"), "--graph", "page.html"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    page = tmp_path / "page.html"
    assert page.read_text("utf-8").lstrip().lower().startswith("<!doctype html")
    assert f"canon graph --out {page.resolve()}" in done.stdout
    assert HINT not in done.stdout
    assert "== canon.status" in done.stdout  # the editor tour ran after it
