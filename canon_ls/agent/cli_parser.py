"""The `canon` command line as argparse."""

from __future__ import annotations

import argparse
import re
from typing import Any

from canon_ls.agent.cli_common import DOCS, PROG, Parser
from canon_ls.agent.cli_history import cmd_graph, cmd_history, cmd_links, cmd_mv, cmd_review
from canon_ls.agent.cli_rules import HOST_CHOICES, cmd_export, cmd_import
from canon_ls.agent.cli_setup import cmd_hook, cmd_init, cmd_mcp, cmd_settings, cmd_stats, cmd_trust
from canon_ls.agent.cli_store import (
    cmd_check,
    cmd_journal,
    cmd_map,
    cmd_read,
    cmd_search,
    cmd_status,
    cmd_tool,
    cmd_write,
)

JSON_COMMANDS = ("tool", "read", "map", "search", "status", "review", "links", "history")


def build_parser() -> argparse.ArgumentParser:
    """The whole command line; `--project` is accepted before or after the subcommand."""
    common = Parser(add_help=False)
    parser = Parser(
        prog=PROG,
        description="Project memory in the repository: read and write the .canon/ store.",
        epilog="Exit codes: 0 done, 1 refused by the schema (check: errors found), 2 bad input. "
        f"The store's format, settings and addresses: {DOCS}",
    )
    for each, default in ((common, argparse.SUPPRESS), (parser, None)):  # before or after COMMAND
        each.add_argument(
            "--project",
            metavar="DIR",
            default=default,
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
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    def add(name: str, func: Any, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help_text, description=help_text)
        p.set_defaults(func=func)
        if name in JSON_COMMANDS:
            p.add_argument(
                "--format",
                choices=("text", "json"),
                default="text",
                help="text (default) or json: one JSON value, its shape in docs/FORMAT.md",
            )
        return p

    p = add("help", cmd_help, "show the help of canon or of one COMMAND")
    p.add_argument("topic", metavar="COMMAND", nargs="?")

    p = add(
        "tool",
        cmd_tool,
        "run one action given as a JSON object, as the MCP tool takes it (read, write, "
        "journal, map, search); '-' reads it from stdin",
    )
    p.add_argument("json", metavar="JSON")

    p = add("read", cmd_read, "print the article governing PATH")
    p.add_argument("path", metavar="PATH")

    p = add("write", cmd_write, "create or update the article for PATH")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--capsule", metavar="C", help="one dense line; absent means unchanged")
    p.add_argument("--body", metavar="B", help="article body; absent means unchanged")
    p.add_argument("--body-file", metavar="F", help="read the body from F ('-' for stdin)")
    p.add_argument("--scope", choices=("rule", "asset"), help="declare or withdraw a rule")

    p = add("journal", cmd_journal, "append one dated journal entry")
    p.add_argument("text", metavar="BODY", nargs="?", help="entry text")
    p.add_argument("--body", metavar="B", help=argparse.SUPPRESS)
    p.add_argument("--body-file", metavar="F", help="read the body from F ('-' for stdin)")
    p.add_argument(
        "--subject",
        metavar="ADDR",
        action="append",
        help="an address or path it is about (repeat for more: --subject a --subject b)",
    )
    p.add_argument("--slug", metavar="S", help="file name slug ([a-z0-9-])")

    p = add("map", cmd_map, "list articles as 'address: capsule', optionally under PREFIX")
    p.add_argument("prefix", metavar="PREFIX", nargs="?")

    p = add("search", cmd_search, "BM25 search over articles (and the journal with --journal)")
    p.add_argument("query", metavar="QUERY", nargs="+")
    p.add_argument("--journal", action="store_true", help="include journal entries")

    add("status", cmd_status, "one line: store, counts, schema state, orphans, stale")

    p = add("check", cmd_check, "whole-store lint for CI; exit 1 when errors are found")
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: file:line:column: severity: message [code], counted from 1; json: a list "
        "of findings whose line, start and end count from 0 (line + 1 is the text's line)",
    )
    p.add_argument(
        "--fix",
        action="store_true",
        help="first mend what has one safe fix: a front matter key canon owns given twice keeps "
        "its non-empty value (updated is not touched); a journal entry's block-list subject "
        "becomes the one line pi-canon reads",
    )

    p = add("review", cmd_review, "mark the article governing PATH reviewed today (not updated)")
    p.add_argument("path", metavar="PATH")

    p = add(
        "mv",
        cmd_mv,
        "move the article at OLD to NEW (paths or addresses) and rewrite the links to it, as "
        "an editor's rename does; for an asset that moved, or an orphan",
    )
    p.add_argument("old", metavar="OLD")
    p.add_argument("new", metavar="NEW")

    p = add("links", cmd_links, "outbound wikilinks and backlinks of the article governing PATH")
    p.add_argument("path", metavar="PATH")

    p = add("history", cmd_history, "commits of the article governing PATH and of its files")
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

    _add_rules(add)
    _add_settings(add)
    p = add(
        "trust",
        cmd_trust,
        "trust this project's canon.toml as it is now: its root outside the project and its "
        "mounts apply only once trusted, and again after any change to the file",
    )
    which = p.add_mutually_exclusive_group()
    p.set_defaults(trust_action="trust")
    which.add_argument(
        "--revoke", dest="trust_action", action="store_const", const="revoke",
        help="stop trusting this project's canon.toml",
    )  # fmt: skip
    which.add_argument(
        "--list", dest="trust_action", action="store_const", const="list",
        help="list the trusted projects",
    )  # fmt: skip

    p = add("graph", cmd_graph, "self-contained HTML graph of articles, journal and assets")
    p.add_argument(
        "--out",
        metavar="FILE",
        help="write the page to FILE ('-': standard output); without it a terminal gets a "
        "file in your cache folder (its path is printed) and a pipe gets the page",
    )
    p.add_argument("--open", action="store_true", help="write the page, then open it in a browser")

    p = add(
        "stats",
        cmd_stats,
        "what the memory cost the agents' context in this project: articles surfaced by "
        "address and by rank, characters per session and per touched file, the retrieval "
        "lane's scores, captured notes (the last two weeks of sessions)",
    )
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = add("mcp", cmd_mcp, "run the MCP server (one tool, canon) over stdio")
    _add_behaviour_flags(p)

    p = add("hook", cmd_hook, "agent hook entry: reads the hook event JSON on stdin")
    p.add_argument("agent", choices=("claude-code", "codex", "pi"))

    p = add(
        "init",
        cmd_init,
        "create the store (.canon/ with articles/, journal/ and schema.json); with an agent "
        "also write its hook and MCP configuration",
    )
    p.add_argument(
        "target",
        metavar="AGENT",
        nargs="?",
        choices=("claude-code", "codex", "claude-plugin", "pi"),
        help="claude-code, codex, claude-plugin (needs DIR: the Claude Code and Codex plugin "
        "marketplaces this repository ships) or pi",
    )
    p.add_argument("dir", metavar="DIR", nargs="?", help="where to write (default: the project)")
    p.add_argument(
        "--global",
        dest="user",
        action="store_true",
        help="pi: install the extension for every project (Pi's user extension folder)",
    )
    return parser


