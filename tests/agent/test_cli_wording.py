"""The CLI speaks CLI (SPEC §11.1 last item): every message a `canon` subcommand prints names
flags and subcommands, never the JSON tool's syntax; `canon tool` (JSON in) and the JSON tool
keep the JSON words (SPEC §6). Counts read as sentences; help never cites the specification.

The real `canon` process in a temporary project (test_cli.canon).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from test_cli import canon, one_sentence, write_article

from canon_ls.agent.cli import build_parser

# What JSON-tool syntax looks like in a sentence: an action object, a quoted key.
JSON_SYNTAX = re.compile(r'\{\s*"|"action"|"\w+": *(?:true|false|null|"|\[|\{|\d)')


def speaks_cli(text: str) -> None:
    assert not JSON_SYNTAX.search(text), text
    assert "SPEC" not in text and "§" not in text, text


def article(project: Path, address: str, capsule: str, body: str = "") -> None:
    write_article(project, address, f"---\ncapsule: {capsule}\nupdated: 2026-11-29\n---\n{body}")


def old_assets(project: Path) -> None:
    """The project's files date from before every article (no stale finding from them)."""
    for path in project.rglob("*"):
        if ".canon" not in path.parts:
            os.utime(path, (1767225600, 1767225600))  # 2026-01-01


def entry(project: Path, name: str, body: str) -> None:
    journal = project / ".canon" / "journal"
    journal.mkdir(parents=True, exist_ok=True)
    (journal / name).write_text(f"---\ndate: 2026-11-29\nsource: cli\n---\n{body}\n", "utf-8")


def test_a_miss_names_canon_write(project: Path) -> None:
    """SPEC §11.1: `canon read` of an ungoverned file says how to write one, in CLI words."""
    article(project, "README", "The front page.")
    run = canon("read", "src/core/config.py", cwd=project)
    assert run.code == 0
    assert "write one with `canon write src/core/config --capsule …`." in run.out
    speaks_cli(run.out)


def test_the_json_tool_keeps_json_words(project: Path) -> None:
    """SPEC §6: `canon tool` takes an action object and answers in the tool's words."""
    article(project, "README", "The front page.")
    run = canon("tool", '{"action": "read", "path": "src/core/config.py"}', cwd=project)
    assert '{"action": "write", "path": "src/core/config", "capsule": "…"' in run.out
    entry(project, "2026-11-29-a.md", "front page moved")
    run = canon("tool", '{"action": "search", "query": "front"}', cwd=project)
    assert 'add "journal": true to include it.' in run.out


def test_search_names_the_journal_flag_and_counts_right(project: Path) -> None:
    """SPEC §6 search through the CLI: `--journal`, and "1 entry … it", "2 entries … them"."""
    article(project, "README", "The front page; retry budget lives in src.")
    entry(project, "2026-11-29-a.md", "Chose a retry budget of three.")
    run = canon("search", "front", cwd=project)
    assert run.out.splitlines()[0] == '1 article matches "front":'
    assert run.out.splitlines()[-1] == (
        "The journal has 1 entry (not searched); add --journal to include it."
    )
    speaks_cli(run.out)
    entry(project, "2026-11-29-b.md", "Another entry.")
    run = canon("search", "front", cwd=project)
    assert "The journal has 2 entries (not searched); add --journal to include them." in run.out


def test_search_with_the_journal_counts_one_result_as_one(project: Path) -> None:
    """The "1 results … matches" bug: one hit reads `1 result … matches`, two `2 results
    … match`."""
    article(project, "README", "The front page.")
    entry(project, "2026-11-29-a.md", "Keyring decided.")
    run = canon("search", "--journal", "keyring", cwd=project)
    assert run.out.splitlines()[0] == '1 result (articles and journal) matches "keyring":'
    entry(project, "2026-11-29-b.md", "The keyring again.")
    run = canon("search", "--journal", "keyring", cwd=project)
    assert run.out.splitlines()[0] == '2 results (articles and journal) match "keyring":'


def test_missing_and_empty_store_point_to_canon_init(project: Path) -> None:
    """SPEC §2, §11.1: no store yet: `canon init` creates it; an empty one: `canon write`."""
    for args in (("map",), ("search", "x"), ("status",), ("check",)):
        run = canon(*args, cwd=project)
        assert run.code == 0 and "`canon init` creates it" in run.out, (args, run.out)
        speaks_cli(run.out)
    (project / ".canon" / "articles").mkdir(parents=True)
    run = canon("map", cwd=project)
    assert run.out.strip() == (
        "The store has no articles yet; add one with `canon write PATH --capsule …`."
    )


