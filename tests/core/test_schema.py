"""SPEC §7 schema.json: every rule, on real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from canon_ls.core import tool
from canon_ls.core.checking import schema as sch
from canon_ls.core.storage.store import Store


def setup_schema(project: Path, data: object) -> None:
    (project / ".canon").mkdir(exist_ok=True)
    text = data if isinstance(data, str) else json.dumps(data)
    (project / ".canon/schema.json").write_text(text)


def w(store: Store, path: str, **kw: object) -> tool.ToolResult:
    return tool.run(store, {"action": "write", "path": path, **kw})


def snapshot(project: Path) -> dict[str, bytes]:
    root = project / ".canon"
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_spec_7_required_refuses_and_touches_nothing(store: Store, project: Path) -> None:
    """SPEC §7: a violated required rule refuses (message includes the hint), no file changes."""
    setup_schema(
        project, {"article": {"body": {"required": True, "hint": "Explain the invariants."}}}
    )
    before = snapshot(project)
    r = w(store, "src/a.ts", capsule="Cap only.")
    assert r.code == 1
    assert "Explain the invariants." in r.text and "src/a" in r.text
    assert "\n" not in r.text
    assert snapshot(project) == before
    assert w(store, "src/a.ts", capsule="Cap.", body="Body.").code == 0


def test_spec_7_capsule_only_update_not_held_hostage(store: Store, project: Path) -> None:
    """SPEC §7: judged on what the write changes (plus everything on create)."""
    setup_schema(project, {"article": {"body": {"required": True}}})
    art_dir = project / ".canon/articles"
    art_dir.mkdir()
    (art_dir / "legacy.md").write_text("---\ncapsule: Old.\n---\n")  # legacy: no body
    r = w(store, "legacy", capsule="New capsule.")
    assert r.code == 0, r.text
    # but creating without a body is refused
    assert w(store, "fresh.ts", capsule="Fresh.").code == 1


def test_spec_7_title_rule(store: Store, project: Path) -> None:
    """SPEC §7: fields include title (the first '# ' heading)."""
    setup_schema(project, {"article": {"title": {"required": True, "hint": "Start with # x."}}})
    r = w(store, "a.ts", capsule="C.", body="no heading")
    assert r.code == 1 and "Start with # x." in r.text
    assert w(store, "a.ts", capsule="C.", body="# A\ntext").code == 0


def test_spec_7_title_rule_on_a_body_rewrite_without_heading(store: Store, project: Path) -> None:
    """SPEC §7: a body rewrite rewrites the title; a required title is judged even when the
    old body had no heading either (the title "did not change" from '' to '')."""
    w(store, "a.ts", capsule="C.", body="no heading yet")  # before the rule existed
    setup_schema(project, {"article": {"title": {"required": True, "hint": "Start with # x."}}})
    before = snapshot(project)
    r = w(store, "a.ts", body="still no heading")
    assert r.code == 1 and "Start with # x." in r.text, r.text
    assert snapshot(project) == before
    assert w(store, "a.ts", capsule="Capsule only.").code == 0  # not held hostage
    assert w(store, "a.ts", body="# A\n\nnow with a heading").code == 0


def test_spec_7_schema_written_only_when_the_store_is_created(store: Store, project: Path) -> None:
    """SPEC §7: schema.json is written when the store is created; once deleted (the way to
    turn schema checks off) no write, journal entry or fresh process writes it back."""
    schema = project / ".canon/schema.json"
    assert w(store, "a.ts", capsule="A.").code == 0
    assert json.loads(schema.read_text()) == sch.DEFAULT
    schema.unlink()
    assert w(store, "b.ts", capsule="B.", body="# b\n").code == 0
    assert w(Store(project), "a.ts", capsule="A again.").code == 0
    r = tool.run(Store(project), {"action": "journal", "body": "Turned schema checks off."})
    assert r.code == 0
    Store(project).set_reviewed("a")
    assert w(Store(project), "deep/new/c.ts", capsule="C, in a new directory.").code == 0
    assert Store(project).create() == []  # `canon init` on the existing store
    assert not schema.exists()


def test_spec_7_schema_written_when_a_journal_entry_creates_the_store(project: Path) -> None:
    """SPEC §7: the first journal entry creates the store, schema.json included."""
    r = tool.run(Store(project), {"action": "journal", "body": "First entry."})
    assert r.code == 0
    assert json.loads((project / ".canon/schema.json").read_text()) == sch.DEFAULT


def test_spec_7_min_max_warn_and_land(store: Store, project: Path) -> None:
    """SPEC §7: min/max violations warn; the write lands and the message names the fix."""
    setup_schema(
        project,
        {"article": {"capsule": {"min_chars": 20, "max_chars": 30, "hint": "Be dense."}}},
    )
    r = w(store, "a.ts", capsule="short")
    assert r.code == 0 and "minimum of 20" in r.text and "Be dense." in r.text
    assert store.article("a") is not None
    r = w(store, "a.ts", capsule="x" * 40)
    assert r.code == 0 and "maximum of 30" in r.text and "shorten" in r.text


def test_spec_7_schema_bound_replaces_builtin_line(store: Store, project: Path) -> None:
    """SPEC §7: a schema-declared bound replaces the built-in advisory line (no duplicates)."""
    setup_schema(project, {"article": {"capsule": {"max_chars": 1500}}})
    r = w(store, "a.ts", capsule="c" * 1200)
    assert "1,000" not in r.text and "1,500" not in r.text  # under schema bound, no builtin
    r = w(store, "a.ts", capsule="c" * 1600)
    assert r.text.count("The capsule is") == 1 and "1,500" in r.text


def test_spec_7_malformed_fails_open_and_loud(store: Store, project: Path) -> None:
    """SPEC §7: malformed schema.json: rules stop being enforced and every write says so."""
    for bad in ("{not json", "[1, 2]", '{"article": [1]}'):
        setup_schema(project, bad)
        r = w(store, "a.ts", capsule=f"Cap {len(bad)}.")
        assert r.code == 0 and "schema.json is malformed" in r.text, bad
        r = w(store, "a.ts", capsule=f"Cap {len(bad)}.")  # unchanged write says so too
        assert "schema.json is malformed" in r.text
        assert "schema.json is malformed" in tool.run(store, {"action": "read", "path": "a"}).text


def test_spec_7_reads_report_violations(store: Store, project: Path) -> None:
    """SPEC §7: reads never refuse; they report existing violations."""
    art_dir = project / ".canon/articles"
    art_dir.mkdir(parents=True)
    (art_dir / "a.md").write_text("---\ncapsule: x\n---\nbody\n")
    setup_schema(project, {"article": {"capsule": {"min_chars": 10}, "title": {"required": True}}})
    r = tool.run(store, {"action": "read", "path": "a"})
    assert r.code == 0
    assert "schema: The capsule is 1 characters" in r.text
    assert "schema: The schema requires a title" in r.text


def test_spec_7_refs_required_and_min_count(store: Store, project: Path) -> None:
    """SPEC §7 relations.refs: required refuses a body referencing nothing; min_count warns;
    code fences and case-folded duplicates never count; judged when the reference set changes."""
    setup_schema(
        project,
        {"relations": {"refs": {"required": True, "min_count": 2, "hint": "Link the parent."}}},
    )
    r = w(store, "a.ts", capsule="A.", body="```\n[[x/y]]\n```\n`[[z]]`\n")
    assert r.code == 1 and "Link the parent." in r.text
    r = w(store, "a.ts", capsule="A.", body="[[Lib/X]] and [[lib/x]]\n")
    assert r.code == 0 and "references 1 article" in r.text
    r = w(store, "a.ts", capsule="Capsule only change.")  # refs unchanged: no relations line
    assert r.code == 0 and "references" not in r.text
    r = w(store, "a.ts", body="[[lib/x]] [[lib/y]]\n")
    assert r.code == 0 and "references" not in r.text
    assert sch.references("[[A]] [[a]]\n```\n[[b]]\n```\n") == {"a"}


def test_spec_7_graph_rules_parsed(tmp_path: Path) -> None:
    """SPEC §7: orphan.warn and children.listed are parsed for check.check to enforce."""
    s = sch.parse('{"relations": {"orphan": {"warn": true}, "children": {"listed": true}}}')
    assert not s.error and s.relations.orphan_warn and s.relations.children_listed
    wrong = sch.parse('{"relations": {"orphan": {"warn": 1}}}')  # that rule alone is ignored
    assert not wrong.error and not wrong.relations.orphan_warn and wrong.notes
    missing = sch.load(tmp_path / "nope.json")
    assert not missing.present and missing.rules == {} and missing.relations == sch.Relations()


# pi-canon 0.3.0's default schema.json: its keys, values and layout (one rule per line); the
# prose of `about` and the hints stands in as "…" (whatever it says, no tool reads it).
PI_CANON_DEFAULT = """{
  "schema_version": 1,
  "about": "…",
  "article": {
    "capsule": { "required": false, "max_chars": 1000, "hint": "…" },
    "title": { "required": false, "hint": "…" },
    "body": { "max_chars": 20000, "hint": "…" }
  },
  "relations": {
    "refs": { "required": false, "hint": "…" },
    "orphan": { "warn": false, "hint": "…" },
    "children": { "listed": false, "hint": "…" }
  }
}
"""


def _shape(data: object) -> object:
    """Keys and values with the prose (`about`, every `hint`) left out."""
    if isinstance(data, dict):
        return {k: _shape(v) for k, v in data.items() if k not in ("about", "hint")}
    return data


def test_spec_7_default_has_pi_canons_keys_and_values(store: Store, project: Path) -> None:
    """SPEC §7: the default file canon writes has the same keys and values as pi-canon's,
    prose aside, and every prose slot is filled."""
    w(store, "a.ts", capsule="A.")
    written = json.loads((project / ".canon/schema.json").read_text("utf-8"))
    theirs = json.loads(PI_CANON_DEFAULT)
    assert _shape(written) == _shape(theirs)
    assert json.dumps(written, sort_keys=True).count('"hint"') == 6 and written["about"]


@pytest.mark.parametrize("origin", ["canon", "pi-canon"])
def test_spec_7_either_default_file_reads_and_warns_alike(
    store: Store, project: Path, origin: str
) -> None:
    """SPEC §7: whichever tool created the store, a write hears the same size advice: the
    built-in 8,000 warning, the schema's bound past 20,000 (never both), the capsule bound."""
    if origin == "pi-canon":
        setup_schema(project, PI_CANON_DEFAULT)
    else:
        w(store, "seed.ts", capsule="Seed.")
    parsed = sch.load(project / ".canon/schema.json")
    assert not parsed.error
    assert (parsed.rules["capsule"].max_chars, parsed.rules["body"].max_chars) == (1000, 20000)
    assert not any(r.required for r in parsed.rules.values()) and not parsed.relations.refs_required
    said = [w(store, "b.ts", capsule="B.", body="x" * 9000).text]
    said.append(w(store, "b.ts", body="y" * 25000).text)
    said.append(w(store, "c.ts", capsule="c" * 1200).text)
    assert "(over 8,000)" in said[0] and "schema" not in said[0]
    assert said[1].count("characters") == 1 and "schema's maximum of 20,000" in said[1]
    assert said[2].count("characters") == 1 and "schema's maximum of 1,000" in said[2]


