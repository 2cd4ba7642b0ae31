"""Staleness (SPEC §9, §9.1): which articles are older than the files they govern, and why."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from canon_ls.core.checking.assets import Assets, Survey, address_of_path, scope_pathspecs
from canon_ls.core.git import evidence_cache, indexprobe
from canon_ls.core.git.changes import ChangeTimes
from canon_ls.core.git.dated import Runs, Timeline, runs_of
from canon_ls.core.git.evidence import (
    Dates,
    Evidence,
    date_of,
    day,
    gather,
    gather_with,
    reference_of,
)
from canon_ls.core.storage.address import governing_in, may_name
from canon_ls.core.storage.clock import today as _today

if TYPE_CHECKING:
    from pathlib import Path

    from canon_ls.core.storage.store import Store


def mount_of(store: Store, address: str) -> str:
    """The mount name of 'lake:prices' when lake is a mount, else '' (a colon may be a name)."""
    return store.paths.split(address)[0]


def project_addresses(store: Store) -> list[str]:
    """The project store's own addresses, sorted (mount articles are not judged here)."""
    return [a for a in store.addresses() if not mount_of(store, a)]


def governed_files(address: str, assets: Assets, articles: set[str]) -> Iterator[str]:
    """Files whose change counts for `address`: its exact-address files, and files under its
    directory that no nearer article governs (SPEC §9); none deleted."""
    return assets.on_disk(_governed(address, assets, articles))


def _governed(address: str, assets: Assets, articles: set[str]) -> Iterator[str]:
    for path in assets.of(address):
        if not path.endswith("/"):
            yield path
    if assets.is_dir(address):  # what lies below a nearer article is its, by prefix alone
        nearer = [a for a in articles if a.startswith(address + "/")]
        sure = not nearer and address in articles
        for path in assets.under(address, nearer):
            if sure or governing_in(address_of_path(path), articles) == address:
                yield path


class Governed:
    """(file, governing article) for every project file some article governs (SPEC §4, §9), streamed
    from the listing and one int per file (the survey): never a list of 500k pairs."""

    def __init__(self, assets: Assets, survey: Survey) -> None:
        self.assets = assets
        self.survey = survey
        self._runs: Runs | None = None
        self._dated: tuple[ChangeTimes, Timeline] | None = None

    def runs(self) -> Runs:
        """The governed rows as runs (no git needed: the check child builds them while git runs)."""
        if self._runs is None:
            self._runs = runs_of(self.survey.governing)
        return self._runs

    def timeline(self, times: ChangeTimes) -> Timeline | None:
        """The listing dated by `times` (every governed file), None without git."""
        if not times.git:
            return None
        if self._dated is None or self._dated[0] is not times:
            governing = self.survey.governing
            try:
                dated = Timeline(self.assets.blob(), len(governing), times)
            except ValueError:  # a survey of another listing: the walk instead
                return None
            dated.date(governing)
            self._dated = (times, dated)
        return self._dated[1]

    def rows_of(self, wanted: Iterable[str]) -> dict[str, list[int]]:
        """The listing rows each of these articles governs (one walk over the runs)."""
        index = {a: i for i, a in enumerate(self.survey.articles)}
        out: dict[str, list[int]] = {a: [] for a in wanted}
        by = {index[a]: rows for a, rows in out.items() if a in index}
        for start, end, g in self.runs():
            rows = by.get(g)
            if rows is not None:
                rows.extend(range(start, end))
        return out

    def __iter__(self) -> Iterator[tuple[str, str]]:
        articles = self.survey.articles
        for path, i in zip(self.assets.iter_files(), self.survey.governing, strict=True):
            if i >= 0:
                yield path, articles[i]


def governed_pairs(articles: Iterable[str], assets: Assets) -> Governed:
    """Governed for these articles: one pass over the listing. Independent of git, so the
    language server computes it while the git pass runs."""
    return Governed(assets, assets.survey(sorted(articles)))


def newest_changes(
    governed: Iterable[tuple[str, str]], times: ChangeTimes
) -> dict[str, tuple[float, str]]:
    """Article -> (newest change, that file) over the files it governs, in one pass (merged
    with the history's paths when the pairs come in the listing's order)."""
    if isinstance(governed, Governed):
        dated = governed.timeline(times)
        if dated is not None:
            return dated.newest(governed.runs(), governed.survey.articles)
    newest: dict[str, tuple[float, str]] = {}
    for path, gov, ts in times.dated(governed):
        seen = newest.get(gov)
        if seen is None or ts > seen[0]:
            newest[gov] = (ts, path)
    return newest


