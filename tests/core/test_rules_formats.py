"""The shared facts of `canon import` / `canon export` (formats/hosts.py): glob values as
the hosts write them, globs -> the address they lie under, and the export marker."""

from __future__ import annotations

from pathlib import Path

from canon_ls.core.storage.article import parse
from canon_ls.formats import hosts as rf
from canon_ls.formats.rule_export import render


def test_split_globs_reads_lists_comma_strings_and_braces() -> None:
    assert rf.split_globs(["src/**", ' "lib/*.ts" ']) == ["src/**", "lib/*.ts"]
    assert rf.split_globs("**/*.ts, src/**/*.{ts,tsx} ,") == ["**/*.ts", "src/**/*.{ts,tsx}"]
    assert rf.split_globs(None) == [] and rf.split_globs([1, ""]) == []


def test_globs_covering_a_whole_directory(tmp_path: Path) -> None:
    for folder in ("src/api", "docs/v1.2", "app/[slug]"):
        (tmp_path / folder).mkdir(parents=True)
    cases = {
        ("src/api/**", "./src/api/**/*"): "src/api",
        ("src/api/**/*.ts", "src/api/*.tsx"): "",  # some of its files: a rule, not src/api
        ("src/api/**", "src/web/**"): "",
        ("**/*.ts",): "",
        ("docs/v1.2/",): "docs/v1.2",  # a directory keeps its dot
        ("src/nothing/**",): "",
        ("../outside/**",): "",
        ("app/\\[slug\\]/**",): "app/[slug]",  # escaped glob characters are a name
    }
    for globs, address in cases.items():
        assert rf.whole_directory(globs, tmp_path) == address, globs


def test_globs_of_an_asset_set() -> None:
    assert rf.globs_of(["src/feed.py", "src/feed/"]) == ["src/feed.py", "src/feed/**"]


def test_marker_names_the_article_and_sees_a_hand_edit() -> None:
    article = parse(b"---\ncapsule: 'Cap: sule'\n---\nBody.\n", "src/a b")
    text = render(rf.HOSTS["cursor"], article, ["src/a b/**"], False)
    assert text is not None
    assert rf.read_marker(text) == ("src/a b", False)
    assert rf.read_marker(text + "more\n") == ("src/a b", True)
    assert rf.read_marker("---\nglobs: x\n---\nMine.\n") is None


def test_read_source_of_each_host() -> None:
    kiro = rf.read_source(".kiro/steering/x.md", b"---\ninclusion: manual\n---\nT\n")
    assert (kiro.globs, kiro.when) == ((), "request")
    cursor = rf.read_source(".cursor/rules/x.mdc", b"---\nalwaysApply: true\nglobs: a/**\n---\nT\n")
    assert (cursor.globs, cursor.when) == ((), "always")
    nested = rf.read_source("pkg/web/.claude/CLAUDE.md", b"T\n")
    assert (nested.globs, nested.when, nested.name) == (("pkg/web/**",), "files", "claude")
