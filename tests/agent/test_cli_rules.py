"""`canon import` and `canon export HOST` through the real CLI process over fixture repositories
holding each host's instruction files (tests/agent/rule_fixtures.py).

Decisions tested (docs/AGENTS.md "Rules for other agents"): globs covering one whole directory
become that directory's article; other globs, always-on and on-request files become `scope:
rule` articles under `rules/`; a second import changes nothing; an existing article is merged into,
never overwritten; an export writes one marked file per article that governs files and never
touches a file it did not write or one edited by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.agent.rule_fixtures import FORMATS, make_project
from tests.agent.test_cli import canon, write_article


def _article(project: Path, address: str) -> tuple[dict[str, object], str]:
    text = (project / ".canon" / "articles" / f"{address}.md").read_text(encoding="utf-8")
    _, front, body = text.split("---\n", 2)
    return yaml.safe_load(front), body


def _journal(project: Path) -> dict[str, str]:
    folder = project / ".canon" / "journal"
    if not folder.is_dir():
        return {}
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir())}


def _snapshot(project: Path) -> dict[str, tuple[bytes, int]]:
    store = project / ".canon"
    return {
        p.relative_to(store).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(store.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_import_each_format_becomes_its_article(tmp_path: Path, name: str) -> None:
    relpath, text, address, scope, capsule, line = FORMATS[name]
    project = make_project(tmp_path / "p", [name])
    dry = canon("import", cwd=project)
    assert dry.code == 0, dry.err
    assert f"{relpath} -> {address}: create" in dry.out
    assert "Dry run" in dry.out
    assert not (project / ".canon").exists()  # a dry run writes nothing

    done = canon("import", "--write", cwd=project)
    assert done.code == 0, done.err
    meta, body = _article(project, address)
    assert meta["capsule"] == capsule
    assert meta.get("scope", "asset") == scope
    assert line in body
    assert text.split("---\n")[-1].strip() in body  # nothing of the text is lost
    entries = _journal(project)
    assert len(entries) == 1
    entry = next(iter(entries.values()))
    assert f"`{relpath}`" in entry and address in entry


def test_import_twice_changes_nothing(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    assert canon("import", "--write", cwd=project).code == 0
    before = _snapshot(project)
    again = canon("import", "--write", cwd=project)
    assert again.code == 0, again.err
    assert "0 articles created, 0 merged" in again.out
    assert _snapshot(project) == before  # no article rewritten, no new journal entry


def test_import_merges_into_an_existing_article_and_keeps_it(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", ["agents-md"])
    write_article(
        project,
        "packages/web",
        "---\ncapsule: The web front end.\nupdated: 2026-01-01\n---\nOwn notes stay.\n",
    )
    plan = canon("import", cwd=project)
    assert "packages/web/AGENTS.md -> packages/web: add its text" in plan.out
    assert canon("import", "--write", cwd=project).code == 0
    meta, body = _article(project, "packages/web")
    assert meta["capsule"] == "The web front end."  # the article's own capsule wins
    assert body.startswith("Own notes stay.")
    assert "## From packages/web/AGENTS.md" in body and "Build with vite" in body
    # the article edited afterwards: the journal remembers the import, nothing is re-added
    canon("write", "packages/web", "--body", "Rewritten by hand.", cwd=project)
    again = canon("import", "--write", cwd=project)
    assert "already imported" in again.out
    assert _article(project, "packages/web")[1].strip() == "Rewritten by hand."


def test_two_files_for_one_directory_land_in_one_article(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", ["kiro", "claude-md"])
    run = canon("import", "--write", cwd=project)
    assert run.code == 0, run.err
    _, body = _article(project, "src/db")
    assert "append-only" in body and "## From src/db/CLAUDE.md" in body
    assert len(_journal(project)) == 2


def test_rules_under_picks_the_folder_of_rule_articles(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", ["copilot"])
    run = canon("import", "--write", "--rules-under", "conventions/agents", cwd=project)
    assert run.code == 0, run.err
    meta, _ = _article(project, "conventions/agents/typescript")
    assert meta["scope"] == "rule"
    for folder in ("/", "../up", "a/../../up"):  # `..` leading out is refused (issue 35)
        bad = canon("import", "--rules-under", folder, cwd=project)
        assert bad.code == 2 and "rules" in bad.err and "Traceback" not in bad.err


def test_import_bad_front_matter_is_a_sentence_and_the_rest_imports(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", ["cursor"])
    broken = project / ".cursor" / "rules" / "broken.mdc"
    broken.write_text("---\nglobs: [unclosed\n---\nText.\n", encoding="utf-8")
    (project / ".cursor" / "rules" / "open.mdc").write_text("---\nglobs: a/**\n", "utf-8")
    run = canon("import", "--write", cwd=project)
    assert run.code == 0, run.err
    assert ".cursor/rules/broken.mdc: skipped, cannot be read" in run.out
    assert ".cursor/rules/open.mdc: skipped, cannot be read (its front matter has no closing" in (
        run.out
    )
    assert _article(project, "src/web")[0]["capsule"]


def test_no_rule_files_is_one_sentence(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", [])
    run = canon("import", cwd=project)
    assert run.code == 0 and run.out.startswith("No rule files found")


# ---------------------------------------------------------------- export

HOST_FILES = {
    "claude-rules": ".claude/rules/canon-src-api.md",
    "cursor": ".cursor/rules/canon-src-api.mdc",
    "copilot": ".github/instructions/canon-src-api.instructions.md",
    "kiro": ".kiro/steering/canon-src-api.md",
}


def _front(path: Path) -> tuple[dict[str, object], str]:
    _, front, rest = path.read_text(encoding="utf-8").split("---\n", 2)
    return yaml.safe_load(front), rest


def _globs(host: str, meta: dict[str, object]) -> list[str]:
    """The globs as the host reads them (its documented key and shape)."""
    if host == "claude-rules":
        assert isinstance(meta["paths"], list)
        return list(meta["paths"])
    if host == "cursor":
        assert meta["alwaysApply"] is False
        return str(meta["globs"]).split(",")
    if host == "copilot":
        return str(meta["applyTo"]).split(",")
    assert meta["inclusion"] == "fileMatch"
    pattern = meta["fileMatchPattern"]
    return list(pattern) if isinstance(pattern, list) else [str(pattern)]


@pytest.mark.parametrize("host", sorted(HOST_FILES))
def test_round_trip_import_export_check(tmp_path: Path, host: str) -> None:
    project = make_project(tmp_path / "p")
    assert canon("import", "--write", cwd=project).code == 0
    write_article(project, "src/feed", "---\ncapsule: The feed.\n---\nBody.\n")
    (project / "src" / "feed.py").write_text("x\n", encoding="utf-8")
    (project / "src" / "feed").mkdir()
    (project / "src" / "feed" / "parse.py").write_text("x\n", encoding="utf-8")

    run = canon("export", host, cwd=project)
    assert run.code == 0, run.err
    exported = project / HOST_FILES[host]
    meta, rest = _front(exported)
    assert _globs(host, meta) == ["src/api/**"]
    assert "Every handler must validate its input with zod." in rest
    assert 'canon export: article "src/api"' in rest
    feed = exported.with_name(exported.name.replace("src-api", "src-feed"))
    assert sorted(_globs(host, _front(feed)[0])) == ["src/feed.py", "src/feed/**"]
    assert list(exported.parent.glob("canon-rules-*"))  # rule articles go back to the host

    assert canon("export", host, "--check", cwd=project).code == 0
    again = canon("import", "--write", cwd=project)  # generated files are not imported back
    assert "0 articles created, 0 merged" in again.out and "left out" in again.out

    canon("write", "src/api", "--capsule", "Handlers return JSON errors.", cwd=project)
    stale = canon("export", host, "--check", cwd=project)
    assert stale.code == 1 and f"{HOST_FILES[host]} (article src/api): out of date" in stale.out
    check = canon("check", cwd=project)
    assert f"{HOST_FILES[host]}:1:1: warning:" in check.out and "[export-outdated]" in check.out
    assert canon("export", host, cwd=project).code == 0
    assert "Handlers return JSON errors." in exported.read_text(encoding="utf-8")
    assert canon("export", host, "--check", cwd=project).code == 0
    warned = {w for w in canon("check", cwd=project).out.split() if w.startswith("[export-")}
    # Claude Code rules have no on-request form: the Kiro manual rule is named, not exported
    assert warned == ({"[export-inexpressible]"} if host == "claude-rules" else set())


def test_export_leaves_hand_edited_and_foreign_files_alone(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", ["claude-rules", "cursor"])
    assert canon("import", "--write", cwd=project).code == 0
    foreign = project / ".cursor" / "rules" / "canon-src-web.mdc"
    foreign.write_text("---\nglobs: src/web/**\n---\nMine.\n", encoding="utf-8")
    assert canon("export", "cursor", cwd=project).code == 1
    assert foreign.read_text(encoding="utf-8").endswith("Mine.\n")

    edited = project / ".cursor" / "rules" / "canon-src-api.mdc"
    edited.write_text(edited.read_text(encoding="utf-8") + "A hand edit.\n", encoding="utf-8")
    canon("write", "src/api", "--capsule", "Changed.", cwd=project)
    run = canon("export", "cursor", cwd=project)
    assert run.code == 1 and "edited by hand" in run.out
    assert edited.read_text(encoding="utf-8").endswith("A hand edit.\n")
    check = canon("check", cwd=project)
    assert "[export-edited]" in check.out and "[export-foreign]" in check.out
    assert check.code == 0  # warnings
    rows = json.loads(canon("check", "--format", "json", cwd=project).out)
    exported = [r for r in rows if r["code"].startswith("export-")]
    assert {r["code"] for r in exported} == {"export-edited", "export-foreign"}
    keys = {"address", "code", "end", "evidence", "file", "line", "message", "severity", "start"}
    assert all(set(r) == keys and r["severity"] == "warning" for r in exported)


def test_export_removes_a_file_whose_article_is_gone(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", ["cursor"])
    assert canon("import", "--write", cwd=project).code == 0
    assert canon("export", "kiro", cwd=project).code == 0
    generated = project / ".kiro" / "steering" / "canon-src-web.md"
    assert generated.exists()
    (project / ".canon" / "articles" / "src" / "web.md").unlink()
    assert canon("export", "kiro", "--check", cwd=project).code == 1
    run = canon("export", "kiro", cwd=project)
    assert run.code == 0 and f"{generated.relative_to(project)}: removed." in run.out
    assert not generated.exists()


def test_import_reads_unquoted_globs_as_the_hosts_do(tmp_path: Path) -> None:
    """Cursor and Claude Code accept `globs: **/*.ts` and `- **/*.go` unquoted, which YAML
    reads as an alias (claude-code#17204 shows both in use)."""
    project = make_project(tmp_path / "p", [])
    (project / ".cursor" / "rules").mkdir(parents=True)
    (project / ".cursor" / "rules" / "ts.mdc").write_text(
        "---\nglobs: **/*.ts, src/api/*.tsx\n---\nNo default exports.\n", "utf-8"
    )
    (project / ".claude" / "rules").mkdir(parents=True)
    (project / ".claude" / "rules" / "go.md").write_text(
        "---\npaths:\n  - **/*.go\n---\nRun gofmt.\n", "utf-8"
    )
    run = canon("import", "--write", cwd=project)
    assert run.code == 0, run.err
    assert ".cursor/rules/ts.mdc -> rules/ts: create (scope: rule)" in run.out
    assert ".claude/rules/go.md -> rules/go: create (scope: rule)" in run.out


def test_a_second_file_with_the_same_text_is_not_imported_twice(tmp_path: Path) -> None:
    """CLAUDE.md is often a link to AGENTS.md (or a copy): one rule article, not two."""
    project = make_project(tmp_path / "p", ["root-agents-md"])
    (project / "CLAUDE.md").symlink_to("AGENTS.md")
    run = canon("import", "--write", cwd=project)
    assert run.code == 0, run.err
    assert "CLAUDE.md: skipped, it holds the same text as AGENTS.md." in run.out
    assert not (project / ".canon/articles/rules/claude.md").exists()
    assert len(_journal(project)) == 1


def test_a_write_the_schema_refuses_is_said_and_not_journaled(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", ["cursor"])
    (project / ".canon" / "articles").mkdir(parents=True)
    schema = '{"schema_version": 1, "relations": {"refs": {"required": true, "hint": "Link it."}}}'
    (project / ".canon" / "schema.json").write_text(schema, encoding="utf-8")
    run = canon("import", "--write", cwd=project)
    assert run.code == 1
    assert ".cursor/rules/web.mdc -> src/web: refused;" in run.out and "Link it." in run.out
    assert not (project / ".canon/articles/src/web.md").exists()
    assert _journal(project) == {}


def test_export_escapes_glob_characters_in_names(tmp_path: Path) -> None:
    """A Next.js route folder `app/[slug]` is a name, not a character class."""
    project = make_project(tmp_path / "p", [])
    (project / "app" / "[slug]").mkdir(parents=True)
    (project / "app" / "[slug]" / "page.tsx").write_text("x\n", encoding="utf-8")
    write_article(project, "app/[slug]", "---\ncapsule: One post.\n---\nBody.\n")
    assert canon("export", "copilot", cwd=project).code == 0
    meta, _ = _front(project / ".github/instructions/canon-app-[slug].instructions.md")
    assert meta["applyTo"] == "app/\\[slug\\]/**"
    # and the same file read back by import lands at the same address
    (project / ".github/instructions/posts.instructions.md").write_text(
        '---\napplyTo: "app/\\\\[slug\\\\]/**"\n---\nPosts are MDX.\n', encoding="utf-8"
    )
    assert "posts.instructions.md -> app/[slug]: add its text" in canon("import", cwd=project).out


def test_export_without_a_store_is_one_sentence_and_writes_nothing(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", [])
    run = canon("export", "cursor", cwd=project)
    assert run.code == 0 and run.out.startswith("No canon store at")
    assert not (project / ".cursor").exists() and not (project / ".canon").exists()


def test_export_never_writes_through_a_link_leading_outside(tmp_path: Path) -> None:
    """A cloned repository's `.cursor` may be a symbolic link to anywhere."""
    project = make_project(tmp_path / "p", ["cursor"])
    assert canon("import", "--write", cwd=project).code == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".cursor" / "rules" / "web.mdc").unlink()
    (project / ".cursor" / "rules").rmdir()
    (project / ".cursor").rmdir()
    (project / ".cursor").symlink_to(elsewhere)
    run = canon("export", "cursor", cwd=project)
    assert run.code == 1 and "Traceback" not in run.err + run.out
    assert ".cursor/rules/canon-src-web.mdc: not written" in run.out
    assert list(elsewhere.rglob("*")) == []


def test_export_check_without_host_checks_every_host_in_use(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", ["cursor"])
    assert canon("import", "--write", cwd=project).code == 0
    nothing = canon("export", "--check", cwd=project)
    assert nothing.code == 0 and "no generated rule files" in nothing.out
    assert canon("export", cwd=project).code == 2  # writing needs a host
    for host in ("kiro", "copilot"):
        assert canon("export", host, cwd=project).code == 0
    assert canon("export", "--check", cwd=project).code == 0
    canon("write", "src/web", "--capsule", "Changed.", cwd=project)
    run = canon("export", "--check", cwd=project)
    assert run.code == 1
    assert "canon export kiro: run it" in run.out and "canon export copilot: run it" in run.out
    assert "cursor" not in run.out  # never exported for Cursor: not watched


def test_export_with_a_store_root_outside_the_project(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", [])
    root = str(tmp_path / "store")
    canon("write", "src/web", "--capsule", "Web.", "--root", root, cwd=project)
    run = canon("export", "cursor", "--root", root, cwd=project)
    assert run.code == 0, run.err
    text = (project / ".cursor/rules/canon-src-web.mdc").read_text(encoding="utf-8")
    assert "description: Web." in text and 'article "src/web"' in text


def test_two_sources_merge_into_one_existing_article_keeping_all(tmp_path: Path) -> None:
    """Issue 43 row 6: two sources for one directory merged into an article that already
    exists, in one run: the article's own text and both sections are kept (each merge
    builds on the body planned so far), and a second import says both are already in."""
    project = tmp_path / "p"
    (project / "src" / "db").mkdir(parents=True)
    (project / "src" / "db" / "schema.py").write_text("TABLES = []\n", encoding="utf-8")
    (project / "src" / "db" / "AGENTS.md").write_text("Migrations only, never by hand.\n")
    (project / "src" / "db" / "CLAUDE.md").write_text("Never drop a table in a migration.\n")
    write_article(project, "src/db", "---\ncapsule: The database layer.\n---\nOwn notes stay.\n")
    run = canon("import", "--write", cwd=project)
    assert run.code == 0, run.err
    meta, body = _article(project, "src/db")
    assert meta["capsule"] == "The database layer."
    assert body.startswith("Own notes stay.")
    for source, text in (("AGENTS.md", "Migrations only"), ("CLAUDE.md", "Never drop a table")):
        assert f"## From src/db/{source}" in body and text in body, body
    again = canon("import", "--write", cwd=project)
    assert "0 articles created, 0 merged" in again.out, again.out
    assert _article(project, "src/db")[1] == body


def test_export_onto_a_fifo_or_a_link_leading_out_replaces_nothing(tmp_path: Path) -> None:
    """Issue 43 row 7 (SPEC §12): where the export would write stands a FIFO, or a symbolic
    link to a file outside the project: neither is taken for a missing file; both are left
    as they are (the FIFO never opened, the outside file unchanged) and named."""
    import os
    import stat

    outside = tmp_path / "outside.mdc"
    outside.write_text("not the project's\n", encoding="utf-8")
    for kind in ("fifo", "link"):
        project = make_project(tmp_path / kind, ["cursor"])
        assert canon("import", "--write", cwd=project).code == 0
        target = project / ".cursor" / "rules" / "canon-src-web.mdc"
        target.parent.mkdir(parents=True, exist_ok=True)
        if kind == "fifo":
            os.mkfifo(target)
        else:
            target.symlink_to(outside)
        run = canon("export", "cursor", cwd=project)
        assert "Traceback" not in run.err + run.out
        named = ".cursor/rules/canon-src-web.mdc (article src/web): not written by canon"
        assert run.code == 1 and named in run.out, run.out
        mode = os.lstat(target).st_mode
        assert stat.S_ISFIFO(mode) if kind == "fifo" else stat.S_ISLNK(mode), kind
        assert outside.read_text(encoding="utf-8") == "not the project's\n"
        check = canon("export", "cursor", "--check", cwd=project)
        assert "Traceback" not in check.err + check.out
