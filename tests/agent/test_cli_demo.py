"""The bundled demo repository (examples/demo) and its tour, driven through the real CLI.

The demo promises exactly one broken link, one orphan and one stale article (SPEC §6.1 items
4–5, §9), Chinese text findable by a Chinese query, and a journal (SPEC §6 search).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
import tour  # noqa: E402

canon = tour.canon  # the tour's own call of the real CLI


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tour.prepare(tmp_path_factory.mktemp("demo"))


def test_demo_has_no_git_dir_and_a_real_store() -> None:
    assert not (tour.DEMO / ".git").exists()
    articles = list((tour.DEMO / ".canon" / "articles").rglob("*.md"))
    assert 10 <= len(articles) <= 20
    assert len(list((tour.DEMO / ".canon" / "journal").glob("*.md"))) >= 3
    assert (tour.DEMO / ".canon" / "schema.json").exists()


@pytest.mark.parametrize("git", [False, True], ids=["mtimes", "git"])
def test_demo_check_finds_exactly_the_planted_problems(tmp_path: Path, git: bool) -> None:
    """SPEC §11.1 canon check on the demo: one broken link, one orphan, one stale, no errors;
    the same with change times from file mtimes and from git commits (SPEC §9)."""
    demo = tour.prepare(tmp_path, git=git)
    assert (demo / ".git").exists() == git
    run = canon(demo, "check", "--format", "json")
    assert run.returncode == 0, run.stdout + run.stderr
    findings = json.loads(run.stdout)
    by_code: dict[str, list[str]] = {}
    for f in findings:
        by_code.setdefault(f["code"], []).append(f["address"])
    assert by_code.get("broken-link") == ["docs/architecture"]
    assert by_code.get("orphan") == ["src/feed/legacy_atom"]
    assert by_code.get("stale") == ["src/feed/fetch"]
    assert not [f for f in findings if f["severity"] == "error"]


def test_demo_read_map_search(demo: Path) -> None:
    read = canon(demo, "read", "src/feed/__init__.py")
    assert read.returncode == 0
    assert "src/feed governs src/feed/__init__" in read.stdout
    mapped = [line.split(":")[0] for line in canon(demo, "map", "src/feed").stdout.splitlines()]
    assert {"src/feed/fetch", "src/feed/legacy_atom", "src/feed/parse"} <= set(mapped)
    assert all(a == "src/feed" or a.startswith("src/feed/") for a in mapped)
    zh = canon(demo, "search", "日期格式")
    assert zh.returncode == 0 and "src/i18n/zh" in zh.stdout
    en = canon(demo, "search", "retry", "budget")
    assert "src/feed/fetch" in en.stdout


def test_tour_runs_end_to_end() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "tour.py")],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for heading in (
        "== Read the article",
        "== Search in Chinese",
        "== Whole-store check",
        "== The graph page",
    ):
        assert heading in out
    assert "Traceback" not in out + proc.stderr
    assert "src/billing/invoices" in out  # the planted broken link shows in check
    assert not (ROOT / "examples" / "demo" / ".git").exists()
