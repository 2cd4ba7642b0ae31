"""`canon import` / `canon export` are faithful to what each host reads (issue 39), through the
real CLI and the real hook process over hand-written fixtures.

SPEC §11.3 "An article may apply beyond its own address": a rule imported with globs or as
always-on keeps that scope (front matter `applies` / `always`, docs/FORMAT.md), surfaces on a
touch of any file it applies to together with the governing article, once per cycle, and the
nearest article never hides it. docs/AGENTS.md "Rules for other agents" holds the host tables.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml
from hookrun import Hook, context, payload

from tests.agent.test_cli import canon


def _files(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _meta(project: Path, address: str) -> tuple[dict[str, object], str]:
    text = (project / ".canon" / "articles" / f"{address}.md").read_text(encoding="utf-8")
    _, front, body = text.split("---\n", 2)
    return yaml.safe_load(front), body


def _imported(project: Path) -> str:
    run = canon("import", "--write", cwd=project)
    assert run.code == 0, run.out + run.err
    return run.out


# ---------------------------------------------------------------- everything a host reads


def test_rule_links_are_followed_inside_the_project_and_refused_outside(tmp_path: Path) -> None:
    """A shared rules folder linked as `.claude/rules`, a linked Copilot file, and a link
    leading out of the project (named with a sentence, never read)."""
    outside = tmp_path / "outside.md"
    outside.write_text("Secret rule.\n", encoding="utf-8")
    project = _files(
        tmp_path / "p",
        {
            "shared/rules/tests.md": '---\npaths:\n  - "tests/**"\n---\nTests use fixtures.\n',
            "shared/copilot/py.instructions.md": '---\napplyTo: "**/*.py"\n---\nType hints.\n',
            "tests/test_a.py": "",
        },
    )
    (project / ".claude").mkdir()
    (project / ".claude/rules").symlink_to("../shared/rules")
    (project / "shared/rules/away.md").symlink_to(outside)
    (project / ".github/instructions").mkdir(parents=True)
    (project / ".github/instructions/py.instructions.md").symlink_to(
        "../../shared/copilot/py.instructions.md"
    )
    out = _imported(project)
    assert ".claude/rules/tests.md -> tests: create" in out
    assert ".github/instructions/py.instructions.md -> rules/py: create" in out
    assert ".claude/rules/away.md: skipped, it is a link leading outside the project" in out
    assert not any("Secret" in p.read_text() for p in (project / ".canon").rglob("*.md"))


def test_nested_cursor_rules_apply_relative_to_their_folder(tmp_path: Path) -> None:
    project = _files(
        tmp_path / "p",
        {
            "apps/api/.cursor/rules/sql.mdc": "---\nglobs: db/**/*.sql\n---\nMigrations only.\n",
            "apps/api/db/001.sql": "",
        },
    )
    out = _imported(project)
    assert "apps/api/.cursor/rules/sql.mdc -> rules/apps/api/sql: create" in out
    assert _meta(project, "rules/apps/api/sql")[0]["applies"] == ["apps/api/db/**/*.sql"]


def test_an_include_line_is_read_as_the_file_it_names(tmp_path: Path) -> None:
    """Claude Code reads `@AGENTS.md` in CLAUDE.md as that file's text: one article, not an
    article whose capsule is '@AGENTS.md'."""
    project = _files(
        tmp_path / "p",
        {
            "AGENTS.md": "Run make check before pushing.\n",
            "CLAUDE.md": "@AGENTS.md\n",
            "docs/GEMINI.md": "Docs rules:\n@style.md\n",
            "docs/style.md": "Sentence case headings.\n",
        },
    )
    out = _imported(project)
    assert "CLAUDE.md: skipped, it holds the same text as AGENTS.md." in out
    assert "Sentence case headings." in _meta(project, "docs")[1]


# ---------------------------------------------------------------- rules reach their files

RULES = {
    ".claude/rules/apps.md": '---\npaths:\n  - "apps/**"\n---\nApps log through pino.\n',
    ".cursor/rules/tsx.mdc": "---\nglobs: **/*.tsx\n---\nComponents are function components.\n",
    "AGENTS.md": "Commit subjects in the imperative.\n",
    "apps/web/CLAUDE.md": "The web app builds with vite.\n",
    "apps/web/page.tsx": "",
    "apps/web/util.ts": "",
    "lib/x.py": "",
}


def _read(hook: Hook, project: Path, rel: str) -> str:
    data = payload("claude-code", "post_tool_use_read", project)
    data["tool_input"] = {"file_path": str(project / rel)}
    return context(hook(data))


def test_a_touch_surfaces_every_rule_that_applies_once_per_cycle(tmp_path: Path) -> None:
    """The `apps/**` rule reaches apps/web/page.tsx under apps/web's own article; the file-type
    and always-on rules arrive too; each once per cycle."""
    project = _files(tmp_path / "p", RULES)
    _imported(project)
    assert _meta(project, "rules/agents")[0]["always"] is True
    assert _meta(project, "rules/tsx")[0]["applies"] == ["**/*.tsx"]
    hook = Hook("claude-code", tmp_path / "state", tmp_path / "trace.jsonl")
    hook(payload("claude-code", "session_start_startup", project))
    first = _read(hook, project, "apps/web/page.tsx")
    assert "- apps/web (governs apps/web/page.tsx): The web app builds with vite." in first
    assert "- apps (applies to apps/web/page.tsx): Apps log through pino." in first
    assert "- rules/tsx (applies to apps/web/page.tsx): Components are function" in first
    assert "- rules/agents (applies to apps/web/page.tsx): Commit subjects" in first
    assert _read(hook, project, "apps/web/util.ts") == ""  # all seen this cycle
    hook(payload("claude-code", "session_start_compact", project))
    again = _read(hook, project, "lib/x.py")  # governed by nothing: the always-on rule only
    assert again.count("\n- ") == 1 and "rules/agents" in again


def test_a_file_type_rule_inside_a_folder_does_not_govern_the_folder(tmp_path: Path) -> None:
    """`src/Pkg*/README.md` is a rule about READMEs: no `src` article tells every file of src
    how to write them; a negated glob keeps its files out."""
    project = _files(
        tmp_path / "p",
        {
            ".github/instructions/readme.instructions.md": (
                '---\napplyTo: "src/Pkg*/README.md"\n---\nREADMEs list the options.\n'
            ),
            ".claude/rules/lib.md": (
                '---\npaths:\n  - "lib/**"\n  - "!lib/gen/**"\n---\nNo globals in lib.\n'
            ),
            "src/PkgA/README.md": "",
            "src/PkgA/a.cs": "",
            "lib/a.py": "",
            "lib/gen/b.py": "",
        },
    )
    out = _imported(project)
    assert "readme.instructions.md -> rules/readme: create" in out
    assert not (project / ".canon/articles/src.md").exists()
    hook = Hook("claude-code", tmp_path / "state")
    assert _read(hook, project, "src/PkgA/a.cs") == ""
    assert "READMEs list the options." in _read(hook, project, "src/PkgA/README.md")
    assert _read(hook, project, "lib/gen/b.py") == ""
    assert "No globals in lib." in _read(hook, project, "lib/a.py")


# ---------------------------------------------------------------- export round-trips


def test_export_gives_each_host_back_the_text_and_scope_it_had(tmp_path: Path) -> None:
    project = _files(
        tmp_path / "p",
        {
            ".cursor/rules/shared.mdc": (
                "---\ndescription: Shared code\nglobs: @shared/**,src/**/*.tsx\n---\n"
                "Import shared code through the alias.\n"
            ),
            ".cursor/rules/always.mdc": "---\nalwaysApply: true\n---\nAnswer tersely.\n",
            ".cursor/rules/ask.mdc": "---\ndescription: Release steps\n---\nTag from main.\n",
            "src/a.tsx": "",
        },
    )
    _imported(project)
    for path in (project / ".cursor/rules").glob("*.mdc"):
        path.unlink()
    assert canon("export", "cursor", cwd=project).code == 0
    shared = (project / ".cursor/rules/canon-rules-shared.mdc").read_text(encoding="utf-8")
    assert "globs: @shared/**,src/**/*.tsx\n" in shared and "description: Shared code\n" in shared
    assert "Import shared code through the alias." in shared
    always = (project / ".cursor/rules/canon-rules-always.mdc").read_text(encoding="utf-8")
    assert "alwaysApply: true" in always and "Answer tersely." in always
    # each file reads back as the rule it was
    again = canon("import", cwd=project)
    assert "written by canon export left out" in again.out

    assert canon("export", "copilot", cwd=project).code == 0
    copilot = project / ".github/instructions/canon-rules-always.instructions.md"
    assert yaml.safe_load(copilot.read_text(encoding="utf-8").split("---\n")[1]) == {
        "applyTo": "**"
    }
    shared_copilot = project / ".github/instructions/canon-rules-shared.instructions.md"
    front = yaml.safe_load(shared_copilot.read_text(encoding="utf-8").split("---\n")[1])
    assert front == {"applyTo": "@shared/**,src/**/*.tsx"}

    claude = canon("export", "claude-rules", cwd=project)
    line = ".claude/rules/canon-rules-ask.md (article rules/ask): not exported: this host has"
    assert line in claude.out and claude.code == 0
    assert "[export-inexpressible]" in canon("check", cwd=project).out
    assert not (project / ".claude/rules/canon-rules-always.md").read_text().startswith("---")


# ---------------------------------------------------------------- the smaller findings


SMALL = {
    ".claude/rules/crlf.md": "---\r\npaths:\r\n  - src/**\r\n---\r\nLine one.\r\nTwo.\r\n",
    ".cursor/rules/list.mdc": "---\nglobs:\n- **/*.go\n---\nRun gofmt.\n",
    ".kiro/steering/colon.md": "Follow these steps:\n\n- Keep it short.\n",
    ".cursor/rules/a.mdc": "---\ndescription: Web A\nglobs: web/**\n---\nText A.\n",
    ".cursor/rules/b.mdc": "---\ndescription: Web B\nglobs: web/**\n---\nText B.\n",
    "src/x.ts": "",
    "web/y.ts": "",
}


def test_crlf_sources_leave_no_cr_in_bodies(tmp_path: Path) -> None:
    project = _files(tmp_path / "p", SMALL)
    _imported(project)
    assert b"\r" not in (project / ".canon/articles/src.md").read_bytes()


def test_a_globs_list_at_column_zero_is_read(tmp_path: Path) -> None:
    project = _files(tmp_path / "p", SMALL)
    assert ".cursor/rules/list.mdc -> rules/list: create" in _imported(project)
    assert _meta(project, "rules/list")[0]["applies"] == ["**/*.go"]


def test_a_capsule_is_never_a_line_that_ends_in_a_colon(tmp_path: Path) -> None:
    project = _files(tmp_path / "p", SMALL)
    _imported(project)
    assert _meta(project, "rules/colon")[0]["capsule"] == "Keep it short."


def test_a_description_is_kept_when_two_files_merge(tmp_path: Path) -> None:
    project = _files(tmp_path / "p", SMALL)
    _imported(project)
    merged = (project / ".canon/articles/web.md").read_text(encoding="utf-8")
    assert "Web B\n\nText B." in merged and "Text A." in merged


def test_the_hook_sees_a_rule_added_changed_or_removed_since_its_last_call(
    tmp_path: Path,
) -> None:
    """The hooks keep the store's rules between calls (core/reach.py): a rule written since,
    a rule file edited in place and one removed are all seen on the next touch."""
    project = _files(tmp_path / "p", {"a.go": "", "b.go": "", "c.go": "", "d.go": ""})
    canon("write", "notes", "--capsule", "Notes.", cwd=project)
    hook = Hook("claude-code", tmp_path / "state")
    assert _read(hook, project, "a.go") == ""  # no rule yet (and the cache is written)
    rule = project / ".canon/articles/rules/go.md"
    rule.parent.mkdir(parents=True)
    rule.write_text('---\ncapsule: Run gofmt.\napplies: ["*.go"]\n---\nBody.\n')
    assert "Run gofmt." in _read(hook, project, "b.go")
    hook(payload("claude-code", "session_start_clear", project))
    with rule.open("r+") as fh:  # in place, as some editors save
        text = fh.read()
        fh.seek(0)
        fh.write(text.replace("*.go", "*.rs"))
    assert _read(hook, project, "c.go") == ""
    rule.unlink()
    assert _read(hook, project, "d.go") == ""


def test_a_rule_imported_before_the_scope_keys_gets_them(tmp_path: Path) -> None:
    """An article that already holds the rule's text (an import by an older canon) gains the
    host's scope on the next import, once; its text is not touched."""
    project = _files(
        tmp_path / "p", {".cursor/rules/ts.mdc": "---\nglobs: **/*.ts\n---\nNo any.\n"}
    )
    canon("write", "rules/ts", "--capsule", "No any.", "--body", "No any.\n", cwd=project)
    first = canon("import", "--write", cwd=project)
    assert "-> rules/ts: already imported; add its scope" in first.out
    meta, body = _meta(project, "rules/ts")
    assert meta["applies"] == ["**/*.ts"] and body == "No any.\n"
    again = canon("import", "--write", cwd=project)
    assert "-> rules/ts: already imported, nothing to do" in again.out
