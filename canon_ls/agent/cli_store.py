"""`canon` subcommands over the store's content: the five tool actions."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from typing import TYPE_CHECKING, Any

from canon_ls.agent import cli_json
from canon_ls.agent.cli_common import (
    UsageError,
    as_sentence,
    inside_store,
    path_arg,
    read_input,
    run_action,
    store_of,
)

if TYPE_CHECKING:
    from canon_ls.core.storage.store import Store


def cmd_tool(args: argparse.Namespace) -> int:
    raw = read_input("-", "the tool argument from stdin") if args.json == "-" else args.json
    try:
        action = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"The tool argument is not valid JSON ({exc.msg} at line {exc.lineno} column "
            f"{exc.colno}); pass one object such as "
            '\'{"action": "read", "path": "src/app.py"}\'.'
        ) from None
    except RecursionError:
        raise UsageError("The tool argument is nested too deeply to be an action object.") from None
    if args.format == "json":  # the tool's text and exit code as one object
        from canon_ls.core import dialect, tool

        result = tool.run(store_of(args), action, source="cli", dialect=dialect.JSON)
        cli_json.emit({"text": result.text, "code": result.code})
        return result.code
    return run_action(args, action, json_tool=True)


def cmd_read(args: argparse.Namespace) -> int:
    if args.format == "json":
        from canon_ls.core.storage.address import OutsideStore

        try:
            return cli_json.read(inside_store(args), path_arg(args, args.path))
        except OutsideStore as exc:
            raise UsageError(f"Refused: {exc}; canon only reads inside its store.") from None
    return run_action(args, {"action": "read", "path": path_arg(args, args.path)})


def _body(args: argparse.Namespace, positional: str | None = None) -> str | None:
    given = [b for b in (positional, args.body, args.body_file) if b is not None]
    if len(given) > 1:
        raise UsageError("Give the body once: as text, with --body, or with --body-file.")
    if args.body_file is not None:
        return read_input(args.body_file, "--body-file")
    return positional if positional is not None else args.body


def cmd_write(args: argparse.Namespace) -> int:
    action = {"action": "write", "path": path_arg(args, args.path), "capsule": args.capsule}
    action |= {"body": _body(args), "scope": args.scope}
    return run_action(args, {k: v for k, v in action.items() if v is not None})


def cmd_journal(args: argparse.Namespace) -> int:
    action: dict[str, Any] = {"action": "journal", "body": _body(args, args.text) or ""}
    if args.subject:
        action["subject"] = [path_arg(args, s) for s in args.subject]
    if args.slug is not None:
        action["slug"] = args.slug
    return run_action(args, action)


def cmd_map(args: argparse.Namespace) -> int:
    if args.format == "json":
        return cli_json.map_(inside_store(args), path_arg(args, args.prefix or ""))
    action: dict[str, Any] = {"action": "map"}
    if args.prefix:
        action["path"] = path_arg(args, args.prefix)
    return run_action(args, action)


def cmd_search(args: argparse.Namespace) -> int:
    if args.format == "json":
        return cli_json.search(inside_store(args), " ".join(args.query), args.journal)
    action: dict[str, Any] = {"action": "search", "query": " ".join(args.query)}
    if args.journal:
        action["journal"] = True
    return run_action(args, action)


def missing_store(store: Store) -> str:
    if os.path.lexists(store.root) and not os.path.isdir(store.root):
        return (
            f"No canon store: {store.root} is a file, not a directory; move it aside, then "
            "`canon init` creates the store."
        )
    return (
        f"No canon store at {store.root} yet; `canon init` creates it (so does the first "
        "`canon write` or `canon journal`)."
    )


def status_line(store: Store) -> str:
    """Counts from the index, the schema state, and the orphan/stale signals (one git pass)."""
    from canon_ls.core.checking import assets, check
    from canon_ls.core.git import changes, staleness
    from canon_ls.core.git.evidence import plural

    parts = [
        plural(len(store.addresses()), "article"),
        plural(len(store.journal_entries()), "journal entry", "journal entries"),
        _schema_state(store),
    ]
    try:
        project_assets = assets.Assets(store.project, store.root)
        parts.append(plural(len(check.orphans(store, project_assets)), "orphan"))
        times = changes.ChangeTimes(store.project)
        parts.append(f"{len(staleness.stale(store, project_assets, times))} stale")
    except OSError:
        parts.append("orphans and staleness unavailable")
    return f"canon store {store.root}: " + ", ".join(parts) + "."


def _schema_state(store: Store) -> str:
    if not store.schema_file.exists():
        return "schema.json absent (defaults)"
    schema = store.schema()
    if schema.error:
        return f"schema.json malformed ({as_sentence(schema.error).rstrip('.')})"
    ignored = len(schema.notes)
    return f"schema ok, {ignored} of its keys ignored (see canon check)" if ignored else "schema ok"


def _finding_file(store: Store, address: str) -> str:
    """The file a finding is about: the article, or schema.json for store-wide findings."""
    from canon_ls.core.storage.address import printable

    return printable(store.shown(store.path_of(address) if address else store.schema_file))


def _cli_message(finding: Any) -> str:
    """A finding's sentence in CLI words."""
    import shlex

    if finding.code == "orphan":
        from canon_ls.core.checking.lint import orphan_question
        from canon_ls.core.dialect import CLI

        address = finding.address
        return " ".join(
            orphan_question(address, CLI.declare_rule(address), CLI.move_article(address))
        )
    evidence = finding.evidence
    if evidence is None:
        return str(finding.message)
    address = shlex.quote(evidence.address)
    if evidence.changed:
        advice = (
            f"update it with `canon write {address} --capsule …`, or run `canon review "
            f"{address}` if it still holds (`canon history {address} --diff` shows what changed)"
        )
    else:
        advice = f"check it (`canon read {address}`), then update it or move its stale_after date"
    return f"{evidence.address} is {evidence.line()}; {advice}."


