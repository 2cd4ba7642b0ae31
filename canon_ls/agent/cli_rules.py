"""`canon import` and `canon export HOST`: other agents' rule files in and out of the store."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from canon_ls.agent.cli_common import UsageError, inside_store

if TYPE_CHECKING:
    from canon_ls.core.checking.assets import Assets
    from canon_ls.core.storage.store import Store
    from canon_ls.formats.rule_export import Generated
    from canon_ls.formats.rule_import import Step

HOST_CHOICES = ("claude-rules", "cursor", "copilot", "kiro")


def _import_line(step: Step) -> str:
    if step.action == "skip":
        return f"{step.path}: skipped, {step.why}."
    what = {
        "create": "create" + (" (scope: rule)" if step.scope == "rule" else ""),
        "merge": f"add its text to the existing article under '## From {step.path}'",
        "unchanged": "already imported, nothing to do",
        "scope": "already imported; add its scope (applies/always) to the article",
    }[step.action]
    return f"{step.path} -> {step.address}: {what} [{step.why}]"


def cmd_import(args: argparse.Namespace) -> int:
    from canon_ls.core.tool import plural
    from canon_ls.formats import rule_import as rules_import

    store = inside_store(args)
    try:
        prefix = rules_import.rule_prefix(args.rules_under)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    steps = rules_import.plan(store, prefix)
    if not steps:
        print(
            "No rule files found: canon import reads .claude/rules/, .cursor/rules/, "
            ".github/instructions/, .kiro/steering/, .github/copilot-instructions.md, "
            ".cursorrules and AGENTS.md, CLAUDE.md, GEMINI.md files."
        )
        return 0
    ours = [s for s in steps if s.action == "skip" and s.why.startswith("canon export")]
    for step in steps:
        if step not in ours:
            print(_import_line(step))
    counts = {a: sum(s.action == a for s in steps) for a in ("create", "merge", "unchanged")}
    counts["unchanged"] += sum(s.action == "scope" for s in steps)
    skipped = sum(s.action == "skip" for s in steps) - len(ours)
    summary = (
        f"{plural(counts['create'], 'article')} {{}}created, {counts['merge']} {{}}merged, "
        f"{counts['unchanged']} unchanged, {skipped} skipped"
        + (f", {len(ours)} written by canon export left out" if ours else "")
    )
    if not args.write:
        print(
            f"Dry run: {summary.format('to be ', 'to be ')}. Run `canon import --write` to "
            f"apply it; rule articles go under {prefix}/ (`--rules-under DIR` picks another "
            "folder)."
        )
        return 0
    refused = rules_import.apply(store, steps)
    for line in refused:
        print(line)
    print(f"Imported: {summary.format('', '')}; each imported file is named in a journal entry.")
    return 1 if refused else 0


def _export_line(item: Generated) -> str:
    from canon_ls.formats.rule_export import STATES

    about = f" (article {item.address})" if item.address else ""
    return f"{item.path}{about}: {STATES[item.state]}."


def cmd_export(args: argparse.Namespace) -> int:
    from canon_ls.formats import rule_export as rules_export

    store = inside_store(args)
    if args.host is None and not args.check:
        raise UsageError(f"canon export: name the host ({', '.join(HOST_CHOICES)}).")
    if not store.exists():
        print(f"No canon store at {store.root}: no article to export (`canon import` or "
              "`canon write` creates some).")  # fmt: skip
        return 0
    if args.check:
        return _check_exports(store, [args.host] if args.host else None)
    files = rules_export.survey(store, args.host)
    stale = [f for f in files if f.state != "current"]
    failed = rules_export.apply(store, stale)
    done = {"missing": "written", "outdated": "rewritten", "orphaned": "removed"}
    for item in stale:
        word = failed.get(item.path) or done.get(item.state)
        print(f"{item.path}: {word}." if word else _export_line(item))
    changed = sum(f.state in done and f.path not in failed for f in stale)
    current = len(files) - len(stale)
    print(f"canon export {args.host}: {changed} changed, {current} already up to date.")
    return 1 if failed or any(f.state in ("edited", "foreign") for f in stale) else 0


def _check_exports(store: Store, hosts: list[str] | None) -> int:
    """`--check`: exit 1 when any generated file of these hosts is not up to date."""
    from canon_ls.formats import rule_export as rules_export

    hosts = hosts if hosts is not None else rules_export.used_hosts(store.project)
    if not hosts:
        print("canon export --check: no generated rule files in this project.")
        return 0
    status = 0
    for host in hosts:
        files = rules_export.survey(store, host)
        stale = [f for f in files if f.state != "current"]
        for item in stale:
            print(_export_line(item))
        if any(f.state != "inexpressible" for f in stale):
            print(f"canon export {host}: run it to bring these files up to date.")
            status = 1
        else:
            print(f"canon export {host}: {len(files)} generated files, all up to date.")
    return status


def export_findings(store: Store, assets: Assets) -> list[dict[str, object]]:
    """`canon check`: the out-of-date generated files of every host in use, as warnings."""
    from canon_ls.formats import rule_export as rules_export
    from canon_ls.formats.rule_export import STATES

    rows: list[dict[str, object]] = []
    for host in rules_export.used_hosts(store.project):
        for item in rules_export.survey(store, host, assets):
            if item.state != "current":
                done = item.state in ("edited", "foreign", "inexpressible")
                rerun = "" if done else f"; run canon export {host}"
                message = f"generated rule file of {item.address}: {STATES[item.state]}{rerun}"
                code = f"export-{item.state}"
                rows.append(
                    {"address": item.address, "file": item.path, "message": message, "code": code}
                )
    return rows
