"""The one checker (SPEC §6.1, §7, §9, §10, §11.1 `canon check`): an article's findings."""

from __future__ import annotations

import contextlib
import gc
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canon_ls.core.checking import git_reads, lint
from canon_ls.core.checking import schema as schema_mod
from canon_ls.core.checking.assets import Assets, Survey, address_of_path
from canon_ls.core.checking.lint import Finding
from canon_ls.core.checking.relations import (
    children_message,
    inbound,
    unlisted,
    unreferenced_message,
)
from canon_ls.core.git import gitrun
from canon_ls.core.git.changes import ChangeTimes
from canon_ls.core.git.evidence import Evidence
from canon_ls.core.git.renames import orphan_folders, renamed_in_place
from canon_ls.core.git.staleness import (
    Governed,
    evidence_of,
    evidence_one,
    mount_of,
    newest_changes,
    project_addresses,
    project_dates,
    stale_evidence,
)
from canon_ls.core.storage.address import asset_folder
from canon_ls.core.storage.article import parse

if TYPE_CHECKING:
    from canon_ls.core.checking.schema import Schema
    from canon_ls.core.storage.article import Article
    from canon_ls.core.storage.store import Store

MOVE_GUESSES = 3  # renamed-asset guesses kept for an orphan


@dataclass
class Context:
    """The store-level answers one article's check asks for, computed once per pass (whole store) or
    asked of the store's indexes (one article)."""

    store: Store
    schema: Schema
    assets: Assets | None = None
    times: ChangeTimes | None = None
    evidence: dict[str, Evidence] | None = None  # the whole pass's stale verdicts
    inbound: dict[str, set[str]] | None = None  # target -> linking articles (whole pass)
    survey: Survey | None = None  # every project article's assets, one listing pass (whole)
    known: frozenset[str] | None = None  # every address of the store (whole pass)
    _addresses: list[str] | None = field(default=None, repr=False)
    _mapped: bool | None = field(default=None, repr=False)

    @property
    def addresses(self) -> list[str]:
        if self._addresses is None:
            self._addresses = sorted(self.store.addresses())
        return self._addresses

    def linked(self, address: str) -> bool:
        """Whether another article's wikilinks reach `address`."""
        if self.inbound is not None:
            return address in self.inbound
        return any(source != address for source in self.store.backlinks(address))

    def mapped(self) -> bool:
        """Whether some project address has an asset (a code map, not a topic store)."""
        if self._mapped is None:
            assert self.assets is not None
            if self.survey is not None:
                self._mapped = bool(self.survey.mapped)
            else:
                self._mapped = self.assets.any_mapped(project_addresses(self.store))
        return self._mapped

    def has_asset(self, address: str) -> bool:
        """Whether a project file or directory has this address."""
        if self.survey is not None:
            return address in self.survey.mapped
        assert self.assets is not None
        return bool(self.assets.of(address))


def findings_of(
    ctx: Context, address: str, *, staleness: bool = True, text: str | None = None
) -> list[Finding]:
    """Every finding of one article, in check()'s order for it (SPEC §6.1, §7, §9). `text`:
    the article as an editor holds it (unsaved), checked instead of the stored file."""
    store = ctx.store
    art = store.article(address)
    if text is not None:
        art = parse(text, art.address if art is not None else address.partition(":")[2] or address)
    if art is None:
        return []
    schema = ctx.schema if ":" not in address else store.schema_for(address)
    found = _lint_findings(store, address, art, schema, ctx.known)
    rel = ctx.schema.relations if not ctx.schema.error else None
    if rel is not None and rel.orphan_warn and not ctx.linked(address):
        found.append(Finding(address, "relations-orphan", "warning", unreferenced_message(address)))
    missing = unlisted(address, art, ctx.addresses) if rel and rel.children_listed else []
    if missing:
        message = children_message(address, missing)
        found.append(Finding(address, "relations-children", "warning", message))
    project_article = not mount_of(store, address)
    if ctx.assets is not None and project_article and _is_orphan(ctx, address, art):
        question = " ".join(lint.orphan_question(address))
        found.append(Finding(address, "orphan", "warning", question))
    if staleness and project_article:
        evidence = _evidence(ctx, address)
        if evidence is not None:
            found.append(stale_finding(evidence))
    return found


