"""SPEC §6: the tool's contract — codes, bad input sentences, input schema, search text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from canon_ls.core import tool
from canon_ls.core.storage.store import Store


@pytest.mark.parametrize(
    "action",
    [
        None,
        3,
        [1, 2],
        "not json",
        "[1]",
        {},
        {"action": "delete"},
        {"action": 5},
        {"action": "read"},
        {"action": "read", "path": 5},
        {"action": "read", "path": "a", "extra": 1},
        {"action": "write", "path": "a", "contents": "typo"},
        {"action": "search"},
        {"action": "search", "query": ""},
        {"action": "search", "query": "x", "journal": "yes"},
        {"action": "map", "path": []},
        {"action": "read", "path": "a\x00b"},
        {"action": "write", "path": "a\ud800b", "capsule": "x"},
    ],
)
def test_spec_6_bad_input_is_one_sentence(store: Store, action: object) -> None:
    """SPEC §6: unknown actions or wrong argument types get a one-sentence error (code 2)."""
    result = tool.run(store, action)
    assert result.code == 2
    assert result.text and "\n" not in result.text and "Traceback" not in result.text


def test_spec_6_json_text_accepted(store: Store) -> None:
    r = tool.run(store, json.dumps({"action": "write", "path": "a.ts", "capsule": "A."}))
    assert r.code == 0 and r.text == "Wrote a."


def test_spec_11_2_input_schema() -> None:
    """SPEC §11.2: the MCP tool's input schema is the §6 action object."""
    schema = tool.input_schema()
    assert schema["type"] == "object"
    assert schema["properties"]["action"]["enum"] == list(tool.ACTIONS)
    assert schema["required"] == ["action"]
    subject = schema["properties"]["subject"]["anyOf"]  # §6: an array, or one path as a string
    assert {"type": "array", "items": {"type": "string"}} in subject
    assert {"type": "string"} in subject
    assert schema["properties"]["journal"]["type"] == "boolean"
    json.dumps(schema)


def test_spec_6_search_cap_and_journal_note(store: Store) -> None:
    """SPEC §6 search: ten results, address+capsule each, says how many the cap dropped,
    notes the journal by default."""
    for i in range(12):
        tool.run(store, {"action": "write", "path": f"src/m{i:02}.ts", "capsule": f"Parser {i}."})
    tool.run(store, {"action": "write", "path": "src/other.ts", "capsule": "Unrelated."})
    tool.run(store, {"action": "journal", "body": "The parser broke once."})
    r = tool.run(store, {"action": "search", "query": "parser"})
    lines = r.text.splitlines()
    assert "12 articles" in lines[0] and "dropped 2" in lines[0]
    hits = [line for line in lines[1:] if line.startswith("src/")]
    assert len(hits) == 10
    assert all(": Parser" in h for h in hits)
    assert '"journal": true' in lines[-1]
    assert "broke" not in r.text  # entry bodies are never read by default


def test_spec_6_search_journal_window(store: Store) -> None:
    """SPEC §6 search journal:true: articles keep half the window, the shorter side yields."""
    for i in range(8):
        tool.run(store, {"action": "write", "path": f"a{i}.ts", "capsule": f"widget {i}"})
    for i in range(8):
        tool.run(store, {"action": "journal", "body": f"widget event {i}", "subject": ["a0.ts"]})
    r = tool.run(store, {"action": "search", "query": "widget", "journal": True})
    lines = r.text.splitlines()[1:]
    assert len([x for x in lines if x.startswith("journal/")]) == 5
    assert len([x for x in lines if not x.startswith("journal/")]) == 5
    assert "dropped 6" in r.text.splitlines()[0]
    # the shorter side yields its slots
    r = tool.run(store, {"action": "search", "query": "event", "journal": True})
    assert len([x for x in r.text.splitlines() if x.startswith("journal/")]) == 8
    entry_line = next(x for x in r.text.splitlines() if x.startswith("journal/"))
    assert "subject: a0" in entry_line and "widget event" in entry_line


def test_spec_6_search_cjk(store: Store) -> None:
    """SPEC §6 search: CJK runs as bigrams."""
    tool.run(store, {"action": "write", "path": "docs/cfg.md", "capsule": "配置文件的加载顺序"})
    r = tool.run(store, {"action": "search", "query": "加载"})
    assert "docs/cfg" in r.text


def test_spec_6_search_no_match(store: Store) -> None:
    tool.run(store, {"action": "write", "path": "a.ts", "capsule": "Alpha."})
    r = tool.run(store, {"action": "search", "query": "zzzz"})
    assert r.code == 0 and r.text.startswith('No article matches "zzzz".')


def test_spec_6_map_empty_store_sentence(store: Store, project: Path) -> None:
    (project / ".canon").mkdir()
    r = tool.run(store, {"action": "map"})
    assert r.code == 0 and "no articles" in r.text


def test_spec_6_same_text_for_every_adapter(store: Store) -> None:
    """Text depends only on the action (source/session only reach journal front matter)."""
    tool.run(store, {"action": "write", "path": "a.ts", "capsule": "A."})
    a = tool.run(store, {"action": "read", "path": "a.ts"}, source="cli")
    b = tool.run(store, {"action": "read", "path": "a.ts"}, source="lsp", session="x")
    assert a == b


def test_lone_surrogates_in_json_input(store: Store) -> None:
    """JSON allows lone surrogates; they become U+FFFD instead of crashing the write."""
    r = tool.run(store, '{"action": "write", "path": "a.ts", "capsule": "bad \\ud800 x"}')
    assert r.code == 0, r.text
    assert store.article("a").capsule == "bad \ufffd x"  # type: ignore[union-attr]
    r = tool.run(store, '{"action": "journal", "body": "oops \\udfff"}')
    assert r.code == 0, r.text


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
_KEY = st.sampled_from(
    ["action", "path", "capsule", "body", "scope", "subject", "slug", "query", "journal", "extra"]
)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(list(tool.ACTIONS) + ["bogus", None]),
    st.dictionaries(_KEY, _JSON | st.sampled_from(["src/a.ts", "../x", "rule", ""]), max_size=5),
)
def test_spec_6_never_a_traceback(action: object, args: dict) -> None:
    """SPEC §6: whatever the object, the answer is text with code 0, 1 or 2, never an error."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "p")
        obj = {**args, "action": action} if action is not None else args
        result = tool.run(store, obj)
        assert result.code in (0, 1, 2)
        assert result.text and "Traceback" not in result.text
        assert "internal error" not in result.text, result.text
        outside = [p for p in Path(tmp).iterdir() if p.name != "p"]
        assert outside == []
