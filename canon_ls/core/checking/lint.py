"""Write-time lints (SPEC §6.1) and per-article findings for `canon check` and the editor."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from canon_ls.core.checking.schema import Schema
from canon_ls.core.retrieval.links import wikilinks
from canon_ls.core.storage.address import link_stem, parent
from canon_ls.core.storage.article import Article, unreadable

if TYPE_CHECKING:
    from canon_ls.core.git.evidence import Evidence

BODY_WARN = 8000
BODY_SPLIT = 20000
CAPSULE_MAX = 1000
CHANGELOG_WORDS = (
    "updated", "changed", "added", "fixed", "now", "removed", "renamed", "refactored", "moved",
    "bumped", "implemented", "migrated", "verified",
)  # fmt: skip
LOG_SEGMENTS = {"log", "logs", "journal", "session", "sessions", "standup", "standups"}
LOG_SEGMENTS |= {"meeting", "meetings"}
FOLD_UP_CHARS = 400  # a body shorter than this under an existing parent could live there
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
_PLACE = re.compile(r"\(line (\d+), column (\d+)\)")
_CHANGELOG = re.compile(r"^\W*(" + "|".join(CHANGELOG_WORDS) + r")\b", re.IGNORECASE)
_CONSTRAINT = re.compile(
    r"\b(must|never|always|require|requires|required|do not|don't)\b", re.IGNORECASE
)


@dataclass(frozen=True)
class Finding:
    """One problem in one article; 0-based line and character columns in the article file."""

    address: str
    code: str
    severity: str  # 'error' | 'warning' | 'info' | 'hint'
    message: str
    line: int = 0
    start: int = 0
    end: int = 0
    evidence: Evidence | None = None  # a stale finding's facts (SPEC §9.1)


def body_chars(n: int, bound: int | None = None) -> list[str]:
    """§6.1 item 1 for a body of `n` characters (a stored article keeps the count, not the body)."""
    if bound is not None and (n > bound or n > BODY_SPLIT):
        return []
    if n > BODY_SPLIT:
        return [
            f"The body is {n:,} characters (over {BODY_SPLIT:,}); split it into child articles "
            "under this address."
        ]
    if n > BODY_WARN:
        return [
            f"The body is {n:,} characters (over {BODY_WARN:,}); keep the current state here and "
            "move history to the journal."
        ]
    return []


def capsule_missing(capsule: str) -> list[str]:
    """§6.1 item 2 (missing)."""
    if capsule.strip():
        return []
    return [
        "The article has no capsule; add one dense line saying what the asset is and what must "
        "stay true."
    ]


def capsule_length(capsule: str) -> list[str]:
    """§6.1 item 2 (too long)."""
    if len(capsule) > CAPSULE_MAX:
        return [
            f"The capsule is {len(capsule):,} characters (over {CAPSULE_MAX:,}); keep it to one "
            "dense line."
        ]
    return []


def capsule_changelog(capsule: str) -> list[str]:
    """§6.1 item 2 (written as a changelog)."""
    if _CHANGELOG.match(capsule) or _ISO.search(capsule):
        return [
            "The capsule reads like a changelog; state what is true now and put the change in "
            "the journal."
        ]
    return []


def journal_address(address: str) -> list[str]:
    """§6.1 item 3."""
    tail = address.split(":", 1)[-1]
    if _ISO.search(tail) is None and LOG_SEGMENTS.isdisjoint(tail.lower().split("/")):
        return []  # (a date cannot span a '/': no segment holds one either)
    for seg in tail.split("/"):
        if seg.lower() in LOG_SEGMENTS or _ISO.search(seg):
            return [
                f"The address {address} looks like a log (segment {seg!r}); record events in "
                "the journal, articles describe assets."
            ]
    return []


def names_article(target: str, exists: Callable[[str], bool]) -> bool:
    """Whether a link target names an article: exactly, or as a path (`[[src/x.ts]]` names
    `src/x`), by address.link_target's rule."""
    return exists(target) or exists(link_stem(target))


def broken_links(body: str, exists: Callable[[str], bool]) -> list[str]:
    """§6.1 item 4: one line per broken [[target]]."""
    lines: list[str] = []
    seen: set[str] = set()
    for link in wikilinks(body):
        if link.target in seen or names_article(link.target, exists):
            continue
        seen.add(link.target)
        lines.append(f"Broken wikilink [[{link.raw}]]: no article {link_stem(link.target)} exists.")
    return lines


def orphan_question(
    address: str, declare: str = "it a rule (scope rule)", move: str = ""
) -> list[str]:
    """§6.1 item 5 (the caller decides whether the address is an orphan)."""
    up = parent(address) or "its parent"
    return [
        f"Orphan: no file or directory maps to {address}. Was the asset moved or deleted? Move "
        f"the article to the asset's new address{move}, merge it into {up}, or declare "
        f"{declare} if it states a rule rather than describing an asset."
    ]


