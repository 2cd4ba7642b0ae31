"""What one folder's checks found (`Signals`) and its open articles' unsaved findings (`Typing`)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from canon_ls.core.checking.lint import Finding
    from canon_ls.core.checking.recheck import Rechecked
    from canon_ls.core.git.evidence import Evidence


@dataclass
class Signals:
    """What the whole-store check found for one folder, kept current by the re-checks."""

    findings: dict[str, list[Finding]] = field(default_factory=dict)  # article address -> list
    stale: dict[str, str] = field(default_factory=dict)  # article address -> reason
    evidence: dict[str, Evidence] = field(default_factory=dict)  # stale article -> its facts
    evidence_pending: bool = False  # an edit made a verdict the last pass has no facts for
    newest: dict[str, tuple[float, str]] = field(default_factory=dict)  # article -> change
    moves: dict[str, list[str]] = field(default_factory=dict)  # orphan -> likely renames
    known: set[str] = field(default_factory=set)  # articles the last whole-store check saw
    asset_dirs: list[str] = field(default_factory=list)  # last check's asset dirs, to watch
    checked: bool = False  # the whole-store check has landed
    generation: int = 0  # bumps on every change; pull diagnostics' result ids

    def forget(self) -> None:
        """The store was reopened: what was found no longer applies."""
        self.findings.clear()
        self.stale.clear()
        self.evidence.clear()
        self.checked = False
        self.generation += 1

    def land_partial(self, findings: dict[str, list[Finding]], moves: dict[str, list[str]]) -> None:
        """A check's first answer, all but staleness (git is still running in its child)."""
        self.findings, self.moves = findings, moves
        self.generation += 1

    def land(
        self, findings: dict[str, list[Finding]], snapshot: Any, known: set[str], staleness: bool
    ) -> None:
        """A check's whole answer (a `background.Snapshot`); `known`: the articles it saw."""
        self.findings = findings
        self.stale = snapshot.stale if staleness else {}
        self.evidence = snapshot.evidence if staleness else {}
        self.evidence_pending = False
        self.newest, self.moves, self.asset_dirs = snapshot.newest, snapshot.moves, snapshot.dirs
        self.known = known
        self.checked = True
        self.generation += 1

    def record(self, address: str, done: Rechecked | None, staleness: bool) -> None:
        """One article re-checked in-process (None: it is gone)."""
        if done is None:
            self.findings.pop(address, None)
            self.stale.pop(address, None)
            return
        if staleness:
            _put(self.stale, address, done.stale)
            _put(self.evidence, address, done.evidence)
            self.evidence_pending = self.evidence_pending or done.pending
        _put(self.findings, address, done.findings or None)

    def changed(self) -> bool:
        """Something changed (pull diagnostics' result ids move on)."""
        self.generation += 1
        pending = self.evidence_pending and self.checked
        self.evidence_pending = self.evidence_pending and not pending
        return pending


def _put(table: dict[str, Any], key: str, value: Any) -> None:
    if value is None:
        table.pop(key, None)
    else:
        table[key] = value


@dataclass
class Typing:
    """One folder's open articles whose text differs from their file, and their timers."""

    found: dict[str, tuple[tuple[int, int], list[Finding] | None]] = field(default_factory=dict)
    timers: dict[str, asyncio.TimerHandle] = field(default_factory=dict)
    owed: set[str] = field(default_factory=set)  # pulled before the text could be checked

    def forget(self, uri: str) -> None:
        """The document was saved or closed: its file's findings apply again."""
        self.found.pop(uri, None)
        self.owed.discard(uri)
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
