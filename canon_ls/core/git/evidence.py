"""Staleness evidence (SPEC §9.1): why an article is stale, as facts every interface shows."""

from __future__ import annotations

import datetime as _dt
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from canon_ls.core.storage import clock
from canon_ls.core.storage.address import printable

if TYPE_CHECKING:
    from canon_ls.core.git.changes import ChangeTimes
    from canon_ls.core.storage.article import Article

SUBJECT_MAX = 80  # characters of a commit subject shown in the one-line form
FILES_SHOWN = 3  # uncommitted files named before "and N more"


def date_of(value: object) -> str:
    """A 'YYYY-MM-DD' front matter value, or '' when absent or not a date."""
    text = str(value or "").strip()
    return text if clock.DATE.fullmatch(text) else ""


@functools.lru_cache(maxsize=8192)
def day(ts: float) -> str:
    """The calendar day of an epoch time by canon's one clock (clock.py, SPEC §9); cached: a
    history holds few distinct commit times and the evidence asks about each many times."""
    try:
        return clock.day_of(ts)
    except (OverflowError, OSError, ValueError):
        return "0001-01-01"


@functools.lru_cache(maxsize=1024)
def day_after(date: str) -> float:
    """The epoch time at which the day after `date` begins (clock.py's calendar): a change
    counts as after the reference date exactly when its time is at least this."""
    try:
        return clock.day_start(date) + 86400
    except (ValueError, OverflowError, OSError):
        return float("inf")


def days_between(start: str, end: str) -> int:
    """Whole days from one 'YYYY-MM-DD' to another (0 when either is not a date)."""
    try:
        return (_dt.date.fromisoformat(end) - _dt.date.fromisoformat(start)).days
    except ValueError:
        return 0


def cut_of(reference: str, own: float) -> float:
    """When a governed change starts counting (SPEC §9): just after the article's own last change
    when that falls on its reference day, else the start of the day after the reference date."""
    if own and day(own) == reference:
        return own + 1e-6  # a commit of the same second counts when history puts it later
    return day_after(reference)


class Dates(NamedTuple):
    """What a stale verdict reads of an article (SPEC §9), kept when the article is not: the
    whole-store pass lets the parsed store go while git runs."""

    updated: str
    reviewed: str
    stale_after: str
    file: str = ""  # the article file, for `own` (project-relative, or absolute outside it)

    @classmethod
    def of(cls, article: Article, file: str = "") -> Dates:
        """The dates as date_of() reads them ('' when absent or not a date): reading them
        again gives the same, so the verdict after git compares strings only."""
        return cls(
            date_of(article.updated), date_of(article.reviewed), date_of(article.stale_after), file
        )

    def cut(self, own: Callable[[str], float]) -> float:
        """cut_of() the reference date and the article file's own last change, as `own`
        (ChangeTimes.of: its commit time, or its mtime when uncommitted) dates it."""
        reference, _ = reference_of(self)
        if not reference:
            return float("inf")
        return cut_of(reference, own(self.file) if self.file else 0.0)

    def stale(self, newest: float, today: str, own: Callable[[str], float]) -> bool:
        """The verdict alone (SPEC §9): stale_after passed, or the newest governed change (0: none)
        comes after the cut; the article file is dated only for a change on the reference day."""
        if self.stale_after and self.stale_after <= today:
            return True
        reference, _ = reference_of(self)
        if not (reference and newest):
            return False
        changed = day(newest)
        return changed > reference if changed != reference else newest >= self.cut(own)


def reference_of(article: Article | Dates) -> tuple[str, str]:
    """(reference date, 'updated' | 'reviewed'): max(updated, reviewed), SPEC §9."""
    updated, reviewed = date_of(article.updated), date_of(article.reviewed)
    return (reviewed, "reviewed") if reviewed and reviewed > updated else (updated, "updated")


def plural(n: int, word: str, many: str = "") -> str:
    """ "1 orphan", "2 orphans": counts in status lines read as sentences (CLI and editor)."""
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"


@dataclass(frozen=True)
class Change:
    """A commit after the reference day that touched governed files."""

    hash: str
    time: int
    date: str
    author: str
    subject: str
    paths: tuple[str, ...]  # the governed files it touched, sorted


