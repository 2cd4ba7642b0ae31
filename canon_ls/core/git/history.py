"""An article's history (SPEC §9.2): the commits of its file and of the files it governs,
interleaved newest first around its reference date, then the journal entries about it; and the
diff of the governed files since the staleness cut (core/git/evidence.py, Dates.cut)."""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from canon_ls.core.checking.assets import Assets, scope_pathspecs
from canon_ls.core.git import gitrun
from canon_ls.core.git.changes import ChangeTimes, Commit
from canon_ls.core.git.evidence import Dates, day, days_between, plural, reference_of
from canon_ls.core.git.staleness import evidence_one, governed_files, own_file
from canon_ls.core.storage import cache
from canon_ls.core.storage.address import printable
from canon_ls.core.storage.clock import today as _today
from canon_ls.core.storage.store import BadInput, sanitise_slug

if TYPE_CHECKING:
    from canon_ls.core.storage.article import Article
    from canon_ls.core.storage.journal import JournalEntry
    from canon_ls.core.storage.store import Store

FILES_SHOWN = 3  # files named on an asset line of a directory article
DIFF_MAX = 4 * 1024 * 1024  # bytes of diff a document shows before it is cut
PATHSPEC_CHUNK = 64 * 1024  # characters of paths per git diff command line


@dataclass(frozen=True)
class Entry:
    """One line of the history: a commit, an uncommitted change, in date order."""

    time: float
    date: str
    side: str  # 'article' | 'asset' | 'both'
    hash: str  # '' for an uncommitted change
    author: str
    subject: str
    paths: tuple[str, ...]  # the governed files it touched (asset side)


@dataclass(frozen=True)
class Subject:
    """What a history or a diff is about: the governing article, its file and governed files."""

    address: str  # the governing article
    asked: str  # the address the user named
    article: Article
    article_path: str  # project-relative path of the article file ('' outside the project)
    files: list[str]


def subject(store: Store, path: str) -> Subject:
    """The governing article of `path` and what it governs; BadInput (a sentence) otherwise."""
    asked = store.address_of(path)
    if not asked:
        raise BadInput("The project root has no article; give a file or directory path.")
    store.refresh()
    governing = store.governing(asked)
    article = store.article(governing) if governing else None
    if governing is None or article is None:
        raise BadInput(f"No article governs {asked} yet, so it has no history to show.")
    if store.paths.split(governing)[0]:
        raise BadInput(f"{governing} lives in a mount; its history is in that directory's git.")
    try:
        rel = store.path_of(governing).relative_to(store.project).as_posix()
    except ValueError:
        rel = ""
    assets = Assets(store.project, store.root, scope=governing)
    files = list(governed_files(governing, assets, set(store.addresses())))
    return Subject(governing, asked, article, rel, files)


def _times(store: Store, about: Subject) -> ChangeTimes:
    """The history of the article file and its files alone (git status asks only about them)."""
    paths = list(scope_pathspecs(about.address))
    if about.article_path:
        paths.append(f":(literal){about.article_path}")
    return ChangeTimes(store.project, status_paths=paths, only=[about.address, about.article_path])


def entries(about: Subject, times: ChangeTimes) -> list[Entry]:
    """Commits touching the article or its governed files, and uncommitted changes, newest first."""
    by_hash: dict[str, tuple[Commit, set[str], list[str]]] = {}
    sides = [("article", about.article_path)] if about.article_path else []
    sides += [("asset", path) for path in about.files]
    out: list[Entry] = []
    for side, path in sides:
        for commit in times.commits_of(path):
            seen = by_hash.setdefault(commit.hash, (commit, set(), []))
            seen[1].add(side)
            if side == "asset":
                seen[2].append(path)
        if times.git and not times.committed_only(path):
            mtime = times.mtime(path)
            if mtime:
                out.append(Entry(mtime, day(mtime), side, "", "", "uncommitted", (path,)))
    for c, found, paths in by_hash.values():
        side = "both" if len(found) == 2 else next(iter(found))
        out.append(
            Entry(
                float(c.time), day(c.time), side, c.hash, c.author, c.subject, tuple(sorted(paths))
            )
        )
    out.sort(key=lambda e: (-e.time, e.hash))
    return out


