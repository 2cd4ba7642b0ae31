"""SPEC §6.1 items 7 and 8: the write desk's advice that pi-canon 0.3.0 gives too, on the same
triggers and thresholds (its lint's facts): fold-up below 400 characters under an existing
parent article, the journal words and segments, the values a journal entry names that its
article lacks, and the scope question when the retrieval lane is on."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from canon_ls.core import tool
from canon_ls.core.storage.project import open_store
from canon_ls.core.storage.store import Store
from tests.conftest import make_files


def w(store: Store, path: str, **kw: object) -> str:
    r = tool.run(store, {"action": "write", "path": path, **kw})
    assert r.code == 0, r.text
    return r.text


def j(store: Store, body: str, *subject: str) -> str:
    r = tool.run(store, {"action": "journal", "body": body, "subject": list(subject)})
    assert r.code == 0, r.text
    return r.text


FOLD = "could it be a section of"


def test_spec_6_1_8_fold_up_short_body_under_an_existing_parent(store: Store) -> None:
    """A new article with a body of 1..399 characters whose parent article exists gets the
    fold-up hint; a later write, 400 characters, no parent article, a one-segment address or
    an empty body do not."""
    assert FOLD not in w(store, "src/a/b.py", capsule="B.", body="x" * 10)  # no parent article
    w(store, "src", capsule="Sources.", body="# src\n" + "s" * 500)
    said = w(store, "src/feed.py", capsule="Feed.", body="# src/feed\nOne GET.")
    assert f"{FOLD} src instead?" in said
    assert FOLD not in w(store, "src/feed.py", capsule="Feed, fetched hourly.")  # new only
    assert FOLD not in w(store, "src/big.py", capsule="Big.", body="y" * 399 + "\n")
    assert FOLD not in w(store, "src/cap.py", capsule="Only a capsule.")
    assert FOLD not in w(store, "top.py", capsule="Top.", body="tiny")


def test_spec_6_1_8_no_fold_up_for_a_file_s_own_article(store: Store, project: Path) -> None:
    """Issue 41 item 4: an article for a file that exists is what GETTING-STARTED asks for
    ("write articles for the files that need explaining"), however short: no fold-up hint."""
    make_files(project, "src/feed.py")
    w(store, "src", capsule="Sources.", body="# src\n" + "s" * 500)
    assert FOLD not in w(store, "src/feed.py", capsule="Feed.", body="# src/feed\nOne GET.")
    assert FOLD in w(store, "src/notes", capsule="Notes.", body="# src/notes\nShort.")


def test_spec_6_1_8_fold_up_gives_way_to_a_schema_body_minimum(store: Store, project: Path) -> None:
    (project / ".canon").mkdir()
    (project / ".canon/schema.json").write_text('{"article": {"body": {"min_chars": 5}}}')
    w(store, "src", capsule="Sources.", body="# src\n" + "s" * 500)
    assert FOLD not in w(store, "src/feed.py", capsule="Feed.", body="# src/feed\nOne GET.")


@pytest.mark.parametrize("segment", ["meetings", "sessions", "standups", "Meetings"])
def test_spec_6_1_8_plural_journal_segments(store: Store, segment: str) -> None:
    assert "looks like a log" in w(store, f"team/{segment}/weekly", capsule="Weekly notes.")


@pytest.mark.parametrize("verb", ["Implemented", "Migrated", "Verified"])
def test_spec_6_1_8_more_changelog_words(store: Store, verb: str) -> None:
    assert "changelog" in w(store, "a.ts", capsule=f"{verb} the retry path.")
    assert "changelog" not in w(store, "b.ts", capsule=f"Retries; {verb.lower()} by CI.")


def test_spec_6_1_8_journal_names_values_its_article_lacks(store: Store) -> None:
    """The journal action names the values (numbers, ids, code, quoted names, SNAKE_CASE,
    dotted names, spelled counts) its subject's article does not carry, bounded (42 is not
    in 142), longest first, six at most; an article that carries them all hears nothing."""
    w(store, "src/feed.py", capsule="Fetches the feed.", body="The cap is 142 rows.\n")
    said = j(
        store,
        "Raised the cap to 40,000 rows for nightly-dispatch; `MAX_ROWS` stays 42 for eleven "
        'weeks; see period.close and "blue team".',
        "src/feed.py",
    )
    head, advice = said.split("\n")
    assert head.startswith("Journaled journal/")
    for value in ("40,000", "nightly-dispatch", "MAX_ROWS", "eleven weeks", "period.close"):
        assert f"src/feed lacks {value}" in advice, advice
    assert advice.count(" lacks ") == 6 and "src/feed lacks 42;" not in advice
    w(store, "src/feed.py", body="Cap 40,000 rows (nightly-dispatch).\n")
    assert j(store, "Cap raised to 40,000 for nightly-dispatch.", "src/feed.py").count("\n") == 0
    assert j(store, "Moved 7,500 rows.", "src/none.py").count("\n") == 0  # no article there


SCOPE_ASSET = "the address of a file"
SCOPE_DECLARE = "write it again with scope rule"


def test_spec_6_1_8_scope_question_only_with_the_lane(store: Store, project: Path) -> None:
    make_files(project, "src/money.py")
    body = "Amounts must be rounded half-even.\n"
    assert SCOPE_ASSET not in w(store, "src/money.py", capsule="Money.", body=body)
    store = open_store(project, {"retrieval": "lexical"})
    w(store, "src/tax.py", capsule="Tax.", body="Tax tables.\n")
    assert SCOPE_ASSET not in w(store, "src/tax.py", capsule="Tax tables.")
    make_files(project, "src/tax.py")
    said = w(store, "src/tax.py", body="Tax must never be negative.\n")
    assert SCOPE_ASSET in said and "src/tax" in said
    # asked once: the next write of a rule-carrying body stays quiet
    assert SCOPE_ASSET not in w(store, "src/tax.py", body="Tax must never go below zero.\n")


def test_spec_6_1_8_scope_question_off_the_spine(store: Store, project: Path) -> None:
    store = open_store(project, {"retrieval": "lexical"})
    make_files(project, "src/app.py")
    said = w(store, "conventions/rounding", capsule="Rounding.", body="Always round once.\n")
    assert SCOPE_DECLARE in said and SCOPE_ASSET not in said
    said = w(store, "conventions/ids", capsule="Ids.", body="Ids must be UUIDs.\n", scope="rule")
    assert SCOPE_DECLARE not in said


def test_spec_6_1_8_scope_question_through_canon_toml(tmp_path: Path) -> None:
    """The lane as a project turns it on (canon.toml), through the real CLI."""
    from tests.agent.test_cli import canon

    (tmp_path / "canon.toml").write_text('retrieval = "lexical"\n', "utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    run = canon(
        "write",
        "house/rules",
        "--capsule",
        "House rules.",
        "--body",
        "Never push on Friday.",
        cwd=tmp_path,
    )
    assert run.code == 0 and SCOPE_DECLARE in run.out, run.out + run.err


def test_spec_6_1_7_rebulleted_or_moved_constraint_is_kept(store: Store) -> None:
    """A constraint line kept under another list marker, at another place or re-wrapped is
    not dropped; one really gone is still quoted back, without its marker."""
    old = "# a\n\n- Keys must be sorted.\n- Never log secrets.\n1. Always retry twice.\n"
    w(store, "a.ts", capsule="A.", body=old)
    new = "# a\n\n1. Always retry\n   twice.\n\nIntro.\n\n* Keys must be sorted.\n"
    said = w(store, "a.ts", body=new)
    dropped = [line for line in said.splitlines() if line.startswith("Dropped constraint")]
    assert dropped == [
        'Dropped constraint: "Never log secrets." is gone from the body. A constraint that '
        "still holds should stay; one that changed belongs in the journal."
    ]


@pytest.mark.parametrize(("chars", "fold"), [(399, True), (400, False)])
def test_spec_6_1_8_fold_up_counts_the_body_as_sent(store: Store, chars: int, fold: bool) -> None:
    """The threshold is on the body as the caller sent it (no newline of ours counted)."""
    w(store, "src", capsule="Sources.", body="# src\n" + "s" * 500)
    assert (FOLD in w(store, "src/x.py", capsule="X.", body="x" * chars)) is fold


@pytest.mark.parametrize(
    ("chars", "line"),
    [(8000, ""), (8001, "(over 8,000)"), (20000, "(over 8,000)"), (20001, "maximum of 20,000")],
)
def test_spec_7_size_lines_at_their_bounds(store: Store, chars: int, line: str) -> None:
    """The default schema's 20,000 and the built-in 8,000 draw at the character the body as
    sent crosses them (the store, and so its schema.json, exists before this write)."""
    w(store, "seed.ts", capsule="Seed.")
    said = w(store, "a.ts", capsule="A.", body="x" * chars)
    assert said.count("characters") == (1 if line else 0), said
    assert line in said


def test_spec_6_journal_body_is_stored_trimmed(store: Store) -> None:
    """The entry's text as pi-canon stores it: blank lines and spaces around it dropped."""
    r = tool.run(
        store, {"action": "journal", "body": "\n\n  Chose X.\n  Kept Y.\n\n\n", "slug": "t"}
    )
    (entry,) = (store.root / "journal").iterdir()
    assert r.code == 0 and entry.read_text("utf-8").endswith("---\nChose X.\n  Kept Y.\n")