def own_file(store: Store, address: str, prefix: str | None = None) -> str:
    """The article's file as ChangeTimes names it (project-relative; absolute when the store lies
    outside the project), whose own last change refines its reference day (SPEC §9)."""
    return (articles_prefix(store) if prefix is None else prefix) + address + ".md"


def articles_prefix(store: Store) -> str:
    """The articles folder as ChangeTimes names files, with a trailing slash (lexical)."""
    try:
        return store.articles_dir.relative_to(store.project).as_posix() + "/"
    except ValueError:
        return str(store.articles_dir) + os.sep


def stale_reason(
    store: Store,
    address: str,
    newest: tuple[float, str] | None,
    today: str,
    own: Callable[[str], float],
) -> str | None:
    """The verdict with a short reason when no history is at hand, or None (SPEC §9): the
    language server's re-check after an edit, until the next pass brings the evidence."""
    art = store.article(address)
    if art is None:
        return None
    stale_after = date_of(art.stale_after)
    if stale_after and stale_after <= today:
        return f"{address} is past its stale_after date {stale_after}; review it or update it."
    dates = Dates.of(art, own_file(store, address))
    reference, basis = reference_of(dates)
    if newest is None or not reference:
        return None  # no reference date: the front matter finding already says so
    ts, path = newest
    if dates.stale(ts, today, own):
        return (
            f"{address} is stale: {path} changed on {day(ts)}, after the article was last "
            f"{basis} on {reference}; update it, or mark it reviewed if it still holds."
        )
    return None


def measured_line(store: Store, address: str) -> str | None:
    """A read's evidence line measured now, and kept for the reads after it."""
    own, since = store.stat_key(address), time.time_ns()
    evidence = evidence_for(store, address)
    line = evidence.line() if evidence is not None else None
    if own is not None:
        evidence_cache.remember(store, {address: (own, line)}, since)
    return line


def stale_evidence(
    store: Store,
    assets: Assets,
    times: ChangeTimes,
    governed: Iterable[tuple[str, str]] | None = None,
    newest: dict[str, tuple[float, str]] | None = None,
) -> dict[str, Evidence]:
    """Address -> evidence for every stale article of the project store (SPEC §9, §9.1)."""
    addresses = project_addresses(store)
    if governed is None:
        governed = governed_pairs(addresses, assets)
    out = evidence_of(project_dates(store), governed, times, newest)
    since = min(getattr(assets, "started_ns", 0), getattr(times, "started_ns", 0))
    kept = {a: (store.stat_key(a), e.line() if (e := out.get(a)) else None) for a in addresses}
    evidence_cache.remember(store, {a: v for a, v in kept.items() if v[0]}, since)  # for reads
    return out


def project_dates(store: Store) -> dict[str, Dates]:
    """Every project article's dates, in address order (all a stale verdict reads)."""
    out = {}
    prefix = articles_prefix(store)
    for address in project_addresses(store):
        art = store.article(address)
        if art is not None:
            out[address] = Dates.of(art, own_file(store, address, prefix))
    return out


def evidence_of(
    dates: dict[str, Dates],
    governed: Iterable[tuple[str, str]],
    times: ChangeTimes,
    newest: dict[str, tuple[float, str]] | None = None,
) -> dict[str, Evidence]:
    """stale_evidence() from the articles' dates alone (no store needed any more)."""
    if newest is None:
        newest = newest_changes(governed, times)
    now = _today()
    verdicts: dict[str, Dates] = {}
    for address, art in dates.items():
        seen = newest.get(address)
        if art.stale(seen[0] if seen else 0.0, now, times.of):
            verdicts[address] = art
    if isinstance(governed, Governed):
        dated = governed.timeline(times)
        if dated is not None:
            return _evidence_dated(verdicts, governed, dated, now, times.of)
    files: dict[str, list[str]] = {a: [] for a in verdicts}
    if verdicts:  # the stale articles' files, in one walk over the pairs
        for path, gov in governed:
            bucket = files.get(gov)
            if bucket is not None:
                bucket.append(path)
    found = {a: gather(a, art, files[a], times, now) for a, art in verdicts.items()}
    return {a: evidence for a, evidence in found.items() if evidence is not None}