def _evidence(ctx: Context, address: str) -> Evidence | None:
    if ctx.evidence is not None:
        return ctx.evidence.get(address)
    if ctx.assets is not None and ctx.times is not None:
        return evidence_one(ctx.store, address, ctx.assets, ctx.times)
    return None


def _is_orphan(ctx: Context, address: str, art: Article) -> bool:
    """SPEC §6.1 item 5 for one article."""
    assets = ctx.assets
    assert assets is not None
    if "/" not in address or art.scope == "rule" or ctx.has_asset(address):
        return False
    # a file git ignores is on disk all the same (as read, write and pi-canon see it)
    mapped = ctx.mapped() and not ctx.store.maps(address)
    return mapped and asset_folder(Path(assets.project), address)


def _schema_findings(address: str, art: Article, schema: Schema) -> list[Finding]:
    if schema.error:
        return []  # reported once for the store by check()
    body = art.body if "body" in schema.rules else ""  # read only for a rule on the body
    values = {"capsule": art.capsule, "title": art.title, "body": body}
    out = []
    for line in schema_mod.violations(schema, values, art.targets):
        severity = "error" if line.startswith("The schema requires") else "warning"
        out.append(Finding(address, "schema", severity, line))
    return out


def _lint_findings(
    store: Store, address: str, art: Article, schema: Schema, known: frozenset[str] | None = None
) -> list[Finding]:
    """lint's per-article findings plus schema violations, under the store-level address (a mount
    article knows only its address inside the mount; its links may name either)."""
    mount = mount_of(store, address)

    def exists(target: str) -> bool:
        if store.article(target) is not None:
            return True
        return bool(mount) and store.article(f"{mount}:{target}") is not None

    found = lint.article_findings(
        art, known.__contains__ if known and not mount else exists, schema
    )
    if art.address != address:
        found = [replace(f, address=address) for f in found]
    return found + _schema_findings(address, art, schema)


def stale_finding(evidence: Evidence) -> Finding:
    """The stale finding of an article, carrying its evidence (SPEC §9.1)."""
    return Finding(evidence.address, "stale", "info", evidence.message(), evidence=evidence)


def orphans(store: Store, assets: Assets) -> list[str]:
    """Nested articles no asset maps to although their parent directory exists on disk."""
    addresses = project_addresses(store)
    ctx = Context(store, store.schema(), assets, survey=assets.survey(addresses))
    out = []
    for address in addresses:
        if "/" not in address or ctx.has_asset(address):
            continue
        art = store.article(address)
        if art is not None and _is_orphan(ctx, address, art):
            out.append(address)
    return out


def move_guesses(
    store: Store, files: Iterable[str], orphans: list[str], limit: int = MOVE_GUESSES
) -> dict[str, list[str]]:
    """For each orphan, assets named like it (a likely rename) that have no article yet: one
    streaming pass over the listing, looking only at files whose leaf an orphan has."""
    if not orphans:
        return {}
    by_leaf: dict[str, list[str]] = {}
    for address in orphans:
        by_leaf.setdefault(address.rsplit("/", 1)[-1], []).append(address)
    out: dict[str, list[str]] = {}
    get = by_leaf.get
    for path in files:
        name = path[path.rfind("/") + 1 :]
        leaf = name if name.startswith(".") else name.partition(".")[0]
        wanted = get(leaf)
        if wanted is None:
            continue
        candidate = address_of_path(path)
        if store.has(candidate):
            continue
        full = True
        for orphan in wanted:
            guesses = out.setdefault(orphan, [])
            if candidate != orphan and len(guesses) < limit and candidate not in guesses:
                guesses.append(candidate)
            full = full and len(guesses) >= limit
        if full:  # every orphan with this leaf has its guesses: the rest of the listing skips it
            del by_leaf[leaf]
    return {k: v for k, v in out.items() if v}


def _store_findings(store: Store) -> list[Finding] | None:
    """Findings about the store itself; None when nothing else can be checked."""
    if not store.exists():
        return None
    problem = store.layout_problem()
    if problem:  # SPEC §12: nothing is read through a store that leads outside
        return [Finding("", "store-outside", "error", problem)]
    schema = store.schema()
    if schema.error:
        return [Finding("", "schema-malformed", "error", schema.malformed_line)]
    return [Finding("", "schema-ignored", "warning", note) for note in schema.notes]


