"""Issues 26 and 37: a hover and a whole-store check walk through few modules. A hover is one
lookup (lsp/session/state.py `lookup`) that validates once: at most 20 stays and 8 returns to a room
(17 and 7 when issue 37 landed; 30 and 17 before), and the rule-file check stays off its walk.
A check returns fewer than 24 times. scripts/walks.py traces them (docs/ARCHITECTURE.md "The
two walks" states the rule)."""

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
    assert hovered.stays[0] == ("lsp.handlers.hover", "on_hover")
    assert ("core.storage.index", "StoreIndex.revalidate_governing") in hovered.stays
    assert ("core.storage.index", "StoreIndex.governing") not in hovered.stays  # validated once
    assert not any("rule" in room or "formats" in room for room, _ in hovered.stays)
    assert ("lsp.handlers.diagnostics", "push_folder") in checked.stays  # the child answered
    stays, _rooms, returns = hovered.counts()
    assert stays <= 20 and returns <= 8, hovered.stays
    assert checked.counts()[2] < 24, checked.stays