def _evidence_dated(
    verdicts: dict[str, Dates],
    governed: Governed,
    dated: Timeline,
    now: str,
    own: Callable[[str], float],
) -> dict[str, Evidence]:
    """The stale articles' evidence from the listing's rows (no lookup per file)."""
    out = {}
    for address, rows in governed.rows_of(verdicts).items():

        def since(cut: float, rows: list[int] = rows) -> tuple[dict[Any, list[str]], list[str]]:
            return dated.touched_since(rows, cut)

        found = gather_with(address, verdicts[address], since, dated.mtime, True, now, own)
        if found is not None:
            out[address] = found
    return out


def stale(store: Store, assets: Assets, times: ChangeTimes) -> dict[str, str]:
    """Address -> reason sentence (with its evidence) for every stale article (SPEC §9.1)."""
    return {a: e.message() for a, e in stale_evidence(store, assets, times).items()}


def evidence_one(
    store: Store, address: str, assets: Assets, times: ChangeTimes, below: set[str] | None = None
) -> Evidence | None:
    """stale_evidence() for one article, touching only its governed files (`below`: store.below)."""
    art = store.held_article(address)
    if art is None or mount_of(store, address):
        return None
    articles = store.below(address) if below is None else below
    files = list(governed_files(address, assets, articles))
    newest = max((times.of(path) for path in files), default=0.0)
    dates = Dates.of(art, own_file(store, address))
    if not dates.stale(newest, _today(), times.of):
        return None
    return gather(address, dates, files, times, _today())


def named_on_disk(project: Path, address: str) -> bool:
    """Whether a file or folder is named as `address` or it plus an extension: else the article
    governs no file (its scoped listing keeps only paths on disk), which needs no git to say."""
    parent, _, leaf = address.rpartition("/")
    try:
        return any(may_name(n, leaf) for n in os.listdir(project / parent))
    except OSError:
        return False


def theirs(store: Store, address: str, most: int = 64) -> list[str]:
    """Pathspecs leaving out what the articles just below `address` govern (git status need not
    lstat it); none past `most` (git matches each path against every pathspec)."""
    try:
        with os.scandir(store.articles_dir / address) as found:
            names = [e.name for e in found if e.is_file(follow_symlinks=False)]
    except OSError:
        return []
    mine = [n[:-3] for n in names if n.endswith(".md") and n != ".md"]
    return [f":(exclude,literal){address}/{n}" for n in mine] if len(mine) <= most else []


def evidence_for(store: Store, address: str, times: ChangeTimes | None = None) -> Evidence | None:
    """The evidence of one article read on its own (`canon read`): lists only the files it can
    govern and dates them from the shared history pass; None when the article is not stale."""
    art = store.held_article(address)
    if art is None or mount_of(store, address):
        return None
    stale_after = date_of(art.stale_after)
    reference, _ = reference_of(art)
    if not reference and not (stale_after and stale_after <= _today()):
        return None  # nothing to compare against (the front matter finding says so)
    if not named_on_disk(store.project, address):  # it governs no file: stale_after alone
        nothing: tuple[dict[Any, list[str]], list[str]] = ({}, [])  # no commit, no undated file
        at = Dates.of(art)  # no file: its cut is the day after its reference date
        return gather_with(address, at, lambda _: nothing, lambda _: 0.0, True, _today(), float)
    own = own_file(store, address)
    paths = [*scope_pathspecs(address), *theirs(store, address)]  # git's questions, if asked
    if not os.path.isabs(own):  # a store outside the project: git refuses its files
        paths.append(f":(literal){own}")
    below = store.below(address)  # the nearer articles take their folders' files
    quiet = (
        None if times is not None else indexprobe.quiet_files(store.project, address, own, below)
    )
    if quiet is not None:
        exact = [f":(literal){p}" for p in (*map(os.fsdecode, quiet.files), own)]  # its own few
        scoped = exact if len(quiet.files) <= 64 else paths  # what a `git log` with no cache asks
        times = ChangeTimes(store.project, status_paths=scoped, only=[address, own], quiet=quiet)
        assets = Assets(store.project, store.root, address, listed=quiet.files)
        return evidence_one(store, address, assets, times, below)
    listed: list[Assets | Exception] = []

    def listing() -> None:  # while git status reads the same index (two cores)
        try:
            listed.append(Assets(store.project, store.root, address))
        except Exception as exc:  # noqa: BLE001 - raised below, in the caller's thread
            listed.append(exc)

    lister = threading.Thread(target=listing)
    lister.start()
    if times is None:  # git status and the history ask about its files and its own file only
        times = ChangeTimes(store.project, status_paths=paths, only=[address, own])
    lister.join()
    if isinstance(found := listed[0], Exception):
        raise found
    return evidence_one(store, address, found, times, below)
