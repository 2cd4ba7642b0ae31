"""SPEC §6 write and §6.1 write-time lints, on real files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from canon_ls.core import tool
from canon_ls.core.storage.store import Store
from tests.conftest import TODAY, make_files


def w(store: Store, path: str, **kw: object) -> tool.ToolResult:
    return tool.run(store, {"action": "write", "path": path, **kw})


def art_file(project: Path, address: str) -> Path:
    return project / ".canon" / "articles" / (address + ".md")


def test_spec_6_write_absent_or_empty_means_unchanged(store: Store, project: Path) -> None:
    """SPEC §6 write: an absent or empty capsule/body means unchanged, never erase."""
    w(store, "src/a.ts", capsule="Cap.", body="Body.")
    w(store, "src/a.ts", capsule="", body="New body.")
    a = store.article("src/a")
    assert a is not None and a.capsule == "Cap." and a.body == "New body.\n"
    w(store, "src/a.ts", capsule="New cap.")
    a = store.article("src/a")
    assert a is not None and a.capsule == "New cap." and a.body == "New body.\n"


def test_spec_6_noop_write_touches_nothing(store: Store, project: Path, monkeypatch) -> None:
    """SPEC §6 write: same capsule, body and scope -> already up to date; bytes+mtime stay."""
    w(store, "src/a.ts", capsule="Cap.", body="Body.", scope="rule")
    f = art_file(project, "src/a")
    os.utime(f, ns=(1_000_000_000, 1_000_000_000))
    before = f.read_bytes()
    monkeypatch.setenv("CANON_TODAY", "2030-01-01")
    for kw in (
        {"capsule": "Cap."},
        {"body": "Body."},
        {"body": "Body.\n"},
        {"capsule": "Cap.", "body": "Body.", "scope": "rule"},
        {"scope": "rule"},
    ):
        r = w(store, "src/a.ts", **kw)
        assert r.code == 0 and "already up to date" in r.text, (kw, r.text)
    assert f.read_bytes() == before
    assert f.stat().st_mtime_ns == 1_000_000_000


def test_spec_6_updated_is_today_on_change(store: Store, project: Path, monkeypatch) -> None:
    """SPEC §5: updated is the date of the last write that changed something."""
    w(store, "a.ts", capsule="One.")
    assert store.article("a").updated == TODAY  # type: ignore[union-attr]
    monkeypatch.setenv("CANON_TODAY", "2030-02-03")
    w(store, "a.ts", capsule="Two.")
    assert store.article("a").updated == "2030-02-03"  # type: ignore[union-attr]


def test_spec_6_scope_rule_asset_and_bad(store: Store, project: Path) -> None:
    """SPEC §6 write scope: rule declares, asset withdraws, anything else is an error."""
    w(store, "rules/style.md", capsule="Style rule.", scope="rule")
    assert "scope: rule\n" in art_file(project, "rules/style").read_text()
    w(store, "rules/style.md", scope="asset")
    assert "scope" not in art_file(project, "rules/style").read_text()
    before = art_file(project, "rules/style").read_bytes()
    for bad in ("Rule", "global", 3, ["rule"]):
        r = w(store, "rules/style.md", scope=bad)
        assert r.code == 2 and "scope" in r.text and "\n" not in r.text
    assert art_file(project, "rules/style").read_bytes() == before


def test_spec_7_schema_json_written_once_never_overwritten(store: Store, project: Path) -> None:
    """SPEC §7: schema.json is written with defaults on first persist, never overwritten."""
    w(store, "a.ts", capsule="A.")
    schema = project / ".canon" / "schema.json"
    import json

    from canon_ls.core.checking import schema as sch

    assert json.loads(schema.read_text()) == sch.DEFAULT
    schema.write_text('{"schema_version": 1, "article": {}}\n')
    w(store, "b.ts", capsule="B.")
    tool.run(store, {"action": "journal", "body": "x"})
    assert schema.read_text() == '{"schema_version": 1, "article": {}}\n'


def test_spec_6_atomic_write_leaves_no_temp_files(store: Store, project: Path) -> None:
    """SPEC §6 write: temp file in the same directory, renamed into place."""
    for i in range(5):
        w(store, "src/a.ts", capsule=f"v{i}")
    names = os.listdir(project / ".canon/articles/src")
    assert names == ["a.md"]


def test_spec_6_write_nothing_on_new_article_is_bad_input(store: Store, project: Path) -> None:
    r = w(store, "src/a.ts")
    assert r.code == 2 and "capsule" in r.text
    assert not (project / ".canon").exists()


def test_spec_6_capsule_newlines_collapse(store: Store, project: Path) -> None:
    """SPEC §5: newlines in a capsule collapse to single spaces."""
    w(store, "a.ts", capsule="line one\nline two\r\n\r\nthree")
    assert store.article("a").capsule == "line one line two three"  # type: ignore[union-attr]


# --- §6.1 lints -------------------------------------------------------------------------------


def test_spec_6_1_item_1_body_size(store: Store, project: Path) -> None:
    """SPEC §6.1 item 1: >8,000 warn; >20,000 suggest splitting (no schema bound here)."""
    (project / ".canon").mkdir()
    (project / ".canon/schema.json").write_text('{"schema_version": 1}')
    r = w(store, "a.ts", capsule="A.", body="x" * 8001)
    assert "8,000" in r.text
    r = w(store, "a.ts", body="y" * 20001)
    assert "split" in r.text
    r = w(store, "b.ts", capsule="B.", body="x" * 100)
    assert "characters" not in r.text


def test_spec_6_1_item_1_default_schema_replaces_line(store: Store) -> None:
    """SPEC §7: the built-in 8,000 line stays under the default schema; past 20,000 the
    schema's own bound speaks instead of the built-in split line (no duplicates)."""
    r = w(store, "a.ts", capsule="A.", body="x" * 9000)
    assert r.code == 0
    assert r.text.count("The body is") == 1, r.text
    assert "(over 8,000)" in r.text and "schema" not in r.text
    r = w(store, "a.ts", body="y" * 25000)
    assert r.text.count("The body is") == 1, r.text
    assert "schema's maximum of 20,000; split it into child articles" in r.text