def test_a_file_where_the_store_belongs_is_named_not_hidden(project: Path) -> None:
    """`canon init` cannot create a store over a plain file: status says what to move first."""
    (project / ".canon").write_text("not a store")
    run = canon("status", cwd=project)
    assert run.code == 0 and "is a file, not a directory; move it aside" in run.out, run.out
    speaks_cli(run.out)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("read", ""), "canon read needs a PATH, e.g. `canon read src/app.py`."),
        (("write", "", "--capsule", "x"), "canon write needs a PATH"),
        (("search", " "), "canon search needs a QUERY, e.g. `canon search config loading`."),
    ],
)
def test_a_missing_argument_is_a_cli_sentence(
    project: Path, args: tuple[str, ...], expected: str
) -> None:
    article(project, "README", "The front page.")
    run = canon(*args, cwd=project)
    assert run.code == 2
    line = one_sentence(run)
    assert line.startswith(expected), line
    speaks_cli(line)


def test_write_lints_speak_no_json(project: Path) -> None:
    """SPEC §6.1 items 3 and 5 in `canon write`'s answer: no action names, no JSON."""
    run = canon("write", "notes/meeting/today.md", "--capsule", "Standup.", cwd=project)
    assert run.code == 0 and "record events in the journal" in run.out
    speaks_cli(run.out)
    article(project, "src/core/config", "Config.")
    run = canon("write", "src/core/gone.py", "--capsule", "Was here.", cwd=project)
    assert "Orphan: no file or directory maps to src/core/gone" in run.out
    speaks_cli(run.out)


def test_check_names_the_scope_flag_and_counts_info(project: Path) -> None:
    """`canon check` in CLI words: an orphan's rule declaration is `canon write … --scope
    rule`; the summary says "1 info" and "2 info" (no "infos")."""
    article(project, "src/core/config", "Config.")
    article(project, "src/core/gone", "Was here.")
    for name in ("a", "b"):
        write_article(
            project,
            f"topics/{name}",
            "---\ncapsule: Topic.\nupdated: 2026-01-01\nstale_after: 2026-02-01\n---\n",
        )
    old_assets(project)
    run = canon("check", cwd=project)
    assert "or declare it a rule with `canon write src/core/gone --scope rule` if" in run.out
    assert run.out.splitlines()[-1] == "canon check: 1 warning, 2 info in 4 articles."
    speaks_cli(run.out)


def test_check_json_lines_count_from_zero_as_documented(project: Path) -> None:
    """`check --format json`: line, start and end count from 0; the text format's
    line:column is the same place counted from 1 (both said in `canon check --help`)."""
    article(project, "src/core/config", "Config.", "# src/core/config\n\nSee [[src/nowhere]].\n")
    old_assets(project)
    text = canon("check", cwd=project).out.splitlines()[0]
    rows = json.loads(canon("check", "--format", "json", cwd=project).out)
    (row,) = [r for r in rows if r["code"] == "broken-link"]
    assert text.startswith(f"{row['file']}:{row['line'] + 1}:{row['start'] + 1}: warning:")
    assert (row["line"], row["start"], row["end"]) == (6, 4, 19)
    helptext = canon("check", "--help", cwd=project).out
    assert "count from 0" in " ".join(helptext.split())


def _subcommands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sorted(sub.choices)  # type: ignore[arg-type]


def test_every_help_page_speaks_cli(tmp_path: Path) -> None:
    """`canon --help` and every subcommand's `--help`: no specification sections, no JSON
    syntax (argparse's own `{a,b}` choice lists are not JSON). `canon tool` says in words
    that it takes a JSON object."""
    pages = {"canon": canon("--help", cwd=tmp_path)}
    for name in _subcommands():
        pages[name] = canon(name, "--help", cwd=tmp_path)
    assert len(pages) > 15, sorted(pages)
    for name, run in pages.items():
        assert run.code == 0 and run.out.startswith("usage: canon"), (name, run.err)
        speaks_cli(run.out)
    assert "JSON object" in pages["tool"].out
    assert "docs/FORMAT.md" in pages["canon"].out


def test_the_orphan_question_names_the_cli_command(project: Path) -> None:
    """SPEC §6 read / §6.1 item 5 through the CLI: declaring a rule is `canon write … --scope
    rule` in `canon read`, `canon write` and `canon check` alike; the JSON tool keeps its words."""
    (project / "src/feed").mkdir(parents=True)
    (project / "src/feed/fetch.py").write_text("x = 1\n")
    article(project, "src/feed/fetch", "Fetches.")
    cli = "declare it a rule with `canon write src/feed/gone --scope rule`"
    wrote = canon("write", "src/feed/gone", "--capsule", "Gone thing.", cwd=project)
    assert cli in wrote.out, wrote.out
    read = canon("read", "src/feed/gone", cwd=project)
    assert "Orphan: no file or directory maps to src/feed/gone." in read.out
    assert cli in read.out, read.out
    assert cli in canon("check", cwd=project).out
    tool = canon("tool", '{"action": "read", "path": "src/feed/gone"}', cwd=project)
    assert "declare it a rule (scope rule)" in tool.out, tool.out
