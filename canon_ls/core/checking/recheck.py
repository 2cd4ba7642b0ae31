"""An article checked again after an edit (the server's edit and as-you-type paths): its own
findings now, and its staleness from what the last whole pass measured (SPEC §7, §9)."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from canon_ls.core.checking.check import article_findings, stale_finding
from canon_ls.core.checking.lint import Finding
from canon_ls.core.git.evidence import Dates, Evidence
from canon_ls.core.git.staleness import own_file, stale_reason
from canon_ls.core.storage.article import parse
from canon_ls.core.storage.clock import today

if TYPE_CHECKING:
    from canon_ls.core.storage.article import Article
    from canon_ls.core.storage.store import Store


@dataclass
class Rechecked:
    """One article's findings after an edit, and its staleness as far as the last pass knew."""

    findings: list[Finding]
    stale: str | None = None  # the stale sentence, None when not stale
    evidence: Evidence | None = None  # the facts, when the last pass had them
    pending: bool = False  # stale, but the facts need the next whole pass


def recheck(
    store: Store,
    address: str,
    *,
    previous: list[Finding] | None = None,
    newest: tuple[float, str] | None = None,
    evidence: Evidence | None = None,
    staleness: bool = False,
    text: str | None = None,
) -> Rechecked | None:
    """One article's findings from what the last whole pass measured, or None when it is gone."""
    article = store.article(address)
    if text is not None:
        article = parse(text, article.address if article is not None else address)
    if article is None:
        return None
    found = article_findings(store, address, text=text)
    orphan = [f for f in previous or [] if f.code == "orphan"]
    if orphan and article.scope != "rule":
        found += orphan
    result = Rechecked(found)
    if staleness and ":" not in address:
        _restale(store, address, article, newest, evidence, result)
        if result.stale is not None:
            found.append(carried_stale(address, result.stale, result.evidence))
    return result


def _restale(
    store: Store,
    address: str,
    article: Article,
    newest: tuple[float, str] | None,
    known: Evidence | None,
    result: Rechecked,
) -> None:
    now = today()
    dates = Dates.of(article, own_file(store, address))
    own = functools.partial(_mtime, store.project)  # the article was just written: its mtime
    if not dates.stale(newest[0] if newest else 0.0, now, own):
        return
    evidence = known.since(dates, now, own) if known is not None else None
    if evidence is None:  # newly stale, or the cut moved back: a short reason stands in
        result.pending = True
        result.stale = stale_reason(store, address, newest, now, own) or f"{address} is stale."
        return
    result.evidence = evidence
    result.stale = evidence.message()


def _mtime(project: Path, file: str) -> float:
    """A file's mtime (0.0 when it cannot be read): an article just edited changed then."""
    try:
        return os.stat(os.path.join(project, file)).st_mtime
    except (OSError, ValueError):
        return 0.0


def carried_stale(address: str, reason: str, evidence: Evidence | None) -> Finding:
    """A stale finding an adapter keeps from an earlier pass while the next one runs."""
    return (
        stale_finding(evidence)
        if evidence is not None
        else Finding(address, "stale", "info", reason)
    )