def fold_up(
    address: str, chars: int, exists: Callable[[str], bool], schema: Schema | None
) -> list[str]:
    """§6.1 item 8: a new short article with no file of its own whose parent article exists could
    be a section of it (the schema's own body minimum, when declared, speaks instead)."""
    up = parent(address)
    if not 0 < chars < FOLD_UP_CHARS or not up or not exists(up):
        return []
    rule = None if schema is None or schema.error else schema.rules.get("body")
    if rule is not None and rule.min_chars is not None:
        return []
    return [
        f"The body is {chars} characters; could it be a section of {up} instead? Keep a "
        "child article only where a file or a chunk worth loading on its own begins."
    ]


def scope_question(
    address: str, body: str, old_body: str, scope: str, governs: Callable[[str], bool] | None
) -> list[str]:
    """§6.1 item 8, with the retrieval lane on (`governs` given): asked once, on the write that
    first gives the article constraint language."""
    if governs is None or not _CONSTRAINT.search(body) or _CONSTRAINT.search(old_body):
        return []
    if governs(address):
        return [
            f"This article now states a rule, at {address}, the address of a file: work on any "
            "other file is shown that file's article and never this one. If the rule holds "
            "beyond this file, file it at an address naming the rule, where the retrieval "
            "lane brings it to the work it concerns."
        ]
    if scope == "rule":
        return []
    return [
        f"No file has the address {address}, so only the retrieval lane brings it to work. "
        "If it states a rule on purpose, write it again with scope rule; undeclared, it reads "
        "like an article whose file was deleted."
    ]


def body_growth(old_body: str, new_body: str) -> list[str]:
    """§6.1 item 6, in bytes without trailing blanks (pi-canon's count: both tools say the same
    numbers, and a trailing newline alone is not growth)."""
    old, new = len(old_body.rstrip().encode()), len(new_body.rstrip().encode())
    if new <= old:
        return []
    return [
        f"Body grew {old} -> {new} bytes. The article carries the current state; narrative "
        "history (old values, transitions) belongs in the journal."
    ]


_BULLET = re.compile(r"^\s*(?:(?:[-*+]|\d+[.)])\s+)*")


def _bare(line: str) -> str:
    """A line without its list marker, whitespace runs as one space."""
    return " ".join(_BULLET.sub("", line).split())


def dropped_constraints(old_body: str, new_body: str) -> list[str]:
    """§6.1 item 7: at most two dropped constraint lines, each cut to 160 characters. A line
    still in the new body under another list marker, elsewhere or re-wrapped is kept."""
    kept = " ".join(_bare(line) for line in new_body.splitlines())
    lines: list[str] = []
    for line in old_body.splitlines():
        text = _bare(line)
        if text and _CONSTRAINT.search(text) and text not in kept:
            lines.append(
                f'Dropped constraint: "{text[:160]}" is gone from the body. A constraint that '
                "still holds should stay; one that changed belongs in the journal."
            )
            if len(lines) == 2:
                break
    return lines


def write_lints(
    address: str,
    *,
    capsule: str,
    body: str,
    previous: Article | None,
    capsule_given: bool,
    body_given: bool,
    exists: Callable[[str], bool],
    orphan: bool,
    schema: Schema | None = None,
    chars: int | None = None,
    scope: str = "asset",
    governs: Callable[[str], bool] | None = None,
    asset: bool = False,
) -> list[str]:
    """All §6.1 lines for a write that landed. A bound the schema declares replaces the built-in
    line on the same aspect (§7); `asset`: a file has this address (never asked to fold up)."""
    chars = len(body) if chars is None else chars
    kept = previous is not None and not capsule and unreadable(previous, "capsule")
    lines = [] if kept else capsule_missing(capsule)
    if capsule_given or previous is None:
        if schema is None or schema.bound("capsule") is None:
            lines += capsule_length(capsule)
        lines += capsule_changelog(capsule)
    if body_given or previous is None:
        lines += body_chars(chars, schema.bound("body") if schema else None)
        lines += broken_links(body, exists)
    lines += journal_address(address)
    if orphan:
        lines += orphan_question(address)
    if body_given and previous is not None:
        lines += body_growth(previous.body, body)
        lines += dropped_constraints(previous.body, body)
    if previous is None and not asset:
        lines += fold_up(address, chars, exists, schema)
    lines += scope_question(address, body, previous.body if previous else "", scope, governs)
    return lines