def history(
    store: Store, path: str, since_updated: bool = False, times: ChangeTimes | None = None
) -> str:
    """The text of `canon history PATH [--since-updated]` and of `canon.history {path}`."""
    about = subject(store, path)
    times = times or _times(store, about)
    reference, basis = reference_of(about.article)
    cut = _cut(store, about, times)
    listed = entries(about, times)
    after = [e for e in listed if e.time >= cut]
    before = [e for e in listed if e.time < cut]
    several = len(about.files) > 1
    lines = [_head(about, listed, after, reference, basis, times.git)]
    lines += [_line(e, several) for e in after]
    if reference:
        ago = days_between(reference, _today())
        when = "today" if ago <= 0 else f"{plural(ago, 'day')} ago"
        lines.append(f"-- {basis} {reference}: the article's reference date ({when}) --")
    if not since_updated:
        lines += [_line(e, several) for e in before]
    journal = _journal(store, about.address, reference if since_updated else "", cut)
    lines += [f"journal {e.date or 'undated'} {e.name}" for e in journal]
    earlier = len(_journal(store, about.address, "")) if since_updated and not journal else 0
    if earlier:  # `canon read` lists them: say they exist, dated before the cut
        named = plural(earlier, "entry names", "entries name")
        lines.append(f"journal: {named} {about.address}, none since {basis} {reference}")
    elif not journal:
        lines.append(f"journal: no entry names {about.address}")
    return "\n".join(lines)


def _journal(store: Store, address: str, after: str, cut: float = math.inf) -> list[JournalEntry]:
    """The entries naming `address`; with `after` (a reference day) only those since: one of that
    day counts when it records an instant at or after `cut` (the article's own change)."""
    return [
        e
        for e in store.journal_entries()
        if address in e.subject
        and not (after and (e.date < after or e.date == after and _instant(e.logged) < cut))
    ]


def _instant(logged: str) -> float:
    """An entry's `logged` ISO instant as epoch seconds; 0 when absent or unreadable."""
    try:
        return datetime.fromisoformat(logged).timestamp()
    except ValueError:
        return 0.0


def history_data(store: Store, path: str, since_updated: bool = False) -> dict[str, object]:
    """`canon history PATH --format json`: the same facts as history() as plain data."""
    about = subject(store, path)
    times = _times(store, about)
    reference, basis = reference_of(about.article)
    cut = _cut(store, about, times)
    listed = [e for e in entries(about, times) if not since_updated or e.time >= cut]
    since = reference if since_updated else ""
    journal = [{"date": e.date, "name": e.name} for e in _journal(store, about.address, since, cut)]
    return {
        "address": about.address,
        "asked": about.asked,
        "files": about.files,
        "git": times.git,
        "reference": reference,
        "reference_key": basis,
        "changes": [
            {
                "hash": e.hash or None,
                "date": e.date,
                "side": e.side,
                "author": e.author,
                "subject": e.subject,
                "paths": list(e.paths),
                "after_reference": e.time >= cut,
            }
            for e in listed
        ],
        "journal": journal,
    }


def _cut(store: Store, about: Subject, times: ChangeTimes) -> float:
    """Where "after the reference date" starts: the staleness cut (SPEC §9), the article's own
    last change when it falls on that day."""
    return Dates.of(about.article, own_file(store, about.address)).cut(times.of)


def _head(
    about: Subject, listed: list[Entry], after: list[Entry], reference: str, basis: str, git: bool
) -> str:
    commits = sum(1 for e in listed if e.hash)
    recent = sum(1 for e in after if e.hash)
    governs = about.address if about.asked == about.address else f"{about.address} governs "
    what = (
        f"{plural(len(about.files), 'governed file')}"
        if len(about.files) != 1
        else f"governs {printable(about.files[0])}"
    )
    title = (
        f"History of {about.address}"
        if about.asked == about.address
        else f"History of {governs}{about.asked}"
    )
    if not git:
        return f"{title} ({what}): no git repository here, so no commits to list."
    since = f", {recent} after {basis} {reference}" if reference else ""
    return f"{title} ({what}), newest first: {plural(commits, 'commit')}{since}."


def _line(entry: Entry, several: bool) -> str:
    if not entry.hash:
        return f"uncommitted {entry.date} {entry.side} {printable(entry.paths[0])}"
    files = ""
    if several and entry.paths:
        shown = ", ".join(map(printable, entry.paths[:FILES_SHOWN]))
        more = len(entry.paths) - FILES_SHOWN
        files = f" [{shown}{f' and {more} more' if more > 0 else ''}]"
    subject = " ".join(entry.subject.split())
    return f"{entry.hash} {entry.date} {entry.side} {entry.author}: {subject}{files}"