def test_spec_6_1_item_2_capsule_hints(store: Store, project: Path) -> None:
    """SPEC §6.1 item 2: missing capsule, over 1,000, changelog (words or ISO date)."""
    (project / ".canon").mkdir()
    (project / ".canon/schema.json").write_text('{"schema_version": 1}')
    assert "no capsule" in w(store, "a.ts", body="Body.").text
    assert "1,000" in w(store, "b.ts", capsule="c" * 1001).text
    for cap in (
        "Updated the parser",
        "Fixed: bug",
        "Now uses X",
        "Added retries",
        "Changed it",
        "Parser as of 2026-01-02",
    ):
        assert "changelog" in w(store, "c.ts", capsule=cap).text, cap
    assert "changelog" not in w(store, "d.ts", capsule="Parses updates fast.").text


def test_spec_6_1_item_3_journal_like_addresses(store: Store) -> None:
    """SPEC §6.1 item 3: log-like segments or ISO dates redirect to the journal."""
    for path in (
        "notes/log.md",
        "logs/x.md",
        "a/journal/b.md",
        "session/x",
        "standup.md",
        "team/meeting/notes.md",
        "notes/2026-01-02-sync.md",
    ):
        assert "record events in the journal" in w(store, path, capsule="Cap.").text, path
    assert "record events in the journal" not in w(store, "src/logger.ts", capsule="Cap.").text


def test_spec_6_1_item_4_broken_wikilinks(store: Store) -> None:
    """SPEC §6.1 item 4: one line per broken [[target]]; code is ignored; label/heading forms."""
    w(store, "src/ok.ts", capsule="OK.")
    body = (
        "See [[src/ok]], [[src/ok|label]], [[src/ok#Heading]], [[missing/one]],\n"
        "[[missing/two|label]] and [[missing/three#h]].\n"
        "`[[in/inline]]`\n```\n[[in/fence]]\n```\n"
    )
    r = w(store, "src/a.ts", capsule="A.", body=body)
    broken = [line for line in r.text.splitlines() if line.startswith("Broken wikilink")]
    assert len(broken) == 3
    assert all(("missing/" in line) for line in broken)


def test_spec_6_1_item_5_orphan(store: Store, project: Path) -> None:
    """SPEC §6.1 item 5: nested address, parent dir exists, nothing maps -> the question."""
    make_files(project, "src/real.ts", "src/dir/")
    # a store none of whose addresses ever mapped to a file: silent
    r = w(store, "src/ghost.ts", capsule="Ghost.")
    assert "Orphan" not in r.text
    w(store, "src/real.ts", capsule="Real.")
    r = w(store, "src/ghost2.ts", capsule="Ghost.")
    assert "Orphan" in r.text and "scope" in r.text and "merge" in r.text
    assert "Orphan" not in w(store, "top.ts", capsule="Top level.").text
    assert "Orphan" not in w(store, "src/ghost3.ts", capsule="R.", scope="rule").text
    assert "Orphan" not in w(store, "src/dir", capsule="Directory asset.").text
    assert "Orphan" not in w(store, "nodir/x.ts", capsule="Parent missing.").text


def test_spec_6_read_of_an_orphan_says_so_in_one_line(store: Store, project: Path) -> None:
    """SPEC §6 read: reading an orphan article says so in one line (the §6.1 orphan question);
    an article whose asset exists, a rule, and an ancestor answering for a file say nothing."""
    make_files(project, "src/real.ts", "src/dir/x.ts")
    w(store, "src/real.ts", capsule="Real.")
    w(store, "src/ghost.ts", capsule="Ghost.")
    w(store, "src/rule.ts", capsule="A rule.", scope="rule")
    text = tool.run(Store(project), {"action": "read", "path": "src/ghost.ts"}).text
    orphan = [line for line in text.splitlines() if "Orphan" in line]
    assert len(orphan) == 1 and "src/ghost" in orphan[0], text
    for path in ("src/real.ts", "src/rule.ts"):
        assert "Orphan" not in tool.run(Store(project), {"action": "read", "path": path}).text


