"""The `canon` command line (SPEC §11.1): a thin argparse adapter over the store core.

Every subcommand goes through `core.tool.run`, `core.store` or `core.assets`; the CLI never
writes a store file itself. Import cost matters because `canon hook …` runs on every agent tool
call: at load time this module imports the standard library only, and each subcommand imports
what it needs (core, the MCP SDK, the hooks) when it runs.

Exit codes: 0 done, 1 refused by the schema (or `canon check` found errors), 2 bad input.
Output: the tool's text on stdout; a bad-input sentence (exit 2) on stderr. Never a traceback,
unless CANON_DEBUG is set.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from canon_ls.core.store import Store
    from canon_ls.core.tool import ToolResult

PROG = "canon"
DOCS = "https://github.com/canon-ls/canon-ls/blob/main/docs/FORMAT.md"


class UsageError(Exception):
    """A bad command line or unreadable input: printed as one sentence, exit 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors as one sentence instead of usage + message + exit."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}. Run `{self.prog} --help` for usage.")


# ---------------------------------------------------------------- helpers


def _project(args: argparse.Namespace) -> Path:
    """SPEC §2: --project, else the nearest ancestor holding .canon/, else the cwd."""
    cached: Path | None = getattr(args, "_project_dir", None)
    if cached is not None:
        return cached
    if args.project:
        project = Path(args.project).expanduser()
        if not project.is_dir():
            raise UsageError(f"--project {args.project} is not a directory.")
        project = project.resolve()
    else:
        from canon_ls.core.layout import find_project

        project = find_project(Path.cwd()).resolve()
    args._project_dir = project
    return project


def _path(args: argparse.Namespace, raw: str) -> str:
    """A PATH typed in a subdirectory of the project is relative to that subdirectory (as in
    git); from the project root, or given as an absolute path or URI, it passes unchanged."""
    if not raw or raw.startswith("file:") or os.path.isabs(raw):
        return raw
    cwd = Path.cwd().resolve()
    project = _project(args)
    if cwd == project or project not in cwd.parents:
        return raw
    return os.path.normpath(cwd / raw)


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """SPEC §2/§8 store options from --root and --mount (the CLI's stand-in for the options
    object pi-canon takes in code and the language server takes from workspace/configuration)."""
    options: dict[str, Any] = {}
    for key in ("surface", "resurface", "retrieval", "standout"):  # `settings` and `mcp` only
        text = getattr(args, f"option_{key}", None)
        if text is not None:
            from canon_ls.core.layout import parse_text

            options[key] = parse_text(key, text)
    if getattr(args, "root", None):
        options["root"] = args.root
    if getattr(args, "mount", None):
        options["mounts"] = list(args.mount)
    return options


def _store(args: argparse.Namespace) -> Store:
    from canon_ls.core.project import OptionError, open_store

    try:
        return open_store(_project(args), _options(args))
    except OptionError as exc:
        raise UsageError(_sentence(str(exc))) from None


def _shown_path(args: argparse.Namespace, filename: str | bytes) -> str:
    """A path in a message: relative to the project when inside it."""
    path = Path(os.fsdecode(filename))
    try:
        return path.relative_to(_project(args)).as_posix()
    except ValueError:
        return str(path)


def _sentence(text: str) -> str:
    """One line: collapse whitespace, end with a full stop."""
    line = " ".join(text.split())
    return line if line.endswith((".", "?", "!")) else line + "."


def _read_text(source: str, what: str) -> str:
    """Read UTF-8 text from a file, or from stdin when source is '-'."""
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as exc:
        raise UsageError(f"Cannot read {what} {source}: {exc.strerror or exc}.") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(
            f"{what} {source} is not UTF-8 text; save it as UTF-8 and retry."
        ) from None


def _emit(result: ToolResult) -> int:
    stream = sys.stderr if result.code == 2 else sys.stdout
    text = result.text
    stream.write(text if text.endswith("\n") else text + "\n")
    return result.code


