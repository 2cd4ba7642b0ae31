"""schema.json, the store's contract (SPEC §7): load (failing open and loud) and judge writes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from canon_ls.core import fsio
from canon_ls.core.address import OutsideStore
from canon_ls.core.links import wikilinks

MAX_BYTES = 1024 * 1024  # a contract larger than this is not one
MAX_DEPTH = 32  # schema.json is four levels deep; deeper nesting is malformed, not a recursion

# The same keys and values as pi-canon's default file, so whichever tool creates the store, the
# other warns alike; `about` and the hints are our own words.
DEFAULT: dict[str, Any] = {
    "schema_version": 1,
    "about": (
        "The contract every article in this store is held to, read by each tool that writes "
        "here. A rule with required true refuses a write that breaks it (judged on what the "
        "write changes, and on everything when it creates the article); any other rule only "
        "warns, on write and on read. Fields: capsule (the one line shown when its file is "
        "touched), title (the body's leading # heading), body. Rule keys: required, "
        "min_chars, max_chars, hint. Under relations: refs (required, min_count) counts the "
        "[[links]] an article makes; orphan (warn) and children (listed) need the whole link "
        "graph, so editors and whole-store checks apply them. Remove a rule to drop it; "
        "remove this file to turn schema checks off."
    ),
    "article": {
        "capsule": {
            "required": False,
            "max_chars": 1000,
            "hint": "Keep it to one dense line of what is true now; it is what a touch shows.",
        },
        "title": {
            "required": False,
            "hint": "Open the body with a # heading that names the asset.",
        },
        "body": {
            "max_chars": 20000,
            "hint": (
                "Past this size, keep this article as the overview that routes to the detail "
                "and move the detail into child articles under its address."
            ),
        },
    },
    "relations": {
        "refs": {
            "required": False,
            "hint": (
                "The [[links]] this article makes. required refuses a body that links nowhere; "
                "min_count warns below a floor."
            ),
        },
        "orphan": {
            "warn": False,
            "hint": "Warn when no other article links here (a whole-graph rule).",
        },
        "children": {
            "listed": False,
            "hint": "Warn when an article does not link each article directly under it.",
        },
    },
}
FIELDS = ("capsule", "title", "body")


def default_text() -> str:
    """The file written when the store first persists anything."""
    return json.dumps(DEFAULT, indent=2) + "\n"


@dataclass(frozen=True)
class Rule:
    required: bool = False
    min_chars: int | None = None
    max_chars: int | None = None
    hint: str = ""


@dataclass(frozen=True)
class Relations:
    """`relations` of schema.json; orphan/children are graph rules enforced by core/check.py."""

    refs_required: bool = False
    refs_min_count: int | None = None
    refs_hint: str = ""
    orphan_warn: bool = False
    children_listed: bool = False


@dataclass(frozen=True)
class Schema:
    rules: dict[str, Rule] = field(default_factory=dict)
    relations: Relations = Relations()
    error: str = ""  # non-empty: schema.json is malformed and nothing is enforced
    present: bool = False

    @property
    def malformed_line(self) -> str:
        if not self.error:
            return ""
        return (
            f"schema.json is malformed ({self.error}); its rules are not enforced until it "
            "is fixed."
        )

    def bound(self, field_name: str) -> int | None:
        """The field's `max_chars` in force (none while the file is malformed)."""
        rule = None if self.error else self.rules.get(field_name)
        return rule.max_chars if rule else None


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{where} must be a non-negative integer")
    return value


def _rule(data: Any, where: str) -> Rule:
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be an object")
    required = data.get("required", False)
    if not isinstance(required, bool):
        raise ValueError(f"{where}.required must be true or false")
    hint = data.get("hint", "")
    if not isinstance(hint, str):
        raise ValueError(f"{where}.hint must be a string")
    lo = data.get("min_chars")
    hi = data.get("max_chars")
    return Rule(
        required=required,
        min_chars=None if lo is None else _int(lo, f"{where}.min_chars"),
        max_chars=None if hi is None else _int(hi, f"{where}.max_chars"),
        hint=hint,
    )


def _relations(data: Any) -> Relations:
    if data is None:
        return Relations()
    if not isinstance(data, dict):
        raise ValueError("relations must be an object")
    refs = data.get("refs", {}) or {}
    orphan = data.get("orphan", {}) or {}
    children = data.get("children", {}) or {}
    for name, value in (("refs", refs), ("orphan", orphan), ("children", children)):
        if not isinstance(value, dict):
            raise ValueError(f"relations.{name} must be an object")
    required = refs.get("required", False)
    warn = orphan.get("warn", False)
    listed = children.get("listed", False)
    for name, value in (
        ("refs.required", required),
        ("orphan.warn", warn),
        ("children.listed", listed),
    ):
        if not isinstance(value, bool):
            raise ValueError(f"relations.{name} must be true or false")
    min_count = refs.get("min_count")
    hint = refs.get("hint", "")
    if not isinstance(hint, str):
        raise ValueError("relations.refs.hint must be a string")
    return Relations(
        refs_required=required,
        refs_min_count=None if min_count is None else _int(min_count, "relations.refs.min_count"),
        refs_hint=hint,
        orphan_warn=warn,
        children_listed=listed,
    )


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def nesting_depth(text: str, cap: int) -> int:
    """How deeply JSON `text` nests arrays and objects (strings skipped), counting at most to
    `cap` + 1: measured before json.loads, whose recursion a 100k-deep file would exhaust."""
    depth = deepest = 0
    for m in _BRACKET.finditer(_STRING.sub("", text)):
        if m.group() in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > cap:
                    break
        else:
            depth -= 1
    return deepest


