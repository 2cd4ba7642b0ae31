"""Article files (SPEC §5): parse fast and never raise; render touching only owned keys."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from canon_ls.core.retrieval.links import link_targets
from canon_ls.core.storage import yaml_subset as ys
from canon_ls.core.storage.yaml_subset import one_line

OWNED = ("capsule", "updated", "scope")


class BodySource(Protocol):
    """Where a lean article's body comes from: its file, read again on demand (bodies.py)."""

    def body_of(self, article: Article) -> str: ...


@dataclass(frozen=True, slots=True)
class Article:
    """One parsed article; `problems` says what was wrong with the file, if anything."""

    address: str
    capsule: str = ""
    updated: str = ""
    scope: str = "asset"
    title: str = ""
    held: str | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False)
    problems: tuple[str, ...] = ()
    body_line: int = 0
    mtime_ns: int = 0
    size: int = 0
    kept_targets: tuple[str, ...] | None = None  # `targets`, kept by a lean article
    body_chars: int = 0
    source: BodySource | None = field(default=None, compare=False, repr=False)

    @property
    def body(self) -> str:
        """The body: held, or read from the file now (an edit made since shows at once)."""
        if self.held is not None:
            return self.held
        return self.source.body_of(self) if self.source is not None else ""

    @property
    def targets(self) -> tuple[str, ...]:
        """Every wikilink's target, in order (repeats kept)."""
        if self.kept_targets is not None:
            return self.kept_targets
        return targets_in(self.held) if self.held is not None else ()

    @property
    def reviewed(self) -> str:
        value = self.meta.get("reviewed")
        return value.strip() if isinstance(value, str) else ""

    @property
    def stale_after(self) -> str:
        value = self.meta.get("stale_after")
        return value.strip() if isinstance(value, str) else ""

    @property
    def tags(self) -> tuple[str, ...]:
        """`tags:` as a list or a string (commas or spaces between), '#' dropped, no repeats."""
        return tags_of(self.meta.get("tags"))


def targets_in(body: str) -> tuple[str, ...]:
    """Every wikilink target of a body, in order, each string shared across articles (the
    same few thousand addresses are linked from everywhere)."""
    return tuple(sys.intern(target) for target in link_targets(body)) if "[[" in body else ()


def tags_of(value: object) -> tuple[str, ...]:
    """Obsidian's tags: a list, or one string split on commas or spaces; '#', empties, repeats
    dropped."""
    items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    tags = [p.lstrip("#") for i in items if isinstance(i, str) for p in i.replace(",", " ").split()]
    return tuple(dict.fromkeys(tag for tag in tags if tag))


@dataclass
class Parts:
    head: str  # optional BOM + the opening '---' line
    lines: list[str]  # front matter lines, each with its line ending
    close: str  # the closing '---' or '...' line ('' when unclosed)
    body: str
    body_line: int


def parts_of(text: str) -> Parts | None:
    """Front matter pieces; None when the text does not open with a '---' line."""
    front = _front(text)
    if front is None:
        return None
    head, block, close, body, body_line = front
    pieces = block.split("\n")  # lines end at '\n' only, each kept with its ending
    lines = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return Parts(head, lines, close, body, body_line)