def _run(args: argparse.Namespace, action: object, *, json_tool: bool = False) -> int:
    """One action through the tool; its next-step hints in CLI words (SPEC §11.1), or the JSON
    tool's for `canon tool`, whose user typed an action object."""
    from canon_ls.core import dialect, tool

    words = dialect.JSON if json_tool else dialect.CLI
    return _emit(tool.run(_store(args), action, source="cli", dialect=words))


# ---------------------------------------------------------------- the five actions


def _cmd_tool(args: argparse.Namespace) -> int:
    raw = _read_text("-", "the tool argument from stdin") if args.json == "-" else args.json
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
    return _run(args, action, json_tool=True)


def _cmd_read(args: argparse.Namespace) -> int:
    return _run(args, {"action": "read", "path": _path(args, args.path)})


def _body(args: argparse.Namespace, positional: str | None = None) -> str | None:
    given = [b for b in (positional, args.body, args.body_file) if b is not None]
    if len(given) > 1:
        raise UsageError("Give the body once: as text, with --body, or with --body-file.")
    if args.body_file is not None:
        return _read_text(args.body_file, "--body-file")
    return positional if positional is not None else args.body


def _cmd_write(args: argparse.Namespace) -> int:
    action: dict[str, Any] = {"action": "write", "path": _path(args, args.path)}
    if args.capsule is not None:
        action["capsule"] = args.capsule
    body = _body(args)
    if body is not None:
        action["body"] = body
    if args.scope is not None:
        action["scope"] = args.scope
    return _run(args, action)


def _cmd_journal(args: argparse.Namespace) -> int:
    action: dict[str, Any] = {"action": "journal", "body": _body(args, args.text) or ""}
    if args.subject:
        action["subject"] = [_path(args, s) for s in args.subject]
    if args.slug is not None:
        action["slug"] = args.slug
    return _run(args, action)


def _cmd_map(args: argparse.Namespace) -> int:
    action: dict[str, Any] = {"action": "map"}
    if args.prefix:
        action["path"] = _path(args, args.prefix)
    return _run(args, action)


def _cmd_search(args: argparse.Namespace) -> int:
    action: dict[str, Any] = {"action": "search", "query": " ".join(args.query)}
    if args.journal:
        action["journal"] = True
    return _run(args, action)


# ---------------------------------------------------------------- project tools


def _missing(store: Store) -> str:
    return (
        f"No canon store at {store.root} yet; `canon init` creates it (so does the first "
        "`canon write` or `canon journal`)."
    )


def _status_line(store: Store) -> str:
    """Counts from the index, the schema state, and the orphan/stale signals (one git pass)."""
    from canon_ls.core import assets, changes, check, staleness
    from canon_ls.core.tool import plural

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
    problem = store.schema().error
    return f"schema.json malformed ({_sentence(problem).rstrip('.')})" if problem else "schema ok"


def _finding_file(store: Store, address: str) -> str:
    """The file a finding is about: the article, or schema.json for store-wide findings."""
    path = store.path_of(address) if address else store.schema_file
    try:
        return path.relative_to(store.project).as_posix()
    except ValueError:
        return str(path)


def _cli_message(finding: Any) -> str:
    """A finding's sentence in CLI words: a stale one or an orphan names the commands that
    act on it."""
    import shlex

    if finding.code == "orphan":
        from canon_ls.core.dialect import CLI
        from canon_ls.core.lint import orphan_question

        return " ".join(orphan_question(finding.address, CLI.declare_rule(finding.address)))
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


def _findings_text(store: Store, findings: list[Any], option_lines: list[str]) -> str:
    """Compiler-style lines (file:line:col: severity: message [code]) and a summary; the
    option files' errors (already lines) first."""
    from canon_ls.core.tool import plural

    lines = option_lines + [
        f"{_finding_file(store, f.address)}:{f.line + 1}:"
        f"{f.start + 1}: {f.severity}: {_cli_message(f)} [{f.code}]"
        for f in findings
    ]
    if not lines:
        lines.append(f"canon check: no findings in {plural(len(store.addresses()), 'article')}.")
        return "\n".join(lines)
    counts: dict[str, int] = {"error": len(option_lines)} if option_lines else {}
    for f in findings:
        counts[f.severity] = counts.get(f.severity, 0) + 1
    order = ("error", "warning", "info", "hint")
    many = {"info": "info"}  # "2 warnings, 3 info"
    summary = ", ".join(plural(counts[s], s, many.get(s, "")) for s in order if s in counts)
    lines.append(f"canon check: {summary} in {plural(len(store.addresses()), 'article')}.")
    return "\n".join(lines)


