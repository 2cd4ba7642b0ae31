"""SPEC §5 article format: parsing never raises, rendering touches only owned keys, and every
capsule round-trips through PyYAML (1.1), ruamel.yaml (1.2) and our own parser."""

from __future__ import annotations

import io
import re

import frontmatter
import pytest
import yaml
from frontmatter.default_handlers import YAMLHandler
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from canon_ls.core.storage import article as art
from canon_ls.core.storage import front_write as fw
from canon_ls.core.storage import yaml_subset
from canon_ls.core.storage.yaml_subset import needs_quotes

LOOKALIKES = [
    "yes",
    "no",
    "on",
    "off",
    "y",
    "n",
    "Y",
    "N",
    "YES",
    "No",
    "On",
    "OFF",
    "true",
    "False",
    "~",
    "null",
    "Null",
    "NULL",
    "",
    " ",
    ".inf",
    "-.inf",
    ".NaN",
    ".nan",
    "0x1F",
    "1_000",
    "0o7",
    "0b101",
    "017",
    "1e3",
    "1.5e-3",
    "+1",
    "-1",
    "3.14",
    "1:20",
    "190:20:30",
    "2026-01-01",
    "2026-1-1",
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43.10 -5",
    "<<",
    "=",
    "- item",
    "? key",
    ": x",
    "-",
    "?",
    ":",
    "[a, b]",
    "{a: b}",
    "&anchor",
    "*alias",
    "!tag",
    "|",
    ">",
    "'quoted'",
    '"dq"',
    "%percent",
    "@at",
    "`tick`",
    "# hash",
    "a: b",
    "a #b",
    "trailing ",
    " leading",
    "tab\there",
    "ctrl\x01char",
    "nel\x85x",
    "ls\u2028x",
    "bom\ufeffx",
    "back\\slash",
    'in"side',
    "it's",
    "---",
    "...",
    "--- doc",
    "a:",
    "key:value",
    "ends with #",
    "#",
    ",comma",
    "]",
    "}",
    "a, b",
    "100%",
    "café ☕ 配置",
    "\x7f",
    "\t",
    "emoji 🎉",
    "line\nbreak",
    "crlf\r\nbreak",
    "multi\n\n\nbreaks",
    "1 day",
    "v1.2.3",
    "0.1.2",
    "-_",
    "._",
    "+_",
    "-__",
    "+._",
    "-._1",
    "+_1e3",
    "._e_",
    "-0_",
]


def front_matter(text: str) -> str:
    assert text.startswith("---\n")
    end = text.index("\n---\n", 3)
    return text[4 : end + 1]


def pyyaml_capsule(text: str) -> object:
    return yaml.safe_load(front_matter(text))["capsule"]


_RUAMEL = YAML(typ="safe", pure=True)
_RUAMEL.version = (1, 2)


def ruamel_capsule(text: str) -> object:
    return _RUAMEL.load(io.StringIO(front_matter(text)))["capsule"]


class _StringsYAML(YAMLHandler):
    """python-frontmatter with every scalar a string, as the store reads front matter (libyaml
    when present, as the store: the pure scanner refuses a trailing tab libyaml accepts)."""

    def load(self, fm: str, **kwargs: object) -> object:
        return super().load(fm, Loader=getattr(yaml, "CBaseLoader", yaml.BaseLoader))


def frontmatter_meta(text: str, strings: bool = False) -> dict:
    """The whole file through python-frontmatter (its own split, then YAML)."""
    handler = _StringsYAML() if strings else None
    return dict(frontmatter.loads(text, handler=handler).metadata)


def check_round_trip(capsule: str) -> None:
    text = fw.render(None, capsule=capsule, updated="2026-11-29", scope="asset", body="b\n")
    expected = art.one_line(capsule).strip()  # trimmed; an empty capsule writes no key (§5)
    if expected:
        assert pyyaml_capsule(text) == expected, text
        assert ruamel_capsule(text) == expected, text
        assert frontmatter_meta(text)["capsule"] == expected, text
    else:
        assert "capsule" not in text, text
    parsed = art.parse(text.encode("utf-8"), "x")
    assert parsed.capsule == expected, text
    assert not parsed.problems
    assert parsed.updated == "2026-11-29"
    assert parsed.body == "b\n"


@pytest.mark.parametrize("capsule", LOOKALIKES)
def test_spec_5_lookalikes_round_trip(capsule: str) -> None:
    """SPEC §5: capsules that plain YAML would misread are quoted and read back exactly."""
    check_round_trip(capsule)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.text(),
        st.sampled_from(LOOKALIKES),
        st.builds(lambda a, b: a + b, st.sampled_from(LOOKALIKES), st.text(max_size=8)),
        st.builds(lambda a, b: a + b, st.text(max_size=8), st.sampled_from(LOOKALIKES)),
    )
)
def test_spec_5_any_capsule_round_trips(capsule: str) -> None:
    """SPEC §5: parse(write(x)) == x for every capsule, with PyYAML, ruamel (1.2) and ours."""
    check_round_trip(capsule)


