"""`canon` subcommands about one article's life: `review` (mark it current), `links`, `history`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canon_ls.agent import cli_json
from canon_ls.agent.cli_common import UsageError, as_sentence, inside_store, path_arg

if TYPE_CHECKING:
    from canon_ls.core.storage.store import Store


def _governing(store: Store, raw: str) -> tuple[str, str]:
    """(the address PATH names, its governing article); a miss is bad input (exit 2)."""
    from canon_ls.core.storage.address import OutsideStore

    try:
        asked = store.address_of(raw)
    except OutsideStore as exc:
        raise UsageError(f"Refused: {exc}; canon only reads and writes inside its store.") from None
    if not asked:
        raise UsageError("The project root has no article; give a file or directory path.")
    store.refresh()
    governing = store.governing(asked)
    if governing is None:
        raise UsageError(
            f"No article governs {asked} yet; write one with `canon write {asked} --capsule …`."
        )
    return asked, governing


def cmd_mv(args: argparse.Namespace) -> int:
    """Move an article to a new address and point inbound links at it."""
    from canon_ls.core.storage.address import OutsideStore
    from canon_ls.core.storage.store import BadInput

    store = inside_store(args)
    old, new = path_arg(args, args.old), path_arg(args, args.new)
    try:
        a, b = store.address_of(old), store.address_of(new)
        finished = store.finish_move()  # a move a killed `canon mv` left half done
        if finished is not None:
            print(f"Finished the interrupted move of {finished[0]} to {finished[1]}.")
            if finished[:2] == (a, b):
                return 0
        rewritten = store.move(old, new)
    except (BadInput, OutsideStore, OSError) as exc:
        raise UsageError(as_sentence(str(exc))) from None
    links = (
        f"; links rewritten in {', '.join(rewritten)}" if rewritten else "; no article links to it"
    )
    print(f"Moved {a} to {b}{links}.")
    if store.is_orphan(b):
        print(f"No file or directory maps to {b} yet: until one does, the article is an orphan.")
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    """SPEC §11.1: `reviewed: <today>` on the governing article."""
    from canon_ls.core.git.staleness import evidence_for
    from canon_ls.core.storage.clock import today
    from canon_ls.core.storage.store import BadInput

    store = inside_store(args)
    asked, governing = _governing(store, path_arg(args, args.path))
    before = _quiet_evidence(evidence_for, store, governing)
    try:
        store.set_reviewed(governing)
    except (BadInput, OSError) as exc:
        raise UsageError(as_sentence(str(exc))) from None
    article = store.article(governing)
    updated = article.updated if article is not None and article.updated else "unset"
    if args.format == "json":
        return cli_json.review(store, governing, before.to_json() if before else None)
    lines = [f"Marked {governing} reviewed on {today()}; updated stays {updated}."]
    after = _quiet_evidence(evidence_for, store, governing)
    if after is not None:
        lines.append(
            f"It is still {after.line()}; update it or move its stale_after date "
            f"(`canon read {governing}` shows it)."
        )
    elif before is not None:
        lines.append(f"It is no longer stale (it was {before.line()}).")
    print("\n".join(lines))
    return 0


def _quiet_evidence(evidence_for: Any, store: Store, address: str) -> Any:
    try:
        return evidence_for(store, address)
    except Exception:  # staleness is advisory: a git failure never fails the command
        return None


def cmd_links(args: argparse.Namespace) -> int:
    """SPEC §11.1: outbound wikilinks and backlinks (core's inverse link index), one a line."""
    from canon_ls.core.tool import plural

    store = inside_store(args)
    asked, governing = _governing(store, path_arg(args, args.path))
    if args.format == "json":
        return cli_json.links(store, asked, governing)
    article = store.article(governing)
    linked = map(store.link_target, article.targets if article is not None else ())
    targets = list(dict.fromkeys(linked))  # once each, in order
    backlinks = store.backlinks(governing)
    journal = store.journal_names(governing)
    title = governing if asked == governing else f"{governing} governs {asked}"
    counts = [
        plural(len(targets), "outbound link"),
        plural(len(backlinks), "backlink"),
        plural(len(journal), "journal entry", "journal entries"),
    ]
    lines = [f"{title}: {', '.join(counts)}"]
    for target in targets:
        missing = "" if store.article(target) is not None else " (no such article)"
        lines.append(f"links to {target}{missing}")
    from canon_ls.core.storage.address import printable

    lines += [f"linked from {printable(source)}" for source in backlinks]
    lines += [f"named by journal/{printable(name)}" for name in journal]
    print("\n".join(lines))
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    """SPEC §9.2: commits of the article and its governed files, then the journal; --diff."""
    from canon_ls.core.git import history
    from canon_ls.core.storage.store import BadInput

    store = inside_store(args)
    path = path_arg(args, args.path)
    try:
        if args.format == "json":
            if args.diff:
                raise UsageError("--diff prints a diff; it has no JSON form (drop --format json).")
            return cli_json.emit(history.history_data(store, path, args.since_updated))
        if args.diff:
            text = history.changes(store, path)
        else:
            text = history.history(store, path, since_updated=args.since_updated)
    except BadInput as exc:
        raise UsageError(as_sentence(str(exc))) from None
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    from canon_ls.agent.graph import render

    store = inside_store(args)
    html = render(store)
    if args.out == "-" or (args.out is None and not args.open and not sys.stdout.isatty()):
        sys.stdout.write(html)  # asked for, or a pipe: the page goes on
        return 0
    out = Path(args.out) if args.out else _graph_file(store)
    try:  # a new or regular file atomically; /dev/null, a FIFO or a symlink written through
        from canon_ls.core.storage.fsio import write_out

        write_out(out, html.encode("utf-8"))
    except OSError as exc:
        raise UsageError(f"Cannot write {out}: {exc.strerror or exc}.") from None
    if not args.open:
        print(f"Wrote the canon graph to {out}; open it in a browser, or use --open.")
        return 0
    import webbrowser

    opened = webbrowser.open(out.resolve().as_uri())
    then = "opened it in your browser" if opened else "no browser could be started"
    print(f"Wrote the canon graph to {out}; {then}.")
    return 0


def _graph_file(store: Store) -> Path:
    """Where the page goes when no --out names a file."""
    from canon_ls.core.storage.cache import cache_file

    page = cache_file(store.root, store.project, "graph")
    if page is None:
        raise UsageError("Give the page a place with --out FILE (the cache folder is not in use).")
    page.parent.mkdir(parents=True, exist_ok=True)
    return page.with_suffix(".html")