def _findings_json(store: Store, findings: list[Any]) -> str:
    import dataclasses

    rows = []
    for f in findings:
        row = dataclasses.asdict(f)
        row["message"] = _cli_message(f)
        row["evidence"] = f.evidence.to_json() if f.evidence is not None else None
        row["file"] = _finding_file(store, f.address)
        rows.append(row)
    return json.dumps(rows, ensure_ascii=False, indent=2)


def _refuse_outside(store: Store) -> None:
    """SPEC §12: a store whose directories lead outside the project: one sentence, exit 2."""
    problem = store.layout_problem()
    if problem:
        raise UsageError(problem)


def _cmd_status(args: argparse.Namespace) -> int:
    store = _store(args)
    _refuse_outside(store)
    print(_status_line(store) if store.exists() else _missing(store))
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from canon_ls.agent import settings_cmd

    store = _store(args)
    _refuse_outside(store)
    # SPEC §13: a bad canon.toml or settings.json key or value is an error (defaults apply)
    opts = store.options
    bad_options = settings_cmd.findings(opts, store.project) if opts is not None else []
    if not store.exists():
        if args.format == "json":
            print(json.dumps(bad_options, ensure_ascii=False, indent=2))
        else:
            print("\n".join([*settings_cmd.finding_lines(bad_options), _missing(store)]))
        return 1 if bad_options else 0
    from canon_ls.core import assets, changes, check

    findings = check.check(
        store, assets.Assets(store.project, store.root), changes.ChangeTimes(store.project)
    )
    if args.format == "json":
        rows = json.loads(_findings_json(store, findings))
        print(json.dumps(bad_options + rows, ensure_ascii=False, indent=2))
    else:
        text = _findings_text(store, findings, settings_cmd.finding_lines(bad_options))
        print(text)
    return 1 if bad_options or any(f.severity == "error" for f in findings) else 0


def _governing(store: Store, raw: str) -> tuple[str, str]:
    """(the address PATH names, its governing article); a miss is bad input (exit 2)."""
    from canon_ls.core.address import OutsideStore

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


def _cmd_review(args: argparse.Namespace) -> int:
    """SPEC §11.1: `reviewed: <today>` on the governing article (Store.set_reviewed, the
    editor's "Mark reviewed"); `updated` never changes."""
    from canon_ls.core.clock import today
    from canon_ls.core.staleness import evidence_for
    from canon_ls.core.store import BadInput

    store = _store(args)
    _refuse_outside(store)
    asked, governing = _governing(store, _path(args, args.path))
    before = _quiet_evidence(evidence_for, store, governing)
    try:
        store.set_reviewed(governing)
    except (BadInput, OSError) as exc:
        raise UsageError(_sentence(str(exc))) from None
    article = store.article(governing)
    updated = article.updated if article is not None and article.updated else "unset"
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


def _cmd_links(args: argparse.Namespace) -> int:
    """SPEC §11.1: outbound wikilinks and backlinks (core's inverse link index), one a line."""
    from canon_ls.core.tool import plural

    store = _store(args)
    _refuse_outside(store)
    asked, governing = _governing(store, _path(args, args.path))
    article = store.article(governing)
    targets: list[str] = []
    for link in article.links if article is not None else []:
        if link.target not in targets:
            targets.append(link.target)
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
    lines += [f"linked from {source}" for source in backlinks]
    lines += [f"named by journal/{name}" for name in journal]
    print("\n".join(lines))
    return 0