def _positions(body: str, body_line: int) -> Callable[[int], tuple[int, int]]:
    """(line, column) of a body offset: line starts found once, each offset by bisection, so
    tens of thousands of links cost no more than one pass over the body."""
    starts = [0] + [m.end() for m in re.finditer("\n", body)]

    def at(offset: int) -> tuple[int, int]:
        line = bisect_right(starts, offset) - 1
        return body_line + line, offset - starts[line]

    return at


def article_findings(
    article: Article, exists: Callable[[str], bool], schema: Schema | None = None
) -> list[Finding]:
    """Per-article findings (§6.1 items 1–4, broken links ranged on the link, file problems)."""
    a = article.address
    found: list[Finding] = []
    for problem in article.problems:
        if problem.startswith("duplicate key"):
            message = f"{problem[0].upper()}{problem[1:]}; `canon check --fix` keeps that one."
            found.append(Finding(a, "duplicate-key", "warning", message))
            continue
        code = "malformed-front-matter" if problem.startswith("malformed") else "bad-file"
        at = _PLACE.search(problem)  # YAML's place, counted in the file (article.py)
        line, column = (int(at[1]) - 1, int(at[2]) - 1) if at else (0, 0)
        message = problem[0].upper() + problem[1:] + "."
        found.append(Finding(a, code, "error", message, line, column, column))
    for message in [] if unreadable(article, "capsule") else capsule_missing(article.capsule):
        found.append(Finding(a, "capsule-missing", "warning", message))
    for message in [] if schema and schema.bound("capsule") else capsule_length(article.capsule):
        found.append(Finding(a, "capsule-long", "warning", message))
    for message in capsule_changelog(article.capsule):
        found.append(Finding(a, "capsule-changelog", "hint", message))
    for message in body_chars(article.body_chars, schema.bound("body") if schema else None):
        found.append(Finding(a, "body-long", "warning", message, article.body_line))
    for message in journal_address(a):
        found.append(Finding(a, "journal-address", "warning", message))
    if all(names_article(target, exists) for target in article.targets):
        return found
    body = article.body  # read once, only for an article with a broken link: where it is
    position = _positions(body, article.body_line)
    for link in wikilinks(body):
        if names_article(link.target, exists):
            continue
        line, start = position(link.start)
        end_line, end = position(link.end)
        if end_line != line:
            end = start + (link.end - link.start)
        message = f"Broken wikilink [[{link.raw}]]: no article {link_stem(link.target)} exists."
        found.append(Finding(a, "broken-link", "warning", message, line, start, end))
    return found


_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    "sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|"
    "hundred|thousand|million"
)
# An exact value's shapes, as pi-canon's: code spans, quoted text, hyphenated ids, SNAKE_CASE,
# dotted.names, numbers (with a % sign), spelled counts with their unit ("eleven weeks").
_VALUE_SHAPES = (
    re.compile(r"`([^`\n]{2,60})`"),
    re.compile(r'"([^"\n]{2,60})"'),
    re.compile(r"\b([a-z][a-z0-9]*(?:-[a-z0-9]+)+)\b", re.I | re.A),
    re.compile(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b", re.A),
    re.compile(r"\b([a-z][a-z0-9]*\.[a-z][a-z0-9]+)\b", re.A),
    re.compile(r"\b(\d[\d,]*(?:\.\d+)?\s*%?)", re.A),
    re.compile(rf"\b((?:{_NUMBER_WORDS})\s+[a-z]{{3,}})\b", re.I | re.A),
)
_ALNUM = re.compile(r"[a-z0-9]")
VALUES_SHOWN = 6


def _values(text: str) -> list[str]:
    """The value-shaped pieces of `text`, once each (case-folded), in first-seen order."""
    found: dict[str, str] = {}
    for shape in _VALUE_SHAPES:
        for m in shape.finditer(text):
            value = m.group(1).strip()
            if len(value) >= 2 and not _ISO.fullmatch(value):
                found[value.lower()] = value
    return list(found.values())


def _holds(kept: str, value: str) -> bool:
    """`value` occurs in `kept` with no letter or digit either side (42 is not in 142)."""
    needle = " ".join(value.lower().split())
    at = kept.find(needle)
    while at != -1:
        before = kept[at - 1] if at else " "
        end = at + len(needle)
        after = kept[end] if end < len(kept) else " "
        if not _ALNUM.match(before) and not _ALNUM.match(after):
            return True
        at = kept.find(needle, at + 1)
    return False


def unretained(entry: str, article_text: str) -> list[str]:
    """The values a journal entry records that the article (capsule and body) does not
    carry, longest first, at most six: what a reader of the article alone would miss."""
    kept = " ".join(article_text.lower().split())
    missing = [v for v in _values(entry) if not _holds(kept, v)]
    return sorted(missing, key=len, reverse=True)[:VALUES_SHOWN]