@dataclass(frozen=True)
class Evidence:
    """The facts behind one stale verdict (SPEC §9.1)."""

    address: str
    reference: str  # 'YYYY-MM-DD', '' when the article has none (stale_after alone)
    basis: str  # 'updated' | 'reviewed': which key gave the reference date
    today: str
    commits: tuple[Change, ...] = ()  # newest first
    uncommitted: tuple[tuple[str, str, float], ...] = ()  # (path, day, mtime), newest first
    stale_after: str = ""  # the stale_after date when it has passed
    git: bool = True  # False: no repository, every change is a file's mtime
    cut: float = 0.0  # the moment from which a change counted (Dates.cut)

    @property
    def days(self) -> int:
        """Days from the reference date to today."""
        return days_between(self.reference, self.today) if self.reference else 0

    @property
    def newest(self) -> Change | None:
        return self.commits[0] if self.commits else None

    @property
    def files(self) -> list[str]:
        """Governed files the commits touched, the newest commit's first."""
        seen: dict[str, None] = {}
        for change in self.commits:
            for path in change.paths:
                seen.setdefault(path, None)
        return list(seen)

    @property
    def changed(self) -> bool:
        """Stale because governed files changed (not only because stale_after passed)."""
        return bool(self.commits or self.uncommitted)

    def line(self) -> str:
        """The one-line form every interface shows, e.g. `stale: 7 commits in 41 days since updated
        2026-10-21 touched src/feed/fetch.py (newest 3f2a9c1 2026-11-30 "Retry on 429")`."""
        parts = []
        if self.stale_after:
            ago = days_between(self.stale_after, self.today)
            when = "today" if ago <= 0 else f"{plural(ago, 'day')} ago"
            parts.append(f"stale_after {self.stale_after} passed {when}")
        since = f"since {self.basis} {self.reference}"
        span = f"in {plural(self.days, 'day')} {since}" if self.days > 0 else f"today {since}"
        newest = self.newest
        if newest is not None:
            files = self.files
            first = printable(files[0])
            touched = (
                first if len(files) == 1 else f"{first} and {plural(len(files) - 1, 'other file')}"
            )
            parts.append(
                f"{plural(len(self.commits), 'commit')} {span} touched {touched} "
                f'(newest {newest.hash} {newest.date} "{_cut(newest.subject)}")'
            )
        if self.uncommitted:
            label = "changed uncommitted" if self.git else "changed"
            names = [printable(u[0]) for u in self.uncommitted[:FILES_SHOWN]]
            more = len(self.uncommitted) - len(names)
            listed = ", ".join(names) + (f" and {more} more" if more else "")
            count = plural(len(self.uncommitted), "file")
            if newest is not None:
                parts.append(f"{count} {label}: {listed}")
            else:
                parts.append(f"{count} {label} {span}: {listed}")
        return "stale: " + "; ".join(parts)

    def short(self) -> str:
        """The code lens form: `stale · 7 commits since 2026-10-21`."""
        bits = []
        if self.commits:
            bits.append(plural(len(self.commits), "commit"))
        if self.uncommitted:
            label = "uncommitted file" if self.git else "changed file"
            bits.append(plural(len(self.uncommitted), label))
        if bits:
            return f"stale · {', '.join(bits)} since {self.reference}"
        return f"stale · stale_after {self.stale_after} passed"

    def advice(self) -> str:
        """What to do about it, in the words of an editor or the JSON tool."""
        if self.changed:
            return "update it, or mark it reviewed if it still holds"
        return "review it, then update it or move its stale_after date"

    def message(self) -> str:
        """The stale finding's sentence (check, diagnostics)."""
        return f"{self.address} is {self.line()}; {self.advice()}."

    def to_json(self) -> dict[str, Any]:
        """The fields `canon check --format json` carries for a stale finding."""
        newest = self.newest
        return {
            "line": self.line(),
            "reference": self.reference,
            "reference_key": self.basis,
            "days": self.days,
            "commits": len(self.commits),
            "newest": None
            if newest is None
            else {
                "hash": newest.hash,
                "date": newest.date,
                "author": newest.author,
                "subject": newest.subject,
            },
            "files": self.files,
            "uncommitted": [u[0] for u in self.uncommitted],
            "stale_after": self.stale_after,
        }

    def since(self, dates: Dates, today: str, own: Callable[[str], float]) -> Evidence | None:
        """The same evidence from a later cut (after an edit or a review), or None when the
        cut moved earlier: then the facts must be gathered again."""
        reference, basis = reference_of(dates)
        cut = dates.cut(own)
        if cut < self.cut or reference < self.reference:
            return None
        commits = tuple(c for c in self.commits if c.time >= cut)
        uncommitted = tuple(u for u in self.uncommitted if u[2] >= cut)
        stale_after = dates.stale_after
        passed = stale_after if stale_after and stale_after <= today else ""
        if not (commits or uncommitted or passed):
            return None
        return replace(
            self,
            cut=cut,
            reference=reference,
            basis=basis,
            today=today,
            commits=commits,
            uncommitted=uncommitted,
            stale_after=passed,
        )


def _cut(subject: str) -> str:
    subject = " ".join(subject.split())
    return subject if len(subject) <= SUBJECT_MAX else subject[: SUBJECT_MAX - 1] + "…"


def gather(
    address: str, article: Dates, files: Iterable[str], times: ChangeTimes, today: str
) -> Evidence | None:
    """The evidence for one article from its governed files, or None when it is not stale."""
    return gather_with(
        address,
        article,
        lambda cut: times.touched_since(files, cut),
        times.mtime,
        times.git,
        today,
        times.of,
    )


def gather_with(
    address: str,
    article: Dates,
    touched_since: Callable[[float], tuple[dict[Any, list[str]], list[str]]],
    mtime: Callable[[str], float],
    git: bool,
    today: str,
    own: Callable[[str], float],
) -> Evidence | None:
    """gather() with the walk given: `touched_since(cut)` as ChangeTimes.touched_since() for the
    article's files, `mtime` dates an undated one, `own` the article file (Dates.cut)."""
    stale_after = date_of(article.stale_after)
    passed = stale_after if stale_after and stale_after <= today else ""
    reference, basis = reference_of(article)
    touched: dict[Any, list[str]] = {}
    uncommitted: list[tuple[float, str, str]] = []
    cut = article.cut(own)
    if reference:
        touched, undated = touched_since(cut)
        for path in undated:
            when = mtime(path)
            if when >= cut:
                uncommitted.append((when, path, day(when)))
    commits = tuple(
        Change(c.hash, c.time, day(c.time), c.author, c.subject, tuple(sorted(paths)))
        for c, paths in sorted(touched.items(), key=lambda e: (-e[0].time, e[0].hash))
    )
    if not (commits or uncommitted or passed):
        return None
    uncommitted.sort(key=lambda u: (-u[0], u[1]))
    return Evidence(
        address=address,
        reference=reference,
        basis=basis,
        today=today,
        commits=commits,
        uncommitted=tuple((path, date, when) for when, path, date in uncommitted),
        stale_after=passed,
        git=git,
        cut=cut,
    )
