"""Issue 26: a hover and a whole-store check walk through few modules, returning to a room
fewer times than the issue counted before its step (20 for a hover, 24 for a check).
scripts/walks.py traces them (docs/ARCHITECTURE.md "One hover, end to end" states the rule)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "walks.py"


def test_a_hover_and_a_check_return_to_few_rooms(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # restored afterwards
    spec = importlib.util.spec_from_file_location("walks", SCRIPT)
    assert spec is not None and spec.loader is not None
    walks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(walks)
    hovered, checked = walks.walks(tmp_path)
    assert hovered.stays[0] == ("lsp.features.hover", "on_hover")
    assert ("core.index", "StoreIndex.revalidate_governing") in hovered.stays
    assert ("lsp.features.diagnostics", "push_folder") in checked.stays  # the child answered
    assert hovered.counts()[2] < 20, hovered.stays
    assert checked.counts()[2] < 24, checked.stays
