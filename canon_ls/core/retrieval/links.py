"""[[wikilinks]] with offsets, ignoring code fences and inline code (SPEC §6.1 item 4)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from canon_ls.core.storage.address import OutsideStore, clean

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)(?<!`)\1(?!`)", re.DOTALL)


@dataclass(frozen=True)
class Link:
    """One [[target|label]] or [[target#heading]]; offsets are character offsets in the text."""

    target: str
    raw: str
    start: int
    end: int
    target_start: int
    target_end: int

    @property
    def names_heading(self) -> bool:
        """Whether the link points into a section (`[[a#heading]]`, labelled or not)."""
        return "#" in self.raw.split("|", 1)[0]


def _masked(text: str) -> str:
    """The text with fenced code blocks and inline code spans blanked (same length)."""
    if "`" not in text and "~~~" not in text:  # no code at all (the common case)
        return text
    if "```" not in text and "~~~" not in text:  # no fence can open: skip the line walk
        return _CODE_SPAN.sub(lambda mm: " " * len(mm.group(0)), text)
    out: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            out.append(" " * len(line))
            continue
        if fence is not None:
            closing = m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)
            if closing and m and not line[m.end() :].strip():
                fence = None
            out.append(" " * len(line))
            continue
        out.append(line)
    masked = "".join(out)
    if "`" in masked:
        masked = _CODE_SPAN.sub(lambda mm: " " * len(mm.group(0)), masked)
    return masked


def wikilinks(text: str) -> list[Link]:
    """Every wikilink outside code, with its normalised target; heading-only links are dropped."""
    if "[[" not in text:
        return []
    links: list[Link] = []
    for m in _LINK.finditer(_masked(text)):
        raw = text[m.start(1) : m.end(1)]
        part = raw.split("|", 1)[0].split("#", 1)[0]  # the target, without label or heading
        stripped = part.strip()
        if not stripped:
            continue
        lead = len(part) - len(part.lstrip())
        try:
            target = clean(stripped)
        except OutsideStore:
            continue
        if not target:
            continue
        t_start = m.start(1) + lead
        links.append(Link(target, raw, m.start(), m.end(), t_start, t_start + len(stripped)))
    return links


def link_targets(text: str) -> list[str]:
    """The targets of `wikilinks(text)`, in order, without a Link for each: a store keeps them
    for every article it reads (backlinks, broken links), so this runs on every parse."""
    if "[[" not in text:
        return []
    out: list[str] = []
    simple = _SIMPLE.fullmatch
    for part in _TARGET.findall(_masked(text)):
        part = part.strip()
        if not part:
            continue
        if simple(part):  # already an address: clean() would give it back unchanged
            out.append(part)
            continue
        try:
            target = _clean_target(part) if len(part) <= 256 else clean(part)
        except OutsideStore:
            continue
        if target:
            out.append(target)
    return out


# _LINK's matches, captured only up to a '|' or '#' (the target part of `wikilinks`)
_TARGET = re.compile(r"\[\[(?=[^\[\]\n])([^\[\]\n|#]*)[^\[\]\n]*\]\]")
# a target clean() leaves as it is: plain segments, no dot, colon, backslash or blank
_SIMPLE = re.compile(r"[A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)*")
# the same few thousand targets are linked from everywhere (short ones only: bounded memory)
_clean_target = functools.lru_cache(maxsize=8192)(clean)


def new_target(
    link: Link,
    moves: dict[str, str],
    anchors: dict[str, str] | None,
    named: Callable[[str], str] = str,
) -> str:
    """What replaces the link's target text: the new address, plus `#heading` when the link named
    none and the old article became a section."""
    old = named(link.target)
    moved = moves[old]
    anchor = (anchors or {}).get(old)
    return f"{moved}#{anchor}" if anchor and not link.names_heading else moved


def rewrite_links(
    source: str,
    moves: dict[str, str],
    anchors: dict[str, str] | None = None,
    named: Callable[[str], str] = str,
) -> str:
    """`source` with the targets of its links to `moves` replaced: the editor's rename and
    merge (lsp/handlers/edits.py) and `canon mv` (Store.move) rewrite links through it."""
    for link in reversed(wikilinks(source)):
        if named(link.target) in moves:
            replacement = new_target(link, moves, anchors, named)
            source = source[: link.target_start] + replacement + source[link.target_end :]
    return source