def base_commit(project: Path, cut: float) -> str | None:
    """The last commit before the staleness cut (the article's own last change, or the end of
    its reference day: core/git/evidence.py), or None when the history starts later."""
    before = math.ceil(min(cut, 2**62)) - 1  # --before counts whole seconds, inclusive
    out = gitrun.run(project, "rev-list", "-1", f"--before=@{before}", "HEAD", "--")
    return (out or b"").decode("ascii", "replace").strip() or None


def _diff(project: Path, base: str, files: list[str]) -> str:
    """`git diff BASE -- FILES` against the work tree, in chunks of command line."""
    chunks: list[list[str]] = [[]]
    size = 0
    for path in files:
        if size + len(path) > PATHSPEC_CHUNK and chunks[-1]:
            chunks.append([])
            size = 0
        chunks[-1].append(path)
        size += len(path) + 12
    out: list[str] = []
    diff = ("diff", "--no-ext-diff", "--no-textconv", "--no-color", "--relative", base, "--")
    for chunk in chunks:
        if not chunk:
            continue
        data = gitrun.run(project, *diff, *(f":(literal){path}" for path in chunk))
        if data:
            out.append(data.decode("utf-8", "replace"))
    return "".join(out)


def changes(store: Store, address: str, times: ChangeTimes | None = None) -> str:
    """The read-only document of what changed in `address`'s governed files since its
    reference date: a commented header (the evidence, the base commit), then the diff."""
    about = subject(store, address)
    reference, basis = reference_of(about.article)
    if not reference:
        raise BadInput(
            f"{about.address} has no updated or reviewed date, so there is no 'since' to diff from."
        )
    times = times or _times(store, about)
    if not times.git:
        raise BadInput(f"{store.project} is not a git work tree; there is no history to diff.")
    head = [f"# Changes to the files {about.address} governs since {basis} {reference}"]
    scoped = Assets(store.project, store.root, scope=about.address)
    found = evidence_one(store, about.address, scoped, times)
    if found is not None:
        head.append(f"# {found.line()}")
    base = base_commit(store.project, _cut(store, about, times))
    if base is None:
        head.append(f"# base: none (the history starts after {reference}); compared with empty")
        empty = gitrun.run(store.project, "hash-object", "-t", "tree", os.devnull) or b""
        base = empty.decode("ascii", "replace").strip() or "HEAD"
    else:
        line = gitrun.run(
            store.project, "show", "-s", "--no-show-signature", "--format=%h %cs %s", base, "--"
        )
        shown = (line or b"").decode("utf-8", "replace").strip() or base[:12]
        head.append(f"# base: {shown}, the last commit before the changes that count")
    head.append("# compared with the working tree (uncommitted edits included)")
    tracked = [p for p in about.files if times.commits_of(p) or times.committed_only(p)]
    untracked = [p for p in about.files if p not in tracked]
    if not about.files:
        head.append(f"# {about.address} governs no file at the moment.")
    if untracked:
        head.append("# untracked, not in the diff: " + ", ".join(map(printable, untracked)))
    diff = _diff(store.project, base, tracked) if tracked else ""
    if len(diff) > DIFF_MAX:
        diff = diff[:DIFF_MAX] + f"\n# … cut at {DIFF_MAX:,} characters.\n"
    if not diff.strip():
        head.append(f"# No differences: the governed files read as they did on {reference}.")
    return "\n".join(head) + "\n\n" + diff


def changes_file(store: Store, address: str, text: str) -> Path:
    """Write a `changes()` text to a read-only file under the canon-ls cache directory (never
    inside the project) and return it, for an editor to open with window/showDocument."""
    directory = _changes_dir(store)
    key = hashlib.sha256(os.path.realpath(store.project).encode("utf-8", "surrogateescape"))
    slug = sanitise_slug(address.replace("/", "-")) or "article"
    file = directory / key.hexdigest()[:12] / f"{slug}.since-updated.diff"
    if not cache.write_file(file, text.encode("utf-8", "surrogateescape")):
        raise BadInput(f"canon could not write the changes document under {file.parent}.")
    os.chmod(file, 0o444)  # a document to read, not to save
    return file


_session_dir: Path | None = None


def _changes_dir(store: Store) -> Path:
    """<cache dir>/changes, or a private temporary directory when the cache is off."""
    global _session_dir
    file = cache.cache_file(store.root, store.project)
    if file is not None:
        return file.parent / "changes"
    if _session_dir is None:
        import tempfile

        _session_dir = Path(tempfile.mkdtemp(prefix="canon-changes-"))
    return _session_dir