# The indicator/sign characters a plain scalar may start with, and what may follow them: every
# two- and three-character combination is tried (the class `-_`, `._`, `+_` came from).
_STARTS = "-+.?:~=<!&*|>%@`#,[]{}'\"_0123456789"
_FOLLOWS = "-+._:eE0x1 ~nN#aZ"


def _combinations() -> list[str]:
    out = [a + b for a in _STARTS for b in _FOLLOWS]
    out += [a + b + c for a in _STARTS[:10] for b in _FOLLOWS for c in "_.0e-x"]
    return out


@pytest.mark.parametrize("start", _STARTS)
def test_spec_5_indicator_followed_by_anything_round_trips(start: str) -> None:
    """SPEC §5: a capsule made of an indicator or sign character followed by one or two
    others reads back exactly under YAML 1.1, YAML 1.2 and our parser (a generator for the
    whole class, not one example)."""
    for capsule in _combinations():
        if capsule.startswith(start):
            check_round_trip(capsule)


def test_spec_5_plain_when_safe() -> None:
    """SPEC §5: owned values are quoted only where plain YAML would misread them."""
    for capsule in (
        "Loads layered config; env beats file.",
        "1 day retention",
        "v1.2.3 API",
        "café: no",
        "a-b",
        "url http://x/y#z",
    ):
        if ": " in capsule:
            assert needs_quotes(capsule)
            continue
        assert not needs_quotes(capsule), capsule
        text = fw.render(None, capsule=capsule, updated="2026-11-29", scope="asset", body="")
        assert f"capsule: {capsule}\n" in text


FOREIGN = """---
# a comment at the top
title: "My Note"
aliases: [Config, "Layered Config"]
tags:
  - core
  - config   # trailing comment
cssclasses:
- wide
reviewed: 2026-10-01
stale_after: 2027-01-01
nested:
  owner: team-a
  limits: {max: 3, min: 1}
capsule: The old capsule.
flow: {a: 1, b: [x, y]}
multi: >
  folded text
  continues here
updated: 2025-01-02
empty:
quoted: 'it''s'
---
# src/core/config
Body text.
"""


def foreign_lines(text: str) -> list[str]:
    fm = front_matter(text)
    out = []
    skip = False
    for line in fm.splitlines(keepends=True):
        if line.startswith(("capsule:", "updated:", "scope:")):
            skip = True
            continue
        if skip and line.startswith((" ", "\t")):
            continue
        skip = False
        out.append(line)
    return out


@pytest.mark.parametrize("scope", ["asset", "rule"])
def test_spec_5_foreign_keys_byte_identical(scope: str) -> None:
    """SPEC §2/§5: foreign keys (lists, flow, nested maps, comments, dates, Obsidian
    aliases/tags) keep their bytes and order after a write that changed only the capsule."""
    before = art.parse(FOREIGN.encode(), "src/core/config")
    assert before.capsule == "The old capsule."
    assert before.meta["aliases"] == ["Config", "Layered Config"]
    out = fw.render(
        FOREIGN, capsule="New: capsule", updated="2026-11-29", scope=scope, body=before.body
    )
    assert foreign_lines(out) == foreign_lines(FOREIGN)
    assert out.endswith("---\n# src/core/config\nBody text.\n")
    after = art.parse(out.encode(), "src/core/config")
    assert after.capsule == "New: capsule"
    assert after.updated == "2026-11-29"
    assert after.scope == scope
    assert {k: v for k, v in after.meta.items() if k not in art.OWNED} == {
        k: v for k, v in before.meta.items() if k not in art.OWNED
    }
    # owned lines replaced in place: capsule still sits between nested and flow
    keys = [line.split(":")[0] for line in front_matter(out).splitlines() if line[:1].isalpha()]
    assert keys.index("capsule") == keys.index("nested") + 1
    # the diff is exactly the owned lines
    old = FOREIGN.splitlines()
    new = out.splitlines()
    changed = [line for line in new if line not in old]
    assert all(line.startswith(("capsule:", "updated:", "scope:")) for line in changed)