def _cmd_history(args: argparse.Namespace) -> int:
    """SPEC §9.2: commits of the article and its governed files, the reference date marked,
    then the journal; --diff prints what changed in the governed files since that date."""
    from canon_ls.core import history
    from canon_ls.core.store import BadInput

    store = _store(args)
    _refuse_outside(store)
    path = _path(args, args.path)
    try:
        if args.diff:
            text = history.changes(store, path)
        else:
            text = history.history(store, path, since_updated=args.since_updated)
    except BadInput as exc:
        raise UsageError(_sentence(str(exc))) from None
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _cmd_graph(args: argparse.Namespace) -> int:
    from canon_ls.agent.graph import render

    store = _store(args)
    _refuse_outside(store)
    html = render(store)
    if args.out in (None, "-"):
        sys.stdout.write(html)
        return 0
    out = Path(args.out)
    try:  # core's one atomic writer: an interrupted run leaves the old page or none
        from canon_ls.core.fsio import atomic_write

        atomic_write(out, html.encode("utf-8"), 0o644)
    except OSError as exc:
        raise UsageError(f"Cannot write {args.out}: {exc.strerror or exc}.") from None
    print(f"Wrote the canon graph to {out}.")
    return 0


def _cmd_settings(args: argparse.Namespace) -> int:
    """SPEC §13: each option's effective value and source; `set` / `unset` change one."""
    from canon_ls.agent import settings_cmd
    from canon_ls.core.layout import OptionError, resolve

    project = _project(args)
    try:
        if args.change is not None:
            words = None if args.change == "unset" else list(args.value)
            print(settings_cmd.change(project, args.key, words, args.in_project))
            return 0
        options = resolve(project, _options(args))
    except OptionError as exc:
        raise UsageError(_sentence(str(exc))) from None
    if args.format == "json":
        print(settings_cmd.dumps(options))
        return 0
    print("\n".join(settings_cmd.describe(options)))
    for problem in options.problems:  # stdout stays the six lines
        print(f"warning: {problem}", file=sys.stderr)
    return 0


def _cmd_stats(args: argparse.Namespace) -> int:
    from canon_ls.agent import stats

    data = stats.report(str(_project(args)))
    if args.format == "json":
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        print(stats.render(data))
    return 0


# ---------------------------------------------------------------- adapters run elsewhere


def _cmd_mcp(args: argparse.Namespace) -> int:
    from canon_ls.agent.mcp import main as mcp_main

    _store(args)  # a bad --root, --mount or option flag: one sentence, exit 2, before serving
    return mcp_main(_project(args), _options(args))


def _cmd_hook(args: argparse.Namespace) -> int:
    from canon_ls.agent.hooks import main as hook_main

    if args.project:
        os.chdir(_project(args))
    return hook_main(args.agent)


def _cmd_init(args: argparse.Namespace) -> int:
    """SPEC §11.1: `canon init` creates the store; with an agent it also writes that agent's
    configuration (a project-level agent gets the store too; `claude-plugin DIR` and
    `pi --global` configure the agent for every project and create no store here)."""
    from canon_ls.agent.init import main as init_main

    if args.target is None:
        if args.user:
            raise UsageError("--global applies to canon init pi only.")
        print("\n".join(_create_store(args, full=True)))
        return 0
    here = not args.user and args.target in ("claude-code", "codex", "pi")
    if here:  # a store that cannot be made is refused before anything is written
        store = _store(args)
        problem = store.layout_problem()
        if problem:
            raise UsageError(_sentence(problem))
        if os.path.lexists(store.root) and not store.root.is_dir():
            raise UsageError(
                f"Cannot create {_shown_path(args, str(store.root))}: not a directory."
            )
    directory = Path(args.dir) if args.dir else None
    code = init_main(args.target, _project(args), directory, args.user)
    missing = here and not _store(args).articles_dir.is_dir()  # an existing store stays as is
    made = _create_store(args) if missing and code == 0 else []
    if made:
        print("\n".join(made))
    return code


def _create_store(args: argparse.Namespace, full: bool = False) -> list[str]:
    """The store's part of `canon init`, its refusals as one sentence (exit 2)."""
    from canon_ls.agent.init import store_created
    from canon_ls.core.address import OutsideStore

    try:
        return store_created(_store(args), full)
    except OutsideStore as exc:  # core's sentence names the path and the fix
        raise UsageError(_sentence(str(exc))) from None
    except OSError as exc:
        where = _shown_path(args, exc.filename) if exc.filename else "the store"
        raise UsageError(f"Cannot create {where}: {exc.strerror or exc}.") from None