class _Version(argparse.Action):
    """`canon --version`: the installed package's version, read only when asked."""

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from canon_ls import version

        print(f"{PROG} {version() or 'unknown (not installed as a package)'}")
        parser.exit()


def cmd_help(args: argparse.Namespace) -> int:
    """`canon help [COMMAND]`: the same text as `canon [COMMAND] --help`, on stdout."""
    from canon_ls.agent.cli_common import UsageError

    parser = build_parser()
    if not args.topic:
        parser.print_help()
        return 0
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    chosen = commands.choices.get(args.topic)
    if chosen is None:
        raise UsageError(f"There is no command {args.topic!r}; `canon help` lists them.")
    chosen.print_help()
    return 0


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


def _add_rules(add: Any) -> None:
    p = add(
        "import",
        cmd_import,
        "turn other agents' rule files (.claude/rules, .cursor/rules, .github/instructions, "
        ".kiro/steering, copilot-instructions.md, .cursorrules, AGENTS.md, CLAUDE.md, GEMINI.md) "
        "into articles; shows the plan, writes it with --write",
    )
    p.add_argument("--write", action="store_true", help="write the articles (default: dry run)")
    p.add_argument(
        "--rules-under",
        metavar="DIR",
        default="rules",
        help="folder of the rule articles for files that apply across directories or to the "
        "whole project (default: rules, so .claude/rules/testing.md becomes rules/testing)",
    )
    p = add(
        "export",
        cmd_export,
        "write one rule file per article that governs files, in the format of HOST "
        "(claude-rules, cursor, copilot, kiro), so agents without canon's hooks see its capsule",
    )
    p.add_argument(
        "host", metavar="HOST", nargs="?", choices=HOST_CHOICES, help=", ".join(HOST_CHOICES)
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when a generated file is missing, out of date, left over or "
        "edited by hand (for CI); without HOST, every host whose folder holds generated files",
    )


def _add_settings(add: Any) -> None:
    p = add(
        "settings",
        cmd_settings,
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
    changes = p.add_subparsers(dest="change", metavar="set|unset", parser_class=Parser)
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
    # `-inf`, `-1e3`, `-0.5` are values to judge, not flags (argparse knows only `-2`, `-.5`)
    s._negative_number_matcher = re.compile(r"^-(\d*\.?\d+(e[-+]?\d+)?|inf(inity)?|nan)$", re.I)
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
