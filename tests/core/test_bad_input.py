"""SPEC §5/§12: malformed, non-UTF-8 and binary articles and a malformed schema.json never
crash read/map/search; each says what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from canon_ls.core import tool
from canon_ls.core.checking import lint
from canon_ls.core.storage import index as store_mod  # the reading side of the store
from canon_ls.core.storage.article import parse
from canon_ls.core.storage.store import Store

BAD = {
    "bad/yaml": b"---\ncapsule: [unclosed\ntags: {\n---\nbody words here\n",
    "bad/open": b"---\ncapsule: never closed\nbody words here\n",
    "bad/latin1": "---\ncapsule: caf\xe9 words\n---\nbody\n".encode("latin-1"),
    "bad/binary": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01words",
    "good": b"---\ncapsule: Good words.\n---\nbody\n",
}


@pytest.fixture
def bad_store(store: Store, project: Path) -> Store:
    articles = project / ".canon/articles"
    for address, data in BAD.items():
        p = articles / (address + ".md")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    (project / ".canon/schema.json").write_text("{broken json")
    return store


def test_spec_12_read_reports_problem(bad_store: Store) -> None:
    for address, expect in (
        ("bad/yaml", "malformed front matter"),
        ("bad/open", "never closed"),
        ("bad/latin1", "not UTF-8"),
        ("bad/binary", "binary"),
    ):
        r = tool.run(bad_store, {"action": "read", "path": address})
        assert r.code == 0
        assert expect in r.text, (address, r.text)
        assert "schema.json is malformed" in r.text
        assert "\x00" not in r.text


def test_spec_12_map_and_search_still_work(bad_store: Store) -> None:
    m = tool.run(bad_store, {"action": "map"})
    assert m.code == 0
    lines = m.text.splitlines()
    assert len(lines) == 5
    assert "good: Good words." in lines
    assert any(line.startswith("bad/yaml [problem: malformed") for line in lines)
    s = tool.run(bad_store, {"action": "search", "query": "words"})
    assert s.code == 0 and "good" in s.text


def test_spec_12_write_over_bad_files(bad_store: Store, project: Path) -> None:
    """Writing a capsule over a non-UTF-8 file would lose bytes: refused with a sentence; a
    full body replaces it. Malformed YAML gets owned lines fixed and the rest reported."""
    p = project / ".canon/articles/bad/latin1.md"
    r = tool.run(bad_store, {"action": "write", "path": "bad/latin1", "capsule": "x"})
    assert r.code == 2 and "UTF-8" in r.text
    assert p.read_bytes() == BAD["bad/latin1"]
    r = tool.run(bad_store, {"action": "write", "path": "bad/latin1", "capsule": "x", "body": "y"})
    assert r.code == 0
    assert parse(p.read_bytes(), "x").capsule == "x"
    r = tool.run(bad_store, {"action": "write", "path": "bad/yaml", "capsule": "Fixed."})
    assert r.code == 0 and "still wrong" in r.text
    assert b"tags: {" in (project / ".canon/articles/bad/yaml.md").read_bytes()


def test_spec_12_huge_file(store: Store, project: Path, monkeypatch) -> None:
    monkeypatch.setattr(store_mod, "MAX_BYTES", 1000)
    p = project / ".canon/articles/huge.md"
    p.parent.mkdir(parents=True)
    p.write_text("---\ncapsule: Big.\n---\n" + "x" * 5000)
    r = tool.run(store, {"action": "read", "path": "huge"})
    assert "too large" in r.text and "capsule: Big." in r.text


def test_article_findings_ranges(store: Store, project: Path) -> None:
    """lint.article_findings: §6.1 items 1–4 with ranges on broken wikilinks."""
    text = "---\ncapsule: Updated things\n---\n# T\nsee [[nope|x]] and [[ok]]\n"
    a = parse(text, "logs/a")
    found = lint.article_findings(a, lambda t: t == "ok")
    codes = {f.code for f in found}
    assert {"capsule-changelog", "journal-address", "broken-link"} <= codes
    link = next(f for f in found if f.code == "broken-link")
    assert (link.line, link.start, link.end) == (4, 4, 14)
    assert text.splitlines()[4][link.start : link.end] == "[[nope|x]]"
    bad = lint.article_findings(parse(b"---\nx: [\n---\n", "a"), lambda t: True)
    assert [f.code for f in bad][:1] == ["malformed-front-matter"]
