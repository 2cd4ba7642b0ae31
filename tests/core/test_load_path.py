"""SPEC §5 article format, on the fast load path: the flat parser's flow lists read exactly as
libyaml reads them, the cheap Article constructor equals the dataclass, sized reads return the
same bytes as a plain read, and odd files never hang a load."""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from canon_ls.core.retrieval.links import wikilinks
from canon_ls.core.storage import article as art
from canon_ls.core.storage import index as store_mod  # the reading side of the store
from canon_ls.core.storage import yaml_subset
from canon_ls.core.storage.article import Article
from canon_ls.core.storage.store import Store


def flat_or_none(block: str) -> dict | None:
    try:
        return yaml_subset.flat(block)
    except yaml_subset.Fail:
        return None


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("[a, b]", ["a", "b"]),
        ("[a]", ["a"]),
        ("[]", []),
        ("[ ]", []),
        ("[a, b,]", ["a", "b"]),
        ("[ spaced  words , x ]", ["spaced  words", "x"]),
        ("[-a, 1, 2026-01-02, yes, ~]", ["-a", "1", "2026-01-02", "yes", "~"]),
        ("[标签, mixed 中文]", ["标签", "mixed 中文"]),
    ],
)
def test_spec_5_flow_lists_are_read_flat_and_match_libyaml(value: str, want: list[str]) -> None:
    block = f"capsule: C.\ntags: {value}\n"
    assert flat_or_none(block) == {"capsule": "C.", "tags": want}
    assert yaml_subset.yaml_mapping(block) == {"capsule": "C.", "tags": want}


@pytest.mark.parametrize(
    "value",
    ["[a, [b]]", "[a: b]", "['a']", '["a"]', "[a, , b]", "[,]", "[- a]", "[a #c]", "[&x a]",
     "[a, {b}]", "[a]x", "[a, b] # note", "[? a]", "[*a]", "[!t a]"],
)  # fmt: skip
def test_spec_5_anything_unusual_in_a_flow_list_falls_back_to_yaml(value: str) -> None:
    block = f"tags: {value}\n"
    assert flat_or_none(block) is None
    meta = art.parse(f"---\n{block}---\nbody\n", "x")
    try:
        want = yaml_subset.yaml_mapping(block)
    except ValueError:
        assert meta.problems and meta.problems[0].startswith("malformed front matter")
    else:
        assert meta.meta == want


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab -,:#[]{}'\"&*!?|>%@`~.1中", max_size=8), max_size=5))
def test_spec_5_flat_flow_lists_never_disagree_with_libyaml(items: list[str]) -> None:
    block = f"k: [{','.join(items)}]\n"
    got = flat_or_none(block)
    if got is not None:
        assert got == yaml_subset.yaml_mapping(block)


def test_make_matches_the_dataclass() -> None:
    assert tuple(inspect.signature(art.make).parameters) == art.FIELDS
    body = "# T\n[[x]]\n"
    values = ("a/b", "Cap.", "2026-01-01", "rule", "T", body, {"k": "v"}, ("p",), 3, 5, 8)
    values += (("x",), len(body), None)
    made, built = art.make(*values), Article(*values)
    assert made == built and hash(made) == hash(built)
    assert made.meta == built.meta and wikilinks(made.body) == wikilinks(built.body)
    parsed = art.parse(f"---\ncapsule: Cap.\nscope: rule\n---\n{body}", "a/b")
    assert (parsed.held, parsed.targets, parsed.body_chars) == (body, ("x",), len(body))
    with pytest.raises(AttributeError):
        made.capsule = "x"  # type: ignore[misc]


@pytest.mark.parametrize("hint", ["exact", "none", "smaller", "larger"])
def test_sized_reads_return_the_whole_file(tmp_path: Path, hint: str) -> None:
    p = tmp_path / "f.md"
    data = os.urandom(200_000)
    p.write_bytes(data)
    size = {"exact": len(data), "none": -1, "smaller": 10, "larger": len(data) + 99}[hint]
    assert store_mod._read_capped(p, size) == (data, False)


def test_spec_5_large_files_are_truncated_with_a_problem(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_mod, "MAX_BYTES", 1000)
    p = project / ".canon/articles/big.md"
    p.parent.mkdir(parents=True)
    p.write_bytes(b"---\ncapsule: Big.\n---\n" + b"x" * 5000)
    assert store_mod._read_capped(p, 5000 + 23)[1] is True
    assert store_mod._read_capped(p, 10)[1] is True  # grew since the stat
    article = Store(project).article("big")
    assert article is not None and article.capsule == "Big."
    assert any("too large" in problem for problem in article.problems)
    assert len(article.body) < 1000


@pytest.mark.timeout(20)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_named_like_an_article_does_not_hang_the_load(project: Path) -> None:
    articles = project / ".canon/articles"
    articles.mkdir(parents=True)
    (articles / "real.md").write_text("---\ncapsule: Real.\n---\n")
    os.mkfifo(articles / "pipe.md")
    store = Store(project)
    assert store.addresses() == ["real"]
    assert store.reload_file(articles / "pipe.md") == set()