# ---------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    """The whole command line; `--project` is accepted before or after the subcommand."""
    common = _Parser(add_help=False)
    common.add_argument(
        "--project",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="project root (default: nearest ancestor holding .canon/, else the cwd)",
    )
    common.add_argument(
        "--root",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="store root, absolute or relative to the project (default: .canon)",
    )
    common.add_argument(
        "--mount",
        metavar="DIR",
        action="append",
        default=argparse.SUPPRESS,
        help="serve another directory's .canon/ as NAME:ADDRESS, NAME being the directory's "
        "name (repeatable)",
    )
    parser = _Parser(
        prog=PROG,
        description="Project memory in the repository: read and write the .canon/ store.",
        epilog="Exit codes: 0 done, 1 refused by the schema (check: errors found), 2 bad input. "
        f"The store's format, settings and addresses: {DOCS}",
    )
    parser.add_argument(
        "--project",
        metavar="DIR",
        default=None,
        help="project root (default: nearest ancestor holding .canon/, else the cwd)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def add(name: str, func: Any, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help_text, description=help_text)
        p.set_defaults(func=func)
        return p

    p = add(
        "tool",
        _cmd_tool,
        "run one action given as a JSON object, as the MCP tool takes it (read, write, "
        "journal, map, search); '-' reads it from stdin",
    )
    p.add_argument("json", metavar="JSON")

    p = add("read", _cmd_read, "print the article governing PATH")
    p.add_argument("path", metavar="PATH")

    p = add("write", _cmd_write, "create or update the article for PATH")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--capsule", metavar="C", help="one dense line; absent means unchanged")
    p.add_argument("--body", metavar="B", help="article body; absent means unchanged")
    p.add_argument("--body-file", metavar="F", help="read the body from F ('-' for stdin)")
    p.add_argument("--scope", choices=("rule", "asset"), help="declare or withdraw a rule")

    p = add("journal", _cmd_journal, "append one dated journal entry")
    p.add_argument("text", metavar="BODY", nargs="?", help="entry text")
    p.add_argument("--body", metavar="B", help=argparse.SUPPRESS)
    p.add_argument("--body-file", metavar="F", help="read the body from F ('-' for stdin)")
    p.add_argument(
        "--subject", metavar="ADDR", nargs="+", action="extend", help="addresses it is about"
    )
    p.add_argument("--slug", metavar="S", help="file name slug ([a-z0-9-])")

    p = add("map", _cmd_map, "list articles as 'address: capsule', optionally under PREFIX")
    p.add_argument("prefix", metavar="PREFIX", nargs="?")

    p = add("search", _cmd_search, "BM25 search over articles (and the journal with --journal)")
    p.add_argument("query", metavar="QUERY", nargs="+")
    p.add_argument("--journal", action="store_true", help="include journal entries")

    add("status", _cmd_status, "one line: store, counts, schema state, orphans, stale")

    p = add("check", _cmd_check, "whole-store lint for CI; exit 1 when errors are found")
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: file:line:column: severity: message [code], counted from 1; json: a list "
        "of findings whose line, start and end count from 0 (line + 1 is the text's line)",
    )

    p = add("review", _cmd_review, "mark the article governing PATH reviewed today (not updated)")
    p.add_argument("path", metavar="PATH")

    p = add("links", _cmd_links, "outbound wikilinks and backlinks of the article governing PATH")
    p.add_argument("path", metavar="PATH")

    p = add("history", _cmd_history, "commits of the article governing PATH and of its files")
    p.add_argument("path", metavar="PATH")
    p.add_argument(
        "--since-updated",
        action="store_true",
        help="only what happened after the article was last updated or reviewed",
    )
    p.add_argument(
        "--diff",
        action="store_true",
        help="print the diff of the governed files since the article was last updated",
    )

    _add_settings(add)

    p = add("graph", _cmd_graph, "self-contained HTML graph of articles, journal and assets")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")

    p = add(
        "stats",
        _cmd_stats,
        "what the memory cost the agents' context in this project: articles surfaced by "
        "address and by rank, characters per session and per touched file, the retrieval "
        "lane's scores, captured notes (the last two weeks of sessions)",
    )
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = add("mcp", _cmd_mcp, "run the MCP server (one tool, canon) over stdio")
    _add_behaviour_flags(p)

    p = add("hook", _cmd_hook, "agent hook entry: reads the hook event JSON on stdin")
    p.add_argument("agent", choices=("claude-code", "codex", "pi"))

    p = add(
        "init",
        _cmd_init,
        "create the store (.canon/ with articles/, journal/ and schema.json); with an agent "
        "also write its hook and MCP configuration",
    )
    p.add_argument(
        "target",
        metavar="AGENT",
        nargs="?",
        choices=("claude-code", "codex", "claude-plugin", "pi"),
        help="claude-code, codex, claude-plugin (needs DIR) or pi",
    )
    p.add_argument("dir", metavar="DIR", nargs="?", help="where to write (default: the project)")
    p.add_argument(
        "--global",
        dest="user",
        action="store_true",
        help="pi: install the extension for every project (Pi's user extension folder)",
    )
    return parser