def test_spec_7_check_reports_a_body_size_once(store: Store, project: Path) -> None:
    """SPEC §7: `canon check` and the editor name a body past the schema's bound once."""
    from canon_ls.core.checking.check import check

    w(store, "a.ts", capsule="A.", body="z" * 25000)
    w(store, "b.ts", capsule="B.", body="z" * 9000)
    found = [f for f in check(Store(project), staleness=False) if "characters" in f.message]
    assert [(f.address, f.code) for f in found] == [("a", "schema"), ("b", "body-long")]


@pytest.mark.parametrize("field", ["capsule", "body"])
def test_spec_7_required_on_create(store: Store, project: Path, field: str) -> None:
    setup_schema(project, {"article": {field: {"required": True}}})
    other = "body" if field == "capsule" else "capsule"
    r = w(store, "a.ts", **{other: "Something."})
    assert r.code == 1
    assert not (project / ".canon/articles").exists()


def test_spec_7_one_wrong_key_is_ignored_alone_and_named() -> None:
    """SPEC §7, issue 36 items 2 and 7: as pi-canon reads the file, an unknown key or a value
    of the wrong type drops only itself (named in `notes`), never the other rules; a whole
    number written as 1000.0 is a whole number (JSON has one number type)."""
    s = sch.parse(
        '{"article": {"capsule": {"required": true, "maxchars": 9}, "body": {"max_chars": 1000.0,'
        ' "min_chars": "9"}, "summary": {}}, "relations": {"backlinks": {}, "refs": 3}}'
    )
    assert not s.error and s.rules["capsule"].required and s.rules["body"].max_chars == 1000
    assert s.rules["body"].min_chars is None
    named = " ".join(s.notes)
    for key in ("article.capsule.maxchars", "article.body.min_chars", "article.summary"):
        assert f'"{key}"' in named, named
    assert '"relations.backlinks"' in named and '"relations.refs" must be an object' in named
