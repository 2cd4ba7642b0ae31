"""End-to-end tests of the `canon` CLI (SPEC §11.1) through the installed console script.

Every test runs the real process in a temporary project; nothing is mocked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

TODAY = "2026-11-29"


def canon_command() -> list[str]:
    """The installed console script next to the interpreter, else `python -m`."""
    script = Path(sys.executable).with_name("canon")
    return [str(script)] if script.exists() else [sys.executable, "-m", "canon_ls.agent.cli"]


@dataclass
class Run:
    code: int
    out: str
    err: str


def canon(
    *args: str, cwd: Path, stdin: str | bytes = b"", env: dict[str, str] | None = None
) -> Run:
    full_env = dict(os.environ, CANON_TODAY=TODAY)
    full_env.pop("CANON_DEBUG", None)
    full_env.update(env or {})
    proc = subprocess.run(
        [*canon_command(), *args],
        cwd=cwd,
        env=full_env,
        input=stdin.encode("utf-8") if isinstance(stdin, str) else stdin,
        capture_output=True,
        timeout=120,
    )
    return Run(proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8"))


def one_sentence(run: Run) -> str:
    """Bad input: exactly one line on stderr, no traceback, nothing on stdout."""
    assert "Traceback" not in run.err + run.out
    lines = [line for line in run.err.splitlines() if line.strip()]
    assert len(lines) == 1, run.err
    assert run.out == ""
    return lines[0]


def write_article(project: Path, address: str, text: str | bytes) -> Path:
    path = project / ".canon" / "articles" / f"{address}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- canon tool '<json>'


def test_tool_write_then_read_same_text_as_subcommand(project: Path) -> None:
    """SPEC §11.1: `canon tool` runs one §6 action; exit 0 when done."""
    action = {"action": "write", "path": "src/core/config.py", "capsule": "Layered config."}
    run = canon("tool", json.dumps(action), cwd=project)
    assert run.code == 0, run.err
    assert run.out.startswith("Wrote src/core/config.")
    via_tool = canon("tool", '{"action": "read", "path": "src/core/config.py"}', cwd=project)
    via_sub = canon("read", "src/core/config.py", cwd=project)
    assert via_tool.code == via_sub.code == 0
    assert via_tool.out == via_sub.out
    assert "Layered config." in via_sub.out


def test_tool_reads_json_from_stdin(project: Path) -> None:
    run = canon("tool", "-", cwd=project, stdin='{"action": "map"}')
    assert run.code == 0
    assert run.out.strip()


@pytest.mark.parametrize(
    "raw",
    [
        "{not json",  # malformed JSON
        "",  # empty
        '["read"]',  # not an object
        '{"action": "delete", "path": "a"}',  # unknown action
        '{"path": "a"}',  # no action
        '{"action": "read", "path": 5}',  # wrong type
        '{"action": "search", "query": ["a"]}',  # wrong type
        '{"action": "write", "path": "a", "scope": "global"}',  # bad scope
        '{"action": "search", "query": "a", "journal": "yes"}',  # wrong type
        "[" * 100_000,  # nested too deeply for the JSON parser
    ],
)
def test_tool_bad_input_exit_2_one_sentence(project: Path, raw: str) -> None:
    """SPEC §6 / §11.1: bad input exits 2 with one sentence, never a traceback."""
    run = canon("tool", raw, cwd=project)
    assert run.code == 2, (run.out, run.err)
    one_sentence(run)
    assert not (project / ".canon").exists(), "bad input must not create the store"


def test_tool_refused_by_schema_exit_1_nothing_written(project: Path) -> None:
    """SPEC §7: a `required` rule refuses the write (exit 1) and touches no file."""
    (project / ".canon").mkdir()
    schema = {
        "schema_version": 1,
        "article": {"capsule": {"required": True, "hint": "Say what it is in one line."}},
    }
    (project / ".canon" / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    run = canon("tool", '{"action": "write", "path": "src/a.py", "body": "x"}', cwd=project)
    assert run.code == 1
    assert "Say what it is in one line." in run.out
    assert not (project / ".canon" / "articles" / "src" / "a.md").exists()


# ---------------------------------------------------------------- subcommands


def test_read_miss_invites_a_write_and_creates_nothing(project: Path) -> None:
    """SPEC §2: reads, map and search on a missing store answer with a sentence."""
    for args in (["read", "src/core/config.py"], ["map"], ["search", "config"], ["status"]):
        run = canon(*args, cwd=project)
        assert run.code == 0, (args, run.err)
        assert run.out.strip(), args
    run = canon("check", cwd=project)
    assert run.code == 0
    assert not (project / ".canon").exists()


def test_write_subcommand_with_body_file_from_stdin(project: Path) -> None:
    """SPEC §11.1: `canon write PATH --capsule … --body-file -`."""
    body = "# src/core/config\nEnv beats file; secrets never land here.\n"
    run = canon(
        "write", "src/core/config.py", "--capsule", "Config.", "--body-file", "-",
        cwd=project, stdin=body,
    )  # fmt: skip
    assert run.code == 0, run.err
    text = (project / ".canon" / "articles" / "src" / "core" / "config.md").read_text("utf-8")
    assert "capsule: Config." in text
    assert "Env beats file; secrets never land here." in text
    assert f"updated: {TODAY}" in text
    assert (project / ".canon" / "schema.json").exists()


def test_write_body_file_and_scope(project: Path, tmp_path: Path) -> None:
    body_file = tmp_path / "body.md"
    body_file.write_text("All errors are logged with the feed URL.\n", encoding="utf-8")
    run = canon(
        "write", "conventions/errors", "--capsule", "Error rule.", "--body-file", str(body_file),
        "--scope", "rule", cwd=project,
    )  # fmt: skip
    assert run.code == 0, run.err
    text = (project / ".canon" / "articles" / "conventions" / "errors.md").read_text("utf-8")
    assert "scope: rule" in text
    run = canon("write", "conventions/errors", "--scope", "asset", cwd=project)
    assert run.code == 0
    text = (project / ".canon" / "articles" / "conventions" / "errors.md").read_text("utf-8")
    assert "scope:" not in text


def test_write_usage_errors_are_one_sentence(project: Path, tmp_path: Path) -> None:
    bad = tmp_path / "latin1.md"
    bad.write_bytes("caf\xe9".encode("latin-1"))
    cases = [
        ["write", "a", "--scope", "global"],
        ["write", "a", "--body", "x", "--body-file", "-"],
        ["write", "a", "--body-file", str(tmp_path / "missing.md")],
        ["write", "a", "--body-file", str(bad)],
        ["write"],
        ["frobnicate"],
        ["--project", str(tmp_path / "nope"), "map"],
    ]
    for args in cases:
        run = canon(*args, cwd=project)
        assert run.code == 2, (args, run.out, run.err)
        one_sentence(run)
    assert not (project / ".canon").exists()


def test_no_command_prints_help_exit_2(project: Path) -> None:
    run = canon(cwd=project)
    assert run.code == 2
    assert "usage" in run.err.lower()


def test_journal_subcommand_writes_entry_with_source_cli(project: Path) -> None:
    """SPEC §6 journal: subject is normalised, source is `cli` for the CLI."""
    run = canon(
        "journal", "Moved secrets to the keyring.", "--subject", "src/core/config.py",
        "--subject", "src/core", "--slug", "Keyring Move!", cwd=project,
    )  # fmt: skip
    assert run.code == 0, run.err
    entries = list((project / ".canon" / "journal").glob("*.md"))
    assert [e.name for e in entries] == [f"{TODAY}-keyring-move.md"]
    text = entries[0].read_text("utf-8")
    assert "harness: cli" in text
    assert "src/core/config" in text and "src/core/config.py" not in text
    assert "Moved secrets to the keyring." in text


@pytest.mark.parametrize(
    "args",
    [
        ["--subject", "src/app.py", "Chose a queue."],
        ["Chose a queue.", "--subject", "src/app.py"],
        ["--subject", "src/app.py", "--subject", "src/feed", "Chose a queue."],
        ["--subject=src/app.py", "Chose a queue.", "--subject", "src/feed"],
    ],
)
def test_journal_subject_takes_one_value_each(project: Path, args: list[str]) -> None:
    """The documented forms: --subject takes one address and repeats; the text is never taken
    for a second subject."""
    run = canon("journal", *args, cwd=project)
    assert run.code == 0, run.err
    (entry,) = (project / ".canon" / "journal").glob("*.md")
    text = entry.read_text("utf-8")
    assert text.rstrip().endswith("Chose a queue."), text
    subjects = text.split("subject:", 1)[1].split("logged:", 1)[0]
    assert "src/app" in subjects and "Chose" not in subjects
    assert ("src/feed" in subjects) == ("src/feed" in args)


def test_journal_body_file_stdin_and_collision(project: Path) -> None:
    """SPEC §6 journal: a name collision increments -<n> and never loses an entry."""
    for _ in range(2):
        run = canon("journal", "--body-file", "-", "--slug", "same", cwd=project, stdin="Twice.")
        assert run.code == 0, run.err
    names = sorted(e.name for e in (project / ".canon" / "journal").glob("*.md"))
    assert names == [f"{TODAY}-same-2.md", f"{TODAY}-same.md"]


def test_journal_empty_body_writes_nothing(project: Path) -> None:
    """SPEC §6 journal: an empty body asks what happened and writes nothing."""
    run = canon("journal", cwd=project)
    assert "Traceback" not in run.err
    assert (run.out + run.err).strip()
    assert not (project / ".canon" / "journal").exists()


def test_map_prefix_and_search_english_and_chinese(project: Path) -> None:
    """SPEC §6 map (segment-aware prefix) and search (CJK bigrams) through the CLI."""
    write_article(project, "src/core/config", "---\ncapsule: Loads layered config.\n---\nbody\n")
    write_article(project, "src/corex", "---\ncapsule: Unrelated.\n---\nbody\n")
    write_article(project, "docs/zh", "---\ncapsule: 中文文档。\n---\n日期格式使用年月日。\n")
    run = canon("map", "src/core", cwd=project)
    assert run.code == 0
    assert "src/core/config: Loads layered config." in run.out
    assert "src/corex" not in run.out
    run = canon("search", "layered", "config", cwd=project)
    assert run.code == 0 and "src/core/config" in run.out
    run = canon("search", "日期格式", cwd=project)
    assert run.code == 0 and "docs/zh" in run.out


def test_search_journal_flag_reads_entries(project: Path) -> None:
    canon("journal", "Chose the keyring for credentials.", cwd=project)
    plain = canon("search", "keyring", cwd=project)
    with_journal = canon("search", "keyring", "--journal", cwd=project)
    assert plain.code == with_journal.code == 0
    assert TODAY in with_journal.out
    assert with_journal.out != plain.out


def test_project_option_before_or_after_and_discovery_from_subdir(project: Path) -> None:
    """SPEC §2: --project, else the nearest ancestor holding .canon/, else the cwd."""
    write_article(project, "src/core/config", "---\ncapsule: Found it.\n---\n")
    elsewhere = project.parent
    for args in (
        ["--project", str(project), "read", "src/core/config.py"],
        ["read", "src/core/config.py", "--project", str(project)],
    ):
        run = canon(*args, cwd=elsewhere)
        assert run.code == 0 and "Found it." in run.out, args
    run = canon("read", "config.py", cwd=project / "src" / "core")
    assert "Found it." in run.out


def test_status_is_one_line(project: Path) -> None:
    write_article(project, "src/core/config", "---\ncapsule: C.\nupdated: 2026-11-01\n---\n")
    write_article(project, "src/gone", "---\ncapsule: Orphan.\n---\n")
    canon("journal", "Something happened.", cwd=project)
    run = canon("status", cwd=project)
    assert run.code == 0
    lines = run.out.strip().splitlines()
    assert len(lines) == 1
    line = lines[0]
    assert str(project) in line
    assert "2 articles" in line and "1 journal entry" in line
    assert "1 orphan" in line


# ---------------------------------------------------------------- robustness (SPEC §5, §7, §12)


def test_malformed_front_matter_still_reads_maps_searches_checks(project: Path) -> None:
    """SPEC §5: malformed front matter never crashes; the article reads with an empty capsule."""
    write_article(
        project, "src/core/config", "---\ncapsule: [unclosed\n  : : :\n---\nBody words.\n"
    )
    for args in (["read", "src/core/config.py"], ["map"], ["search", "body", "words"]):
        run = canon(*args, cwd=project)
        assert run.code == 0, (args, run.err)
        assert "Traceback" not in run.err
    assert "src/core/config" in canon("map", cwd=project).out
    check = canon("check", "--format", "json", cwd=project)
    findings = json.loads(check.out)
    assert any(
        f["address"] == "src/core/config" and "front matter" in f["message"] for f in findings
    )


def test_non_utf8_article_is_reported_not_fatal(project: Path) -> None:
    """SPEC §12: binary or non-UTF-8 files yield a diagnostic, never a crash."""
    write_article(project, "src/core/config", b"---\ncapsule: caf\xe9\n---\n\xff\xfe body\n")
    write_article(project, "src/ok", "---\ncapsule: Fine.\n---\n")
    for args in (["read", "src/core/config.py"], ["map"], ["search", "fine"], ["status"]):
        run = canon(*args, cwd=project)
        assert run.code == 0, (args, run.err)
        assert "Traceback" not in run.err
    assert "src/ok: Fine." in canon("map", cwd=project).out
    check = canon("check", "--format", "json", cwd=project)
    findings = json.loads(check.out)
    assert any(f["address"] == "src/core/config" and "UTF-8" in f["message"] for f in findings)


def test_malformed_schema_fails_open_and_loud(project: Path) -> None:
    """SPEC §7: a malformed schema.json stops enforcement and every write says so."""
    (project / ".canon").mkdir()
    (project / ".canon" / "schema.json").write_text("{not json", encoding="utf-8")
    run = canon("write", "src/core/config.py", "--capsule", "Still lands.", cwd=project)
    assert run.code == 0
    assert "schema.json" in run.out
    assert "malformed" in canon("status", cwd=project).out
    for args in (["read", "src/core/config.py"], ["map"], ["search", "lands"]):
        assert canon(*args, cwd=project).code == 0
    findings = json.loads(canon("check", "--format", "json", cwd=project).out)
    assert any("schema.json" in f["message"] for f in findings)


# ---------------------------------------------------------------- check


def test_check_json_exit_codes(project: Path) -> None:
    """SPEC §11.1: `canon check` exits non-zero on errors, 0 otherwise; json is a list."""
    write_article(project, "src/core/config", "---\ncapsule: Fine.\nupdated: 2026-11-29\n---\n")
    clean = canon("check", "--format", "json", cwd=project)
    assert clean.code == 0, clean.out
    assert isinstance(json.loads(clean.out), list)
    text = canon("check", cwd=project)
    assert text.code == 0 and text.out.strip().splitlines()[-1].startswith("canon check:")

    (project / ".canon" / "schema.json").write_text(
        json.dumps({"schema_version": 1, "article": {"body": {"required": True}}}),
        encoding="utf-8",
    )
    failing = canon("check", "--format", "json", cwd=project)
    findings = json.loads(failing.out)
    errors = [f for f in findings if f["severity"] == "error"]
    assert errors and failing.code == 1
    assert canon("check", cwd=project).code == 1
    for f in findings:
        assert {"address", "code", "severity", "message", "line", "file"} <= set(f)


def test_check_text_lists_broken_link_with_file_and_line(project: Path) -> None:
    write_article(
        project,
        "src/core/config",
        "---\ncapsule: C.\nupdated: 2026-11-29\n---\nSee [[src/nowhere]].\n",
    )
    run = canon("check", cwd=project)
    assert "Traceback" not in run.err
    lines = [line for line in run.out.splitlines() if "src/nowhere" in line]
    assert lines and lines[0].startswith(".canon/articles/src/core/config.md:5:")


# ---------------------------------------------------------------- wiring and import cost


def test_module_is_runnable_with_python_m(project: Path) -> None:
    """`python -m canon_ls.agent.cli` is the CLI itself: it writes, and it maps what it wrote
    exactly as the `canon` script does."""

    def module(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "canon_ls.agent.cli", *args],
            cwd=project,
            env=dict(os.environ, CANON_TODAY=TODAY),
            capture_output=True,
            text=True,
            timeout=120,
        )

    wrote = module("write", "src/core/config.py", "--capsule", "Layered config.")
    assert wrote.returncode == 0 and wrote.stdout.startswith("Wrote src/core/config"), wrote
    mapped = module("map")
    assert mapped.returncode == 0, mapped.stderr
    assert mapped.stdout == "src/core/config: Layered config.\n", mapped.stdout
    assert mapped.stdout == canon("map", cwd=project).out


def test_cli_import_stays_light() -> None:
    """Hook latency: importing the CLI pulls in no pygls, mcp, lsprotocol or yaml."""
    code = (
        "import sys, canon_ls.agent.cli\n"
        "heavy = {'pygls', 'mcp', 'lsprotocol', 'yaml', 'ruamel', 'pydantic', 'canon_ls.core'}\n"
        "print(sorted(m for m in sys.modules if m in heavy or m.split('.')[0] in heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert out.strip() == "[]"


def test_hook_and_init_are_wired(project: Path) -> None:
    """SPEC §11.3: `canon hook` and `canon init` reach the hooks and init modules."""
    run = canon("hook", "claude-code", cwd=project, stdin="{}")
    assert "Traceback" not in run.err
    assert run.code in (0, 2)
    assert not (project / ".canon").exists(), "hooks never create the store"
    bad = canon("hook", "vim", cwd=project)
    assert bad.code == 2
    one_sentence(bad)
    bad = canon("init", "emacs", cwd=project)
    assert bad.code == 2
    one_sentence(bad)
    run = canon("init", "codex", cwd=project)
    assert run.code == 0, run.err
    assert (project / ".codex").is_dir()


def test_concurrent_cli_journal_writers_all_land(project: Path) -> None:
    """SPEC §12: concurrent journal writers all land; no entry is overwritten."""
    env = dict(os.environ, CANON_TODAY=TODAY)
    procs = [
        subprocess.Popen(
            [*canon_command(), "journal", f"Entry {i}.", "--slug", "race"],
            cwd=project,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        for i in range(8)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    entries = sorted((project / ".canon" / "journal").glob("*.md"))
    assert len(entries) == 8
    bodies = {e.read_text("utf-8").rsplit("---\n", 1)[-1].strip() for e in entries}
    assert bodies == {f"Entry {i}." for i in range(8)}