def check(
    store: Store,
    assets: Assets | None = None,
    times: ChangeTimes | None = None,
    *,
    staleness: bool = True,
) -> list[Finding]:
    """Every finding of the store (SPEC §11.1 canon check, §10 diagnostics): lints, broken links,
    front matter problems, schema, relations, orphans, stale."""
    head = _store_findings(store)
    if head is None or (head and head[0].code == "store-outside"):
        return head or []
    if assets is None:
        assets = Assets(store.project, store_root=store.root)
    ctx = _whole(store, assets)
    per = _basic(ctx)
    if staleness:
        ctx.times = times if times is not None else ChangeTimes(store.project)
        assert ctx.survey is not None
        governed = Governed(assets, ctx.survey)
        ctx.evidence = stale_evidence(store, assets, ctx.times, governed)
        per = _with_stale(ctx.evidence, per)
    return _flat(head, per, ctx.addresses)


def _whole(store: Store, assets: Assets) -> Context:
    addresses = store.addresses()
    ctx = Context(store, store.schema(), assets, _addresses=sorted(addresses))
    ctx.known = frozenset(addresses)
    ctx.survey = assets.survey(project_addresses(store))
    rel = ctx.schema.relations if not ctx.schema.error else None
    if rel is not None and rel.orphan_warn:
        ctx.inbound = inbound(store, addresses)
    return ctx


def _basic(ctx: Context) -> dict[str, list[Finding]]:
    """Every article's findings but staleness, each article's in check()'s order."""
    per: dict[str, list[Finding]] = {}
    for address in ctx.addresses:
        found = findings_of(ctx, address, staleness=False)
        if found:
            if len(found) > 1:
                found.sort(key=_place)
            per[address] = found
    return per


def _with_stale(
    evidence_by: dict[str, Evidence], per: dict[str, list[Finding]]
) -> dict[str, list[Finding]]:
    """`per` plus the stale findings of `evidence_by` (after the others at the same place)."""
    out = dict(per)
    for address, evidence in evidence_by.items():
        found = [*per.get(address, ()), stale_finding(evidence)]
        found.sort(key=_place)
        out[address] = found
    return out


def _flat(head: list[Finding], per: dict[str, list[Finding]], order: list[str]) -> list[Finding]:
    """check()'s order: store-level findings, then article by article (sorted addresses)."""
    out = list(head)
    for address in order:
        found = per.get(address)
        if found:
            out += found
    return out


def _place(finding: Finding) -> tuple[int, int]:
    return finding.line, finding.start


def article_findings(
    store: Store,
    address: str,
    assets: Assets | None = None,
    times: ChangeTimes | None = None,
    text: str | None = None,
) -> list[Finding]:
    """check() for one article (cheap): orphan needs `assets`, stale needs both; `text`: the
    unsaved article an editor holds, checked instead of the file."""
    return findings_of(Context(store, store.schema(), assets, times), address, text=text)


@dataclass
class Pass:
    """What the whole-store pass found, as plain data an adapter can keep and ship."""

    findings: list[Finding] = field(default_factory=list)
    evidence: dict[str, Evidence] = field(default_factory=dict)  # stale article -> its facts
    newest: dict[str, tuple[float, str]] = field(default_factory=dict)  # newest governed change
    moves: dict[str, list[str]] = field(default_factory=dict)  # orphan -> renamed-asset guesses
    dirs: list[str] = field(default_factory=list)  # asset directories ('' = the project root)
    seconds: float = 0.0
    git_seconds: float = 0.0  # the ChangeTimes pass (git log + status), running alongside
    partial: bool = False  # True: no staleness yet; the final follows


def run(
    project: Path,
    options: dict[str, Any],
    staleness: bool,
    on_partial: Callable[[Pass], None] | None = None,
    on_loaded: Callable[[], None] | None = None,
    git_first: bool = False,
    holding: contextlib.ExitStack | None = None,
) -> Pass:
    """The whole-store pass (below), leaving the calling thread's CPU priority as it found it:
    the pass steps its thread back while git runs, which a caller that lives on must not keep.
    `git_first`: git's reads end before the store loads (nobody waits for its parse cache);
    the loaded store then holds a git slot, kept on `holding` when given (past the return)."""
    tid = threading.get_native_id()
    before = git_reads.niceness(tid)
    try:
        return _whole_pass(project, options, staleness, on_partial, on_loaded, git_first, holding)
    finally:
        if before is not None and git_reads.niceness(tid) != before:
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, tid, before)


