"""SPEC §5 and §12 (issue 36 deliverable 3): generated front matters (odd scalars, control
characters, broken lines, duplicate keys, CRLF and CR line ends, a BOM) go through a write of
the capsule only, the body only, or both, then a read, all through the public tool function
(the JSON tool's action objects, in process). No line is ever lost: every line other than the
owned keys' keeps its bytes and order; a capsule the write did not name reads as before, and
when canon could not read it, its lines keep their bytes; the body is the one written or the
one that was there."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from canon_ls.core import tool
from canon_ls.core.storage.article import one_line, parse
from canon_ls.core.storage.store import Store

ODD = [
    "yes", "~", "- x", "? x", "[a, b]", "{a: 1}", "'q'", '"d"', "a: b", "x # c", "2026-01-01",
    "0x1F", ":", "&a", "*a", "!t", "|", ">", "%x", "@x", "`x`", "a\x01b", "\x7f", "a\x1bc",
    "x\u2028y", "x\x85y", "\ufeffz", "", "[feed, http", "'open", '"open', "tab\there",
]  # fmt: skip
VALUE = st.one_of(
    st.sampled_from(ODD),
    st.text(st.characters(codec="utf-8", exclude_characters="\n\r\x00"), max_size=8),
)
KEY = st.sampled_from(["owner", "tags", "note", "reviewed", "aliases", "capsule", "updated"])
LINE = st.one_of(
    st.builds(lambda k, v: f"{k}: {v}", KEY, VALUE),
    st.builds(lambda v: f"capsule: {v}", VALUE),
    st.builds(lambda v: f"  - {v}", VALUE),
    st.sampled_from(
        ["capsule:", "scope: rule", "scope: asset", "tags: [feed, http", "# comment", "", "  x: 1"]
    ),
)
CAPSULES = st.sampled_from(["New capsule.", "yes", "- dash", "a: b", "x\u2028y", " trimmed "])
BODIES = st.sampled_from(["# New\n\nBody.\n", "plain text", "#\tTab title\nx\n"])
OWNED = re.compile(r"(capsule|updated|scope)[ \t]*:")


def foreign(lines: list[str]) -> list[str]:
    """The lines of no owned key (an owned key's indented lines are its own), blanks left out."""
    out: list[str] = []
    owned = False
    for line in lines:
        if not line.strip(" \t\r\n"):
            continue
        if line[:1] in (" ", "\t") or line.startswith("- ") or line.rstrip("\r\n") == "-":
            if not owned:
                out.append(line)
            continue
        owned = bool(OWNED.match(line))
        if not owned:
            out.append(line)
    return out


def front_lines(text: str) -> list[str] | None:
    """The front matter's lines with their endings, as the file holds them (None: none)."""
    text = text.removeprefix("\ufeff")
    if not re.match(r"---[ \t]*\r?\n", text):
        return None
    lines = re.findall(r"[^\n]*\n|[^\n]+$", text)  # only LF ends a line, as in both tools
    end = next((i for i, x in enumerate(lines[1:], 1) if x.rstrip() in ("---", "...")), None)
    return None if end is None else lines[1:end]


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    lines=st.lists(LINE, max_size=8),
    nl=st.sampled_from(["\n", "\r\n", "\r"]),
    bom=st.booleans(),
    mode=st.sampled_from(["capsule", "body", "both"]),
    capsule=CAPSULES,
    body=BODIES,
)
def test_no_line_is_ever_lost(
    tmp_path: Path, lines: list[str], nl: str, bom: bool, mode: str, capsule: str, body: str
) -> None:
    project = tmp_path / "proj"
    path = project / ".canon/articles/src/app.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    old_body = "# App\n\nOld body.\n".replace("\n", nl)
    old = ("\ufeff" if bom else "") + nl.join(["---", *lines, "---", ""]) + old_body
    path.write_bytes(old.encode())
    before = parse(old, "src/app")
    action: dict[str, str] = {"action": "write", "path": "src/app"}
    if mode != "body":
        action["capsule"] = capsule
    if mode != "capsule":
        action["body"] = body
    store = Store(project)
    wrote = tool.run(store, action)
    assert wrote.code == 0, (old, wrote.text)
    new = path.read_bytes().decode()
    after = parse(new, "src/app")
    read = tool.run(Store(project), {"action": "read", "path": "src/app"})
    assert read.code == 0, read.text
    old_front, new_front = front_lines(old), front_lines(new)
    assert new_front is not None, new
    if old_front is None:  # no front matter to either tool (a CR-only file): the old text is
        if mode == "capsule":  # the body, kept whole by a write that names no body
            assert new.endswith(old.removeprefix("\ufeff")), (old, new)
    else:
        assert foreign(new_front) == foreign(old_front), (old, new)
        if mode == "body":
            assert after.capsule == before.capsule, (old, new)
            if not before.capsule:  # absent, blank or unreadable: its lines stay as they were
                kept = [x for x in old_front if x.startswith("capsule")]
                assert [x for x in new_front if x.startswith("capsule")] == kept, (old, new)
        assert after.scope == before.scope, (old, new)
    if mode == "capsule":
        assert after.body == before.body or old_front is None, (old, new)
    else:
        assert after.body.rstrip("\n") == body.rstrip("\n"), (old, new)
    if mode != "body":
        assert after.capsule == one_line(capsule).strip(), (old, new)  # breaks are spaces
        assert f"capsule: {after.capsule}\n" in read.text, read.text