def parse(text: str) -> Schema:
    """schema.json text -> Schema; a malformed file gives Schema(error=...) with no rules."""
    if nesting_depth(text, MAX_DEPTH) > MAX_DEPTH:
        return Schema(error=f"nested deeper than {MAX_DEPTH} levels", present=True)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return Schema(error=f"not valid JSON: {exc}", present=True)
    try:
        if not isinstance(data, dict):
            raise ValueError("the top level must be an object")
        article = data.get("article", {})
        if article is None:
            article = {}
        if not isinstance(article, dict):
            raise ValueError("article must be an object")
        rules = {
            name: _rule(article[name], f"article.{name}") for name in FIELDS if name in article
        }
        return Schema(rules=rules, relations=_relations(data.get("relations")), present=True)
    except ValueError as exc:
        return Schema(error=str(exc), present=True)


def absent() -> Schema:
    """No schema.json: no rules (deleting the file turns schema checks off; the built-in
    advisory lines stay)."""
    return Schema()


def load(path: Path, inside: str | None = None) -> Schema:
    """Read schema.json (a regular file only, at most MAX_BYTES, lying in `inside` when
    given); missing -> the defaults (not present on disk)."""
    try:
        data, truncated = fsio.read_regular(path, MAX_BYTES, inside=inside)
    except FileNotFoundError:
        return absent()
    except fsio.NotRegular:
        return Schema(error="not a regular file (a FIFO, device or directory)", present=True)
    except OutsideStore:
        return Schema(error="it lies outside the store", present=True)
    except OSError as exc:
        return Schema(error=f"cannot be read: {exc.strerror}", present=True)
    if truncated:
        return Schema(error=f"larger than {MAX_BYTES:,} bytes", present=True)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Schema(error="not UTF-8", present=True)
    return parse(text)


def references(body: str) -> set[str]:
    """Distinct wikilink targets outside code, case-folded (§7 relations.refs)."""
    return {link.target.casefold() for link in wikilinks(body)}


@dataclass
class Judgement:
    refusals: list[str] = field(default_factory=list)  # required rules: the write is refused
    warnings: list[str] = field(default_factory=list)  # other violations: the write lands


def _field_lines(name: str, rule: Rule, value: str, refuse: bool) -> tuple[list[str], list[str]]:
    refusals: list[str] = []
    warnings: list[str] = []
    hint = f" {rule.hint}" if rule.hint else ""
    n = len(value)
    if rule.required and not value.strip():
        line = f"The schema requires a {name}; none was given.{hint}"
        (refusals if refuse else warnings).append(line)
        return refusals, warnings
    if rule.min_chars is not None and n < rule.min_chars:
        warnings.append(
            f"The {name} is {n:,} characters, under the schema's minimum of {rule.min_chars:,}; "
            f"add detail.{hint}"
        )
    if rule.max_chars is not None and n > rule.max_chars:
        fix = "shorten it"
        if name == "body" and n > 20000:
            fix = "split it into child articles"
        warnings.append(
            f"The {name} is {n:,} characters, over the schema's maximum of {rule.max_chars:,}; "
            f"{fix}.{hint}"
        )
    return refusals, warnings


def judge(
    schema: Schema, *, created: bool, changed: set[str], values: dict[str, str], refs_changed: bool
) -> Judgement:
    """Judge a write (§7): the fields it changes, plus everything when it creates the article."""
    result = Judgement()
    if schema.error:
        return result
    for name in FIELDS:
        rule = schema.rules.get(name)
        if rule is None or not (created or name in changed):
            continue
        refusals, warnings = _field_lines(name, rule, values.get(name, ""), refuse=True)
        result.refusals += refusals
        result.warnings += warnings
    rel = schema.relations
    if created or refs_changed:
        count = len(references(values.get("body", "")))
        hint = f" {rel.refs_hint}" if rel.refs_hint else ""
        if rel.refs_required and count == 0:
            result.refusals.append(
                "The schema requires the body to reference at least one other article with a "
                f"[[wikilink]]; it references none.{hint}"
            )
        elif rel.refs_min_count is not None and count < rel.refs_min_count:
            result.warnings.append(
                f"The body references {count} article(s), under the schema's minimum of "
                f"{rel.refs_min_count}; link related articles with [[address]].{hint}"
            )
    return result


def violations(
    schema: Schema, values: dict[str, str], refs: Iterable[str] | None = None
) -> list[str]:
    """Every rule the existing article breaks (for reads and checks; never a refusal)."""
    if schema.error:
        return [schema.malformed_line]
    lines: list[str] = []
    for name in FIELDS:
        rule = schema.rules.get(name)
        if rule is None:
            continue
        refusals, warnings = _field_lines(name, rule, values.get(name, ""), refuse=True)
        lines += refusals + warnings
    rel = schema.relations
    if refs is None:
        count = len(references(values.get("body", "")))
    else:
        count = len({target.casefold() for target in refs})
    if rel.refs_required and count == 0:
        lines.append(
            "The schema requires the body to reference another article; it references none."
        )
    elif rel.refs_min_count is not None and count < rel.refs_min_count:
        lines.append(
            f"The body references {count} article(s), under the schema's minimum of "
            f"{rel.refs_min_count}."
        )
    return lines