def _whole_pass(
    project: Path,
    options: dict[str, Any],
    staleness: bool,
    on_partial: Callable[[Pass], None] | None,
    on_loaded: Callable[[], None] | None,
    git_first: bool,
    holding: contextlib.ExitStack | None,
) -> Pass:
    """The whole-store pass. git works in a thread, one process at a time (`git_reads`: the
    listing and `status` each read the whole index, ~180 MB at 500k files), so it runs while
    this process is small: before the store loads (`git_first`), else while it loads (the server
    waits for its parse cache). Findings without git go to `on_partial` first."""
    from canon_ls.core.storage.project import open_store

    started = time.perf_counter()
    store = open_store(project, options)
    box: dict[str, Any] = {}
    listed = threading.Event()
    worker = threading.Thread(
        target=git_reads.in_order, args=(project, store, staleness, box, listed), daemon=True
    )
    worker.start()
    git_reads.yield_cpu()
    if git_first:
        worker.join()
    with contextlib.ExitStack() as own:
        if git_first:  # no search worker beside the loaded store (gitrun.heavy)
            (holding or own).enter_context(gitrun.heavy())
        head = _store_findings(store)
        if on_loaded is not None:  # the load first: someone waits for its parse cache
            if head is not None and not (head and head[0].code == "store-outside"):
                store.addresses()  # the load, and the parse cache written at its end
            on_loaded()
        listed.wait()
        if "error" in box:
            raise box["error"]
        assets: Assets = box["assets"]
        per: dict[str, list[Finding]] = {}
        order: list[str] = []
        survey: Survey | None = None
        if head is None or (head and head[0].code == "store-outside"):
            basic, judged = head or [], False
        else:
            ctx = _whole(store, assets)
            per = _basic(ctx)
            order, survey, judged = ctx.addresses, ctx.survey, True
            basic = _flat(head, per, order)
            del ctx
        orphaned = [f.address for f in basic if f.code == "orphan"]
        result = Pass(moves=move_guesses(store, assets.iter_files(), orphaned))
        result.dirs = ["", *sorted(assets.dirs())]  # for a watcher of asset creations/deletions
        result.findings = basic
        if staleness:
            if on_partial is not None:
                seconds = time.perf_counter() - started
                on_partial(Pass(list(basic), moves=result.moves, seconds=seconds, partial=True))
            # The survey mapped governing articles while git ran; the verdicts need only the
            # articles' dates, so the parsed store goes before git's output is read.
            governed = Governed(assets, survey or assets.survey(project_addresses(store)))
            governed.runs()  # built now, while git runs
            dates = project_dates(store) if judged else {}
            del store
            gc.collect()
            assets.pack()
            worker.join()
            if "error" in box:
                raise box["error"]
            times, result.git_seconds = box["times"], box["seconds"]
            result.newest = newest_changes(governed, times)
            if judged:
                result.evidence = evidence_of(dates, governed, times, result.newest)
                result.findings = _flat(head or [], _with_stale(result.evidence, per), order)
            del governed, dates
        if orphaned:  # after git's pass: it tells which files are new since HEAD
            # the renames in place (core/git/renames.py) come first among each orphan's guesses
            times, tracked = box.pop("times", None), None
            if times is not None and times.git:  # only these paths' answers are asked for
                near = (p for folder in orphan_folders(orphaned) for p in assets.under(folder))
                tracked = frozenset(filter(times.tracked, near)).__contains__
            del times  # the history (~40 MB at 500k files) goes before git's rename search runs
            gc.collect()
            known = frozenset(order).__contains__
            found = renamed_in_place(project, orphaned, assets.under, known, tracked)
            moves = dict(result.moves)
            for orphan, found_here in found.items():
                guesses = dict.fromkeys([*found_here, *moves.get(orphan, ())])
                moves[orphan] = list(guesses)[:MOVE_GUESSES]
            result.moves = moves
        result.seconds = time.perf_counter() - started
        return result