def test_spec_5_scope_asset_removes_line_and_missing_keys_inserted() -> None:
    """SPEC §5: scope: rule written only when declared and removed by scope: asset."""
    text = "---\ntags: [a]\nscope: rule\n---\nbody\n"
    out = fw.render(text, capsule="C", updated="2026-11-29", scope="asset", body="body\n")
    assert out == "---\ncapsule: C\nupdated: 2026-11-29\ntags: [a]\n---\nbody\n"
    out2 = fw.render(out, capsule="C", updated="2026-11-29", scope="rule", body="body\n")
    assert out2 == "---\ncapsule: C\nupdated: 2026-11-29\nscope: rule\ntags: [a]\n---\nbody\n"


def test_spec_5_block_capsule_replaced_with_one_line() -> None:
    text = "---\ncapsule: >\n  folded\n  text\nother: 1\n---\nx\n"
    out = fw.render(text, capsule="new", updated="2026-11-29", scope="asset", body="x\n")
    assert out == "---\ncapsule: new\nupdated: 2026-11-29\nother: 1\n---\nx\n"


def test_spec_5_crlf_front_matter_kept() -> None:
    text = "---\r\ntitle: x\r\ncapsule: a\r\n---\r\nbody\r\n"
    before = art.parse(text, "a")
    out = fw.render(text, capsule="b", updated="2026-11-29", scope="asset", body=before.body)
    assert out == "---\r\ntitle: x\r\ncapsule: b\r\nupdated: 2026-11-29\r\n---\r\nbody\r\n"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"---\ncapsule: [unclosed\n---\nbody\n", "malformed front matter"),
        (b"---\ncapsule: a: b\n---\nbody\n", "malformed front matter"),
        (b"---\ncapsule: ok\nno closing line\n", "never closed"),
        (b"---\n- a list\n- not a map\n---\n", "not a mapping"),
        (b"---\ncapsule:\n  nested: map\n---\n", "capsule is not"),
        (b"\xff\xfe---\ncapsule: x\n", "not UTF-8"),
        (b"\x00\x01\x02binary", "binary"),
    ],
)
def test_spec_5_malformed_never_raises(data: bytes, problem: str) -> None:
    """SPEC §5/§12: malformed front matter or bad bytes -> empty capsule and a problem."""
    a = art.parse(data, "x")
    assert a.capsule == ""
    assert any(problem in p for p in a.problems), a.problems


def test_spec_5_no_front_matter_is_fine() -> None:
    a = art.parse("# Title\n\ntext\n", "x")
    assert a.capsule == "" and a.title == "Title" and not a.problems


def test_spec_5_title_and_flat_parser_matches_yaml() -> None:
    text = (
        "---\ncapsule: 'it''s here'\nupdated: 2026-08-11\ntags:\n  - a\n  - \"b c\"\n"
        'q: "esc\\u00e9 \\"x\\""\nplain: v # comment\n---\n\n# The title\nbody\n'
    )
    a = art.parse(text, "x")
    assert a.capsule == "it's here"
    assert a.title == "The title"
    assert a.meta == yaml.load(front_matter(text), Loader=yaml.BaseLoader)
    assert a.body_line == 9  # 0-based: the blank line after the closing '---'
    assert yaml_subset.flat(front_matter(text)) == a.meta  # served by the fast path, not libyaml


def test_set_meta_reviewed_keeps_everything_else() -> None:
    """SPEC §9: reviewed is a non-owned key; writing it changes nothing else."""
    out = fw.set_meta(FOREIGN, "reviewed", "2026-11-29")
    assert out == FOREIGN.replace("reviewed: 2026-10-01", "reviewed: 2026-11-29")
    fresh = fw.set_meta("---\ncapsule: c\n---\nx\n", "reviewed", "2026-11-29")
    assert art.parse(fresh, "a").reviewed == "2026-11-29"