def _findings_text(
    store: Store,
    findings: list[Any],
    option_rows: list[dict[str, Any]],
    exported: list[dict[str, Any]],
) -> str:
    """Compiler-style lines (file:line:col: severity: message [code]) and a summary."""
    from canon_ls.agent.settings_cmd import finding_lines
    from canon_ls.core.git.evidence import plural
    from canon_ls.core.storage.address import printable  # a message never spans two lines

    files = {a: _finding_file(store, a) for a in {f.address for f in findings}}
    lines = finding_lines(option_rows) + [
        f"{files[f.address]}:{f.line + 1}:"
        f"{f.start + 1}: {f.severity}: {printable(_cli_message(f))} [{f.code}]"
        for f in findings
    ]
    lines += [f"{r['file']}:1:1: warning: {r['message']} [{r['code']}]" for r in exported]
    if not lines:
        lines.append(f"canon check: no findings in {plural(len(store.addresses()), 'article')}.")
        return "\n".join(lines)
    severities = [r["severity"] for r in option_rows] + [f.severity for f in findings]
    counts = Counter(severities + ["warning"] * len(exported))
    order = ("error", "warning", "info", "hint")
    many = {"info": "info"}  # "2 warnings, 3 info"
    summary = ", ".join(plural(counts[s], s, many.get(s, "")) for s in order if s in counts)
    lines.append(f"canon check: {summary} in {plural(len(store.addresses()), 'article')}.")
    return "\n".join(lines)


def _findings_rows(store: Store, findings: list[Any]) -> list[dict[str, Any]]:
    import dataclasses

    rows = []
    for f in findings:
        row = dataclasses.asdict(f)
        row["message"] = _cli_message(f)
        row["evidence"] = f.evidence.to_json() if f.evidence is not None else None
        row["file"] = _finding_file(store, f.address)
        rows.append(row)
    return rows


def cmd_status(args: argparse.Namespace) -> int:
    store = inside_store(args)
    if args.format == "json":
        if not store.exists():
            raise UsageError(missing_store(store))
        return cli_json.status(store)
    print(status_line(store) if store.exists() else missing_store(store))
    return 0


def _fix(store: Store) -> None:
    """`canon check --fix`: duplicated keys and block-list subjects repaired, said on stderr."""
    from canon_ls.core.storage.front_write import without_duplicates
    from canon_ls.core.storage.journal import flow_shaped

    for article in store.articles():
        duplicated = any(p.startswith("duplicate key") for p in article.problems)
        if duplicated and store.edit(article.address, without_duplicates, "fix"):
            print(f"Fixed {article.address}: a key given twice now appears once.", file=sys.stderr)
    for entry in store.journal_entries():  # the older block-list subject, unread by pi-canon
        try:
            if entry.subject and store.mend_entry(entry.name, flow_shaped):
                print(f"Fixed journal/{entry.name}: its subject is one line.", file=sys.stderr)
        except (OSError, ValueError):
            continue  # a special, vanished or undecodable file stays as it is


def cmd_check(args: argparse.Namespace) -> int:
    from canon_ls.agent import settings_cmd

    store = inside_store(args, warn=False)
    # SPEC §13: a bad canon.toml or settings.json key or value is an error (defaults apply);
    # a key held back until `canon trust` is a warning
    opts = store.options
    bad_options = settings_cmd.findings(opts, store.project) if opts is not None else []
    failed = any(row["severity"] == "error" for row in bad_options)
    if not store.exists():
        if args.format == "json":
            print(json.dumps(bad_options, ensure_ascii=False, indent=2))
        else:
            print("\n".join([*settings_cmd.finding_lines(bad_options), missing_store(store)]))
        return 1 if failed else 0
    from canon_ls.agent.cli_rules import export_findings
    from canon_ls.core.checking import assets, check
    from canon_ls.core.git import changes

    if args.fix:
        _fix(store)
    try:  # a move a killed `canon mv` left half done
        a_b = store.pending_move()
        moving = a_b and f"the move of {a_b[0]} to {a_b[1]} was cut short; `canon mv` finishes it."
    except ValueError as exc:  # BadInput: its record cannot be read
        moving = str(exc)
    if moving:
        print(f"canon: {moving}", file=sys.stderr)
        failed = True
    project_assets = assets.Assets(store.project, store.root)
    findings = check.check(store, project_assets, changes.ChangeTimes(store.project))
    exported = export_findings(store, project_assets)
    if args.format == "json":
        where = {"severity": "warning", "line": 0, "start": 0, "end": 0, "evidence": None}
        rows = _findings_rows(store, findings) + [{**r, **where} for r in exported]
        print(json.dumps(bad_options + rows, ensure_ascii=False, indent=2))
    else:
        print(_findings_text(store, findings, bad_options, exported))
    return 1 if failed or any(f.severity == "error" for f in findings) else 0