def _add_behaviour_flags(p: argparse.ArgumentParser) -> None:
    """The behaviour options as flags, above settings.json and canon.toml for this command."""
    for key, metavar, what in (
        ("surface", "true|false", "whether the agent hooks add capsules and reminders"),
        ("resurface", "true|false", "articles surface again after a compaction"),
        ("retrieval", "none|lexical", "the retrieval lane"),
        ("standout", "RATIO", "how far a ranked article must stand out (at least 1)"),
    ):
        p.add_argument(
            f"--{key}",
            dest=f"option_{key}",
            metavar=metavar,
            default=argparse.SUPPRESS,
            help=f"{what}, for this command (over your settings.json and canon.toml)",
        )


def _add_settings(add: Any) -> None:
    p = add(
        "settings",
        _cmd_settings,
        "show each option's value and where it comes from (flag, your settings.json, the "
        "project's canon.toml, default); `set KEY VALUE` or `unset KEY` change your settings, "
        "with --project the project's canon.toml",
    )
    p.set_defaults(change=None)
    _add_behaviour_flags(p)
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: one line per option, KEY = VALUE  SOURCE; json: values, sources, files "
        "and problems",
    )
    changes = p.add_subparsers(dest="change", metavar="set|unset", parser_class=_Parser)
    keys = "surface, resurface, retrieval or standout (with --project also root or mounts)"
    where = (
        "write the project's canon.toml at the project root (shared with the team) instead "
        "of your own settings.json ($XDG_CONFIG_HOME/canon/settings.json)"
    )
    s = changes.add_parser(
        "set",
        help="validate and write one option",
        description="Validate and write one option into your settings.json (behaviour "
        "options: surface, resurface, retrieval, standout) or, with --project, into canon.toml "
        "(also root and mounts). Nothing is written when the value is bad.",
    )
    s.add_argument("--project", dest="in_project", action="store_true", help=where)
    s.add_argument("key", metavar="KEY", help=keys)
    s.add_argument(
        "value",
        metavar="VALUE",
        nargs="+",
        help="true/false, lexical/none, a number of at least 1, a path; mounts: one or more "
        "directories",
    )
    u = changes.add_parser(
        "unset", help="remove one option", description="Remove one option from a settings file."
    )
    u.add_argument("--project", dest="in_project", action="store_true", help=where)
    u.add_argument("key", metavar="KEY", help=keys)


def _tidy_streams() -> None:
    """Never die on an unencodable character in a store (e.g. CJK on a C-locale terminal)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `canon` console script."""
    _tidy_streams()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return 2
        return int(args.func(args))
    except UsageError as exc:
        print(_sentence(str(exc)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except ModuleNotFoundError as exc:
        if os.environ.get("CANON_DEBUG"):
            raise
        print(
            f"{PROG}: this command needs module {exc.name}, which is not installed.",
            file=sys.stderr,
        )
        return 2
    except Exception as exc:
        if os.environ.get("CANON_DEBUG"):
            raise
        print(
            _sentence(f"{PROG}: unexpected {type(exc).__name__}: {exc}")
            + " Set CANON_DEBUG=1 to see the traceback.",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