def _front(text: str) -> tuple[str, str, str, str, int] | None:
    """Parts without the list of lines: (head, the front matter lines joined, close, body,
    body_line); None when the text does not open with a '---' line."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    rest = text[len(bom) :] if bom else text
    if not rest.startswith("---"):
        return None
    first_end = rest.find("\n")
    first = rest if first_end < 0 else rest[: first_end + 1]
    if first.rstrip() != "---":
        return None
    pos = len(first)
    if first_end >= 0:
        at = first_end  # the '\n' before each candidate line
        while True:
            dashes, dots = rest.find("\n---", at), rest.find("\n...", at)
            at = dashes if dots < 0 or 0 <= dashes < dots else dots
            if at < 0:
                break
            start = at + 1
            end = rest.find("\n", start)
            line = rest[start:] if end < 0 else rest[start : end + 1]
            if line.rstrip() in ("---", "..."):
                block = rest[pos:start]
                return bom + first, block, line, rest[start + len(line) :], block.count("\n") + 2
            at = start
    return bom + first, rest[pos:], "", "", 1


def parse_front_matter(block: str) -> dict[str, Any]:
    """Front matter text (between the '---' lines) -> dict of strings/lists/dicts."""
    try:
        return _shared(ys.flat(block))
    except ys.Fail:
        pass
    rest, owned = _owned_apart(block)
    try:
        meta = ys.flat(rest)
    except ys.Fail:
        meta = ys.yaml_mapping(rest)
    return _shared({**meta, **owned})


def parse_by_key(block: str) -> tuple[dict[str, Any], list[str]]:
    """Front matter YAML refuses whole, read one top-level key at a time, so a broken line costs
    only its own key, named in the problems; the writers keep that line as it is."""
    chunks: list[list[str]] = [[]]
    for line in block.split("\n"):
        if line[:1] not in ("", " ", "\t", "#") and not ys.continues(line) and chunks[-1]:
            chunks.append([])
        chunks[-1].append(line)
    meta: dict[str, Any] = {}
    problems: list[str] = []
    start = 0  # the chunk's first line in the block: YAML counts from the chunk's
    for chunk in chunks:
        start, at = start + len(chunk), start
        try:
            if ys.continues(next((x for x in chunk if x.strip()[:1] not in ("", "#")), "")):
                raise ValueError("lines under no key: not a mapping of keys to values")
            meta.update(parse_front_matter("\n".join(chunk)))
        except ValueError as exc:
            first = chunk[0]
            key = first.split(":", 1)[0].strip() if ys.KEY.match(first) else repr(first[:20])
            reason = _WHERE.sub("", str(exc))
            reason = _LINE.sub(lambda m: f"(line {int(m[1]) + at},", reason)  # noqa: B023
            problems.append(f"malformed front matter: {key} cannot be read ({reason}); kept as is")
    return meta, problems


_WHERE = re.compile(r' in "<unicode string>"(?:, line \d+, column \d+|, position \d+)?')
_LINE = re.compile(r"\(line (\d+),")


def unreadable(article: Article, key: str) -> bool:
    """The front matter holds `key` but canon cannot read its value (reported, never absent)."""
    if not article.problems:  # most articles (a whole-store check asks this of each one)
        return False
    return any(p.startswith(f"malformed front matter: {key} cannot") for p in article.problems)


_OWNED_LINE = re.compile(r"(capsule|updated|scope)[ \t]*:(?:[ \t](.*))?")
# what pi-canon quotes when it writes a value (owned keys, journal entries): else it writes plain
PI_QUOTES = re.compile(r"[:#\[\]{}\"'`,&*!|>%@\\]|^\s|\s$")


def _owned_apart(block: str) -> tuple[str, dict[str, str]]:
    """Read owned keys as pi-canon meant them (`capsule: - x` is the text after `key: `), the
    rest of the block left for YAML; a blank owned line beside a non-blank one is nothing."""
    lines = block.split("\n")
    found: list[tuple[int, str, str]] = []
    blocks: list[tuple[str, range]] = []  # a blank owned key and the indented lines under it
    for i, line in enumerate(lines):
        m = _OWNED_LINE.fullmatch(line.rstrip("\r"))
        if m and not ys.continues(next((x for x in lines[i + 1 :] if x.strip()), "")):
            found.append((i, m.group(1), (m.group(2) or "").strip()))
        elif m and not (m.group(2) or "").strip():
            end = i + 1
            while end < len(lines) and (ys.continues(lines[end]) or not lines[end].strip()):
                end += 1
            blocks.append((m.group(1), range(i, end)))
    given = {key for _, key, value in found if value}
    apart = {j for key, span in blocks if key in given for j in span}
    owned: dict[str, str] = {}
    for i, key, value in found:
        if not value:
            if key in given:
                apart.add(i)
            continue
        try:
            ys.scalar(value)
            if ys.BREAKS.search(value):  # U+2028 & co.: pi-canon writes them plain, YAML breaks
                raise ys.Fail
        except ys.Fail:
            if not PI_QUOTES.search(value):
                apart.add(i)
                owned[key] = one_line(value)
    return "\n".join("" if i in apart else x for i, x in enumerate(lines)), owned  # lines stay


DUPLICATE_KEY = "duplicate key: {0} appears more than once; canon reads the non-empty {0}"


def owned_duplicates(block: str) -> list[str]:
    """Owned keys that appear more than once at the top level (a `[duplicate-key]` finding)."""
    if not any(block.count(key) > 1 for key in OWNED):  # the common case, in C
        return []
    seen = [m.group(1) for m in map(_OWNED_LINE.fullmatch, block.split("\n")) if m]
    return sorted({key for key in seen if seen.count(key) > 1})


SHARED_CHARS = 32  # keys and values this short (dates, scopes, tags) are one string in memory


def _shared(meta: dict[str, Any]) -> dict[str, Any]:
    """The same front matter with its keys and short values interned (~13 MB at 50k articles)."""
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if isinstance(value, str) and len(value) <= SHARED_CHARS:
            value = sys.intern(value)
        elif isinstance(value, list):
            value = [
                sys.intern(v) if isinstance(v, str) and len(v) <= SHARED_CHARS else v for v in value
            ]
        out[sys.intern(key)] = value
    return out


def decode(data: bytes) -> tuple[str, list[str]]:
    """UTF-8 text from bytes, lossy, plus problems (binary, not UTF-8)."""
    problems: list[str] = []
    if b"\x00" in data:
        problems.append("binary file: it contains NUL bytes, so it is not a text article")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(
            f"not UTF-8 (bad byte at offset {exc.start}); shown with replacement characters"
        )
        text = data.decode("utf-8", errors="replace")
    return text, problems


def split_front(text: str) -> tuple[tuple[str, str] | None, str, int]:
    """((front matter lines joined, close) or None, body, the body's first line): the one
    way to find the body (parse, and the other agents' rule files of rules_formats)."""
    front = _front(text)
    if front is None:
        return None, (text[1:] if text.startswith("\ufeff") else text), 0
    _, block, close, body, body_line = front
    if not close:
        return (block, close), text, 0
    return (block, close), body, body_line


PASTED = "The body began with a front matter block of its own; it was removed"


def without_pasted(body: str) -> tuple[str, dict[str, Any]] | None:
    """A body that opens with a front matter block of its own (an agent pasting a whole article or
    entry file), as (the body after it, the block's keys); None for any other body."""
    front = _front(body)
    if front is None or not front[2]:
        return None
    try:
        meta = parse_front_matter(front[1])
    except ValueError:
        return None
    return (front[3].lstrip("\n"), meta) if meta else None


def body_from(data: bytes) -> str:
    """The body `parse` finds in these bytes (a lean article's body, read again)."""
    return split_front(decode(data)[0])[1]


def parse(
    data: bytes | str,
    address: str,
    mtime_ns: int = 0,
    size: int = 0,
    source: BodySource | None = None,
) -> Article:
    """Parse an article file. Never raises: problems are reported in Article.problems."""
    problems: list[str]
    text, problems = decode(data) if isinstance(data, bytes) else (data, [])
    meta: dict[str, Any] = {}
    front, body, body_line = split_front(text)
    if front is not None and not front[1]:
        problems.append('malformed front matter: the opening "---" line is never closed')
    elif front is not None:
        try:
            meta = parse_front_matter(front[0])
        except ValueError:
            meta, unread = parse_by_key(front[0])
            problems += unread
        problems += [DUPLICATE_KEY.format(key) for key in owned_duplicates(front[0])]
    capsule = meta.get("capsule", "")
    if not isinstance(capsule, str):
        problems.append("malformed front matter: capsule is not a single line of text")
        capsule = ""
    updated = meta.get("updated", "")
    if not isinstance(updated, str):
        problems.append("malformed front matter: updated is not a date")
        updated = ""
    scope = "rule" if meta.get("scope") == "rule" else "asset"
    return make(
        address,
        capsule,
        updated.strip(),
        scope,
        title_of(body),
        None if source is not None else body,
        meta,
        tuple(problems),
        body_line,
        mtime_ns,
        size,
        targets_in(body) if source is not None else None,  # else found when asked
        len(body),
        source,
    )


def lean(article: Article, source: BodySource) -> Article:
    """The same article without its body in memory (read via `source`), its link targets kept."""
    if article.held is None:
        return article
    values = [getattr(article, name) for name in FIELDS]
    values[FIELDS.index("held")], values[-1] = None, source
    values[FIELDS.index("kept_targets")] = article.targets
    return make(*values)


_new = object.__new__


def make(
    address: str,
    capsule: str,
    updated: str,
    scope: str,
    title: str,
    held: str | None,
    meta: dict[str, Any],
    problems: tuple[str, ...],
    body_line: int,
    mtime_ns: int,
    size: int,
    kept_targets: tuple[str, ...] | None,
    body_chars: int,
    source: BodySource | None,
) -> Article:
    """Article(...) without the frozen dataclass's __init__: ~2x cheaper, for loading a store."""
    article = _new(Article)
    _address(article, address)
    _capsule(article, capsule)
    _updated(article, updated)
    _scope(article, scope)
    _title(article, title)
    _held(article, held)
    _meta(article, meta)
    _problems(article, problems)
    _body_line(article, body_line)
    _mtime_ns(article, mtime_ns)
    _size(article, size)
    _kept_targets(article, kept_targets)
    _body_chars(article, body_chars)
    _source(article, source)
    return article


FIELDS = tuple(f.name for f in fields(Article))  # make()'s parameters, in order
# the slots' own setters (a frozen dataclass refuses plain assignment)
(
    _address,
    _capsule,
    _updated,
    _scope,
    _title,
    _held,
    _meta,
    _problems,
    _body_line,
    _mtime_ns,
    _size,
    _kept_targets,
    _body_chars,
    _source,
) = (getattr(Article, name).__set__ for name in FIELDS)


_TITLE = re.compile(r"#\s+(.+)")


def title_of(body: str) -> str:
    """The first line of the body that is not blank, when it is a '#' heading (indented or
    after a tab, as pi-canon reads it too), without closing '#'s; else ''."""
    pos = 0
    while True:
        end = body.find("\n", pos)
        line = body[pos:] if end < 0 else body[pos:end]
        if line.strip():
            m = _TITLE.fullmatch(line.strip())
            return (m.group(1).rstrip("#").strip() or m.group(1)) if m else ""
        if end < 0:
            return ""
        pos = end + 1
