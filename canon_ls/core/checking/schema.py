"""schema.json, the store's contract (SPEC §7): load (failing open and loud) and judge writes."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from canon_ls.core.retrieval.links import wikilinks
from canon_ls.core.storage import fsio
from canon_ls.core.storage.address import OutsideStore

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
    """`relations` of schema.json; orphan/children are graph rules enforced by
    core/checking/check.py."""

    refs_required: bool = False
    refs_min_count: int | None = None
    refs_hint: str = ""
    orphan_warn: bool = False
    children_listed: bool = False


@dataclass(frozen=True)
class Schema:
    """A store's schema.json; `Schema()` is none at all: no rules (deleting the file turns
    schema checks off; the advisory lines stay)."""

    rules: dict[str, Rule] = field(default_factory=dict)
    relations: Relations = Relations()
    error: str = ""  # non-empty: schema.json is malformed and nothing is enforced
    present: bool = False
    notes: tuple[str, ...] = ()  # keys ignored alone (unknown or wrong-typed), as sentences

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


_BOOLS = ("required", "warn", "listed")  # `hint` is a string, any other key an integer >= 0
RULE_KEYS = ("required", "min_chars", "max_chars", "hint")
RELATION_KEYS = {
    "refs": ("required", "min_count", "hint"),
    "orphan": ("warn", "hint"),
    "children": ("listed", "hint"),
}


def _typed(key: str, value: Any) -> bool:
    if key == "hint" or key in _BOOLS:
        return isinstance(value, str if key == "hint" else bool)
    whole = isinstance(value, int) or isinstance(value, float) and value.is_integer()
    return whole and not isinstance(value, bool) and value >= 0  # JSON's 1000.0 is 1000 too


def _keys(
    data: Any, where: str, known: Collection[str], notes: list[str], typed: bool = True
) -> dict[str, Any]:
    """The keys of one block that canon enforces; an unknown or wrong-typed key (or a block
    that is not an object) is named in `notes` and ignored alone, so one typo never turns
    the other rules off (pi-canon drops only the rule that is wrong, too)."""
    if not isinstance(data, dict):
        notes.append(f'schema.json: "{where}" must be an object; it is ignored.')
        return {}
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            notes.append(
                f'schema.json: unknown key "{where}.{key}" is ignored (keys: {", ".join(known)}).'
            )
        elif not typed or _typed(key, value):
            out[key] = int(value) if isinstance(value, float) else value
        else:
            want = "a string" if key == "hint" else "an integer >= 0"
            want = "true or false" if key in _BOOLS else want
            notes.append(f'schema.json: "{where}.{key}" must be {want}; it is ignored.')
    return out


def _relations(data: Any, notes: list[str]) -> Relations:
    given = _keys({} if data is None else data, "relations", RELATION_KEYS, notes, typed=False)
    rel = {
        name: _keys(given[name], f"relations.{name}", RELATION_KEYS[name], notes) for name in given
    }
    refs = rel.get("refs", {})
    return Relations(
        refs_required=refs.get("required", False),
        refs_min_count=refs.get("min_count"),
        refs_hint=refs.get("hint", ""),
        orphan_warn=rel.get("orphan", {}).get("warn", False),
        children_listed=rel.get("children", {}).get("listed", False),
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
    if not isinstance(data, dict):
        return Schema(error="the top level must be an object", present=True)
    article = data.get("article") or {}
    if not isinstance(article, dict):
        return Schema(error="article must be an object", present=True)
    notes: list[str] = []
    given = _keys(article, "article", FIELDS, notes, typed=False)
    rules = {
        name: Rule(**_keys(given[name], f"article.{name}", RULE_KEYS, notes)) for name in given
    }
    relations = _relations(data.get("relations"), notes)
    return Schema(rules=rules, relations=relations, present=True, notes=tuple(notes))


def load(path: Path, inside: str | None = None) -> Schema:
    """Read schema.json (a regular file only, at most MAX_BYTES, lying in `inside` when
    given); missing -> the defaults (not present on disk)."""
    try:
        data, truncated = fsio.read_regular(path, MAX_BYTES, inside=inside)
    except FileNotFoundError:
        return Schema()
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
        had = "none was given" if refuse else "the article has none; add one"
        (refusals if refuse else warnings).append(f"The schema requires a {name}; {had}.{hint}")
        return refusals, warnings
    if rule.min_chars is not None and n < rule.min_chars:
        warnings.append(
            f"The {name} is {n:,} characters, under the schema's minimum of {rule.min_chars:,}; "
            f"add detail.{hint}"
        )
    if rule.max_chars is not None and n > rule.max_chars:
        fix = "split it into child articles" if name == "body" and n > 20000 else "shorten it"
        warnings.append(
            f"The {name} is {n:,} characters, over the schema's maximum of {rule.max_chars:,}; "
            f"{fix}.{hint}"
        )
    return refusals, warnings


def judge(
    schema: Schema, *, created: bool, changed: set[str], values: dict[str, str], refs_changed: bool
) -> Judgement:
    """Judge a write (§7): a required rule refuses only for the fields it changes (everything when
    it creates the article); what it leaves broken warns."""
    result = Judgement()
    if schema.error:
        return result
    for name in FIELDS:
        rule = schema.rules.get(name)
        touched = created or name in changed
        if rule is None or not (touched or rule.required and not values.get(name, "").strip()):
            continue
        refusals, warnings = _field_lines(name, rule, values.get(name, ""), refuse=touched)
        result.refusals += refusals
        result.warnings += warnings
    rel = schema.relations
    if created or refs_changed or rel.refs_required:
        count = len(references(values.get("body", "")))
        hint = f" {rel.refs_hint}" if rel.refs_hint else ""
        if rel.refs_required and count == 0:
            (result.refusals if created or refs_changed else result.warnings).append(
                "The schema requires the body to reference at least one other article with a "
                f"[[wikilink]]; it references none.{hint}"
            )
        elif rel.refs_min_count is not None and count < rel.refs_min_count and refs_changed:
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
    body = values.get("body", "")
    count = len(references(body) if refs is None else {t.casefold() for t in refs})
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