def test_spec_6_1_item_6_body_growth(store: Store) -> None:
    """SPEC §6.1 item 6: growth reported on rewrite; creation and capsule-only are not growth.
    Bytes are counted without trailing blanks, as pi-canon counts them (the same numbers from
    either tool; trailing newlines alone are not growth)."""
    r = w(store, "a.ts", capsule="A.", body="short")
    assert "grew" not in r.text
    assert "grew" not in w(store, "a.ts", body="short\n\n\n").text
    r = w(store, "a.ts", body="a longer body\n")
    assert "Body grew 5 -> 13 bytes." in r.text and "journal" in r.text
    assert "grew" not in w(store, "a.ts", capsule="B.").text
    assert "grew" not in w(store, "a.ts", body="tiny").text


def test_spec_6_1_item_7_dropped_constraints(store: Store) -> None:
    """SPEC §6.1 item 7: at most two dropped constraint lines, each cut to 160 characters."""
    old = (
        "Keys MUST be sorted.\nNever log secrets.\nAlways retry.\n"
        "Plain line.\nDon't block.\n" + "You must " + "z" * 300 + "\n"
    )
    w(store, "a.ts", capsule="A.", body=old)
    r = w(store, "a.ts", body="Keys MUST be sorted.\nPlain line.\n")
    dropped = [line for line in r.text.splitlines() if line.startswith("Dropped constraint")]
    assert len(dropped) == 2
    assert '"Never log secrets."' in dropped[0] and '"Always retry."' in dropped[1]
    r = w(store, "b.ts", capsule="B.", body="Musty smell. Mustang. Requirements.\n")
    r = w(store, "b.ts", body="Other.\n")
    assert "Dropped" not in r.text  # whole words only
    w(store, "c.ts", capsule="C.", body="x " * 10 + "\nYou must " + "z" * 300 + "\n")
    r = w(store, "c.ts", body="gone\n")
    quoted = r.text.split('"')[1]
    assert len(quoted) == 160


def test_spec_6_unknown_path_types(store: Store) -> None:
    for bad in (
        {"path": 3},
        {"path": None},
        {"path": "a", "capsule": 1},
        {"path": "a", "body": []},
    ):
        r = tool.run(store, {"action": "write", **bad})
        assert r.code == 2 and "\n" not in r.text


@pytest.mark.parametrize("path", ["", ".", "/", "./"])
def test_spec_3_root_names_no_article(store: Store, path: str) -> None:
    r = w(store, path, capsule="x")
    assert r.code == 2


_TEXT = st.sampled_from(["", "  ", "Alpha.", "yes", "a: b", "Line\nbreak", "# T\nbody", "x" * 50])
_OP = st.tuples(_TEXT | st.none(), _TEXT | st.none(), st.sampled_from([None, "", "rule", "asset"]))


@settings(max_examples=60, deadline=None)
@given(st.lists(_OP, min_size=1, max_size=6))
def test_spec_6_write_sequences_follow_the_model(ops: list) -> None:
    """SPEC §6 write: any sequence of writes behaves like the model (absent/empty = unchanged,
    no-op writes touch nothing, scope rule/asset)."""
    import tempfile

    from canon_ls.core.storage import article as art

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp))
        model: dict[str, str] | None = None
        file = Path(tmp) / ".canon/articles/a.md"
        for capsule, body, scope in ops:
            before = file.read_bytes() if file.exists() else None
            r = tool.run(
                store,
                {
                    "action": "write",
                    "path": "a.ts",
                    "capsule": capsule,
                    "body": body,
                    "scope": scope,
                },
            )
            cap_given = bool(capsule and capsule.strip())
            body_given = bool(body and body.strip())
            if model is None:
                if not cap_given and not body_given and scope != "rule":
                    assert r.code == 2 and not file.exists()
                    continue
                model = {"capsule": "", "body": "", "scope": "asset"}
            new = dict(model)
            if cap_given:
                new["capsule"] = art.one_line(capsule)
            if body_given and body.rstrip("\n") != model["body"].rstrip("\n"):
                new["body"] = body if body.endswith("\n") else body + "\n"
            if scope:
                new["scope"] = scope
            assert r.code == 0, r.text
            if new == model and before is not None:
                assert "already up to date" in r.text
                assert file.read_bytes() == before
            model = new
            a = art.parse(file.read_bytes(), "a")
            assert not a.problems
            assert (a.capsule, a.body, a.scope) == (model["capsule"], model["body"], model["scope"])