_KEYS = st.sampled_from(["capsule", "updated", "tags", "a_b", "x-y", "k.v", "title"])
_VALUES = st.one_of(st.sampled_from(LOOKALIKES), st.text(max_size=12))
_LINE = st.one_of(
    st.builds(lambda k, v: f"{k}: {v}", _KEYS, _VALUES),
    st.builds(lambda k, v: f"{k}: {yaml_subset.format_scalar(art.one_line(v))}", _KEYS, _VALUES),
    st.builds(lambda v: f"  - {v}", _VALUES),
    st.builds(lambda v: f"- {v}", _VALUES),
    st.builds(lambda k: f"{k}:", _KEYS),
    st.sampled_from(["# comment", "", "  # indented comment", "  nested: x"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=8))
def test_spec_5_flat_parser_agrees_with_yaml(lines: list[str]) -> None:
    """The hand parser either declines (falls back) or gives exactly what libyaml gives."""
    block = "".join(line + "\n" for line in lines)
    try:
        flat = yaml_subset.flat(block)
    except yaml_subset.Fail:
        return
    assert flat == yaml.load(block, Loader=yaml.BaseLoader) or (
        flat == {} and yaml.load(block, Loader=yaml.BaseLoader) is None
    ), block
    assert flat == frontmatter_meta(f"---\n{block}---\nbody\n", strings=True), block


_YAML_ONLY_BREAK = re.compile("[\x85\u2028\u2029]")


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=8))
def test_spec_5_front_matter_agrees_with_python_frontmatter(lines: list[str]) -> None:
    """Whatever path serves it (flat parser or the slow path), a file's front matter reads as
    python-frontmatter reads the same file with every scalar a string, or is a problem where
    it fails (a differential oracle beside PyYAML and ruamel)."""
    block = "".join(line + "\n" for line in lines)
    text = f"---\n{block}---\nbody\n"
    if any(line.split(":")[0] in art.OWNED and _YAML_ONLY_BREAK.search(line) for line in lines):
        return  # pi-canon writes these plain: canon reads one line, YAML breaks it (quirks tests)
    try:
        expected = frontmatter_meta(text, strings=True)
    except (yaml.YAMLError, ValueError, AttributeError, TypeError):
        expected = None
    parsed = art.parse(text, "x")
    if expected is None:
        assert parsed.problems, block
        return
    if art.owned_duplicates(block):  # a repeated owned key: canon reads the non-empty value as
        return  # pi-canon does, where YAML takes the last (tests/agent/test_pi_canon_quirks.py)
    malformed = [p for p in parsed.problems if p.startswith("malformed front matter")]
    if malformed and not parsed.meta and expected:  # not a mapping: the store says so
        assert not isinstance(yaml.load(block, Loader=yaml.BaseLoader), dict), block
        return
    assert parsed.meta == expected, block


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300) | st.text(max_size=300).map(lambda t: ("---\n" + t).encode()))
def test_spec_12_parse_never_raises(data: bytes) -> None:
    """SPEC §5/§12: any bytes parse to an Article; problems say what is wrong."""
    a = art.parse(data, "x")
    assert isinstance(a.capsule, str) and isinstance(a.body, str)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=8), _VALUES, st.sampled_from(["asset", "rule"]))
def test_spec_5_render_over_any_front_matter(lines: list[str], capsule: str, scope: str) -> None:
    """SPEC §5: rendering over arbitrary existing front matter never raises; when the result
    is valid YAML the owned values read back exactly and foreign lines are untouched."""
    previous = "---\n" + "".join(line + "\n" for line in lines) + "---\nbody\n"
    out = fw.render(previous, capsule=capsule, updated="2026-11-29", scope=scope, body="body\n")
    parsed = art.parse(out, "x")
    if not parsed.problems:
        assert parsed.capsule == art.one_line(capsule).strip()
        assert parsed.updated == "2026-11-29"
        assert parsed.scope == scope
    kept = [ln for ln in out.split("\n") if not ln.startswith(("capsule:", "updated:", "scope:"))]
    for line in "\n".join(lines).split("\n"):
        if not line.startswith(("capsule", "updated", "scope", " ", "-")) and line:
            assert line in kept


def test_front_matter_keys_and_short_values_are_shared_between_articles():
    """Issue 15: 50k articles repeat the same keys, dates and tags; each is one string."""
    a = art.parse(b"---\ncapsule: One.\nupdated: 2025-01-02\ntags: [retry, cache]\n---\nx\n", "a")
    b = art.parse(b"---\ncapsule: Two.\nupdated: 2025-01-02\ntags: [cache]\n---\ny\n", "b")
    key_a = next(k for k in a.meta if k == "updated")
    key_b = next(k for k in b.meta if k == "updated")
    assert key_a is key_b
    assert a.meta["updated"] is b.meta["updated"]
    assert a.meta["tags"][1] is b.meta["tags"][0]


def test_front_matter_the_flat_parser_declines_goes_through_python_frontmatter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The slow path is python-frontmatter's YAML handler (the design card's library), not a
    second YAML call of our own; the flat parser still serves plain front matter."""
    seen: list[str] = []
    real = YAMLHandler.load

    def spy(self: YAMLHandler, fm: str, **kwargs: object) -> object:
        seen.append(fm)
        return real(self, fm, **kwargs)

    monkeypatch.setattr(YAMLHandler, "load", spy)
    nested = art.parse("---\ncapsule: c\nextra:\n  deep: {a: [1, 2]}\n---\nbody\n", "x")
    assert nested.meta["extra"] == {"deep": {"a": ["1", "2"]}} and not nested.problems
    assert seen == ["capsule: c\nextra:\n  deep: {a: [1, 2]}\n"]
    art.parse("---\ncapsule: plain\nupdated: 2026-01-01\n---\nbody\n", "y")
    assert len(seen) == 1
