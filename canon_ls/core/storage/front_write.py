"""Writing front matter (SPEC §5): only canon's own lines change (capsule, updated, scope, or the
one key set); every other line keeps its bytes, and a line canon cannot read is never deleted."""

from __future__ import annotations

import json
import re

from canon_ls.core.storage.article import (
    OWNED,
    owned_duplicates,
    parse,
    parse_front_matter,
    parts_of,
)
from canon_ls.core.storage.yaml_subset import continues, format_scalar, one_line


def _key_spans(lines: list[str], key: str) -> list[tuple[int, int]]:
    """Line spans [start, end) of every top-level occurrence of `key`, continuation included."""
    pattern = re.compile(re.escape(key) + r"[ \t]*:(?:[ \t]|\r?\n|$)")
    spans: list[tuple[int, int]] = []
    n = len(lines)
    i = 0
    while i < n:
        if pattern.match(lines[i]):
            j = _past_continuations(lines, i + 1)
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


def _set_key(lines: list[str], key: str, new_line: str, after: tuple[str, ...]) -> None:
    """Replace `key`'s line(s) in place, or insert after the last of `after` present (else top)."""
    spans = _key_spans(lines, key)
    if spans:  # the first readable occurrence is replaced, other readable ones go
        readable = [span for span in spans if _reads(lines, span)]
        for span in reversed(spans):
            if span == (readable or spans)[0]:
                lines[span[0] : span[1]] = [new_line]
            elif span in readable:
                del lines[span[0] : span[1]]
        return
    at = 0
    for anchor in after:
        anchor_spans = _key_spans(lines, anchor)
        if anchor_spans:
            at = anchor_spans[0][1]
    lines.insert(_past_continuations(lines, at), new_line)


def _past_continuations(lines: list[str], at: int) -> int:
    """The first line from `at` that is not a continuation (an indented line, or blank lines
    before one): a key's value ends there, and a key inserted above one would take it."""
    n = len(lines)
    while at < n:
        if continues(lines[at]):
            at += 1
            continue
        if not lines[at].strip():
            k = at
            while k < n and not lines[k].strip():
                k += 1
            if k < n and continues(lines[k]):
                at = k + 1
                continue
        break
    return at


def _drop_key(lines: list[str], key: str) -> None:
    for start, end in reversed(_key_spans(lines, key)):
        if _reads(lines, (start, end)):
            del lines[start:end]


def _reads(lines: list[str], span: tuple[int, int]) -> bool:
    """Whether canon can read these lines: one it cannot is never deleted by a writer."""
    try:
        parse_front_matter("".join(lines[span[0] : span[1]]).replace("\r\n", "\n"))
    except ValueError:
        return False
    return True


def render(
    previous: str | None, *, capsule: str | None, updated: str, scope: str | None, body: str
) -> str:
    """The new file text: only capsule/updated/scope lines change (None: left as they are), every
    other front matter line keeps its bytes; `body` is written verbatim after it."""
    parts = parts_of(previous) if previous else None
    if parts is None or not parts.close:
        head, lines, close, nl = "---\n", [], "---\n", "\n"
    else:
        nl = "\r\n" if parts.head.endswith("\r\n") else "\n"
        head, lines, close = parts.head, list(parts.lines), parts.close
        if not close.endswith("\n") and body:
            close += nl
    capsule = None if capsule is None else one_line(capsule).strip()  # §5: trimmed
    if capsule:
        _set_key(lines, "capsule", f"capsule: {format_scalar(capsule)}{nl}", ())
    elif capsule is not None:  # an empty capsule has no key
        _drop_key(lines, "capsule")
    _set_key(lines, "updated", f"updated: {updated}{nl}", ("capsule",))
    if scope == "rule":
        _set_key(lines, "scope", f"scope: rule{nl}", ("capsule", "updated"))
    elif scope is not None:
        _drop_key(lines, "scope")
    return head + "".join(lines) + close + body


def set_meta(previous: str, key: str, value: str | bool | list[str]) -> str:
    """Set one (non-owned) front matter key, e.g. reviewed: 2026-11-29; the rest is untouched."""
    if not isinstance(value, str):
        shown = json.dumps(value, ensure_ascii=False)
    else:
        shown = value if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) else format_scalar(value)
    parts = parts_of(previous)
    if parts is None or not parts.close:
        return f"---\n{key}: {shown}\n---\n" + previous
    nl = "\r\n" if parts.head.endswith("\r\n") else "\n"
    lines = list(parts.lines)
    _set_key(lines, key, f"{key}: {shown}{nl}", OWNED)
    close = parts.close if parts.close.endswith("\n") or not parts.body else parts.close + nl
    return parts.head + "".join(lines) + close + parts.body


def without_duplicates(text: str) -> str:
    """The article text with each duplicated owned key once, where it first appears, holding
    the value canon reads (the non-empty one); everything else keeps its bytes."""
    parts = parts_of(text)
    if parts is None or not parts.close:
        return text
    nl = "\r\n" if parts.head.endswith("\r\n") else "\n"
    lines = list(parts.lines)
    meta = parse(text, "").meta
    for key in owned_duplicates("".join(lines).replace("\r\n", "\n")):
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            shown = format_scalar(value) if key == "capsule" else value
            _set_key(lines, key, f"{key}: {shown}{nl}", ())
        else:
            _drop_key(lines, key)
    return parts.head + "".join(lines) + parts.close + parts.body
