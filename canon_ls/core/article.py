"""Article files (SPEC §5): parse fast and never raise; render touching only owned keys.

The parser handles the flat `key: value` front matter that canon and most people write (plain,
'single' and "double" quoted scalars, simple block lists) by hand, ten times faster than YAML,
and hands anything else to python-frontmatter over libyaml (every scalar kept as a string).
The renderer edits the front matter line by line, so foreign keys keep their bytes, order and
comments (python-frontmatter's own dump would reorder them).

One module on purpose: the parser and the renderer are the two sides of one front matter
grammar (what `_scalar` reads, `quote` must write), so they change together.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from canon_ls.core.links import Link, link_targets, wikilinks

OWNED = ("capsule", "updated", "scope")


class BodySource(Protocol):
    """Where a lean article's body comes from: its file, read again on demand (core/bodies.py)."""

    def body_of(self, article: Article) -> str: ...


@dataclass(frozen=True, slots=True)
class Article:
    """One parsed article; `problems` says what was wrong with the file, if anything.

    A store keeps its articles lean: no body in memory (at 50k articles the bodies were more
    than half of the server's store), only what hovers, lenses, completion, backlinks and the
    checker ask of every article: the link `targets` and the body's length. `body` is then read
    from the file on demand through `source`. An article parsed on its own (`parse`) holds its
    body in `held`."""

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
        """Every wikilink's target, in order (repeats kept): kept by a lean article, found in
        the body of one parsed on its own (a hook or the search worker never asks)."""
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

    @property
    def links(self) -> list[Link]:
        """The wikilinks with their offsets in the body (read once per call: callers that
        only need where links point use `targets`)."""
        return wikilinks(self.body)


def targets_in(body: str) -> tuple[str, ...]:
    """Every wikilink target of a body, in order, each string shared across articles (the
    same few thousand addresses are linked from everywhere)."""
    if "[[" not in body:
        return ()
    return tuple(sys.intern(target) for target in link_targets(body))


def tags_of(value: object) -> tuple[str, ...]:
    """Front matter tags in Obsidian's forms: a list, or one string of tags separated by
    commas or spaces; a leading '#' is dropped, empties and repeats are skipped."""
    items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            continue
        for part in item.replace(",", " ").split():
            tag = part.lstrip("#")
            if tag and tag not in out:
                out.append(tag)
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# splitting the file


@dataclass
class _Parts:
    head: str  # optional BOM + the opening '---' line
    lines: list[str]  # front matter lines, each with its line ending
    close: str  # the closing '---' or '...' line ('' when unclosed)
    body: str
    body_line: int


def _parts(text: str) -> _Parts | None:
    """Front matter pieces; None when the text does not open with a '---' line.

    Scans only as far as the closing delimiter (the body is never split)."""
    front = _front(text)
    if front is None:
        return None
    head, block, close, body, body_line = front
    pieces = block.split("\n")  # lines end at '\n' only, each kept with its ending
    lines = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return _Parts(head, lines, close, body, body_line)


def _front(text: str) -> tuple[str, str, str, str, int] | None:
    """_Parts without the list of lines: (head, the front matter lines joined, close, body,
    body_line); None when the text does not open with a '---' line. The closing line is the
    first line after the head whose text up to its trailing blanks is '---' or '...': only
    lines starting so are looked at."""
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


# ---------------------------------------------------------------------------------------------
# parsing


class _Fail(Exception):
    pass


_KEY = re.compile(r"[A-Za-z_][\w.-]*[ \t]*:")
_PLAIN_BAD_START = set("[]{},#&*!|>%@`")


def _scalar(val: str) -> str:
    """One flat YAML scalar as a string (quotes removed); _Fail when YAML must decide."""
    if not val:
        return ""
    c = val[0]
    if c == '"':
        if len(val) >= 2 and val.endswith('"'):
            inner = val[1:-1]
            if "\\" not in inner and '"' not in inner:
                return inner
            try:
                got = json.loads(val, strict=False)
            except ValueError:
                raise _Fail from None
            if isinstance(got, str):
                return got
        raise _Fail
    if c == "'":
        if len(val) >= 2 and val.endswith("'"):
            inner = val[1:-1]
            if "'" not in inner.replace("''", ""):
                return inner.replace("''", "'")
        raise _Fail
    if c in _PLAIN_BAD_START or (c in "-?:" and (len(val) == 1 or val[1] in " \t")):
        raise _Fail
    for mark in (" #", "\t#"):
        cut = val.find(mark)
        if cut >= 0:
            val = val[:cut].rstrip()
    if ": " in val or ":\t" in val or val.endswith(":") or "\t" in val:
        raise _Fail
    return val


def _flat(block: str) -> dict[str, Any]:
    """The hand parser for flat front matter; raises _Fail for anything it does not know."""
    if "\t" in block or _UNSAFE.search(block):
        raise _Fail  # tabs, control characters, BOMs, odd line breaks: let YAML judge them
    meta: dict[str, Any] = {}
    list_key: str | None = None
    list_indent = -1
    for raw in block.split("\n"):
        line = raw[:-1] if raw.endswith("\r") else raw
        if "\r" in line:
            raise _Fail
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if line[0] in " \t-":
            body = line.lstrip(" ")
            indent = len(line) - len(body)
            if list_key is None or not (body.startswith("- ") or body == "-"):
                raise _Fail
            if list_indent < 0:
                list_indent = indent
            elif indent != list_indent:
                raise _Fail
            value = _scalar(body[2:].strip())
            current = meta[list_key]
            if not isinstance(current, list):
                current = meta[list_key] = []
            current.append(value)
            continue
        m = _KEY.match(line)
        if not m:
            raise _Fail
        after = line[m.end() :]
        if after and after[0] != " ":
            raise _Fail
        key, value = line[: m.end() - 1].rstrip(" "), after.strip(" ")
        if key in meta:
            raise _Fail
        list_key, list_indent = None, -1
        if not value:
            meta[key] = ""
            list_key = key
        elif value[0] == "[" and value[-1] == "]":
            meta[key] = _flow(value)
        else:
            meta[key] = _scalar(value)
    return meta


# Anything that could make YAML read a flow item differently (quotes, nesting, anchors, tags,
# comments, mapping keys): the flat parser declines and libyaml decides.
_FLOW_BAD = re.compile(r"[\[\]{}#&*!|>%@`\"'?:]")


def _flow(val: str) -> list[str]:
    """A one-line flow list of plain words (`tags: [a, b c]`), as libyaml's BaseLoader reads it;
    _Fail for anything else (40% of real front matter carries such a list, so YAML is costly)."""
    inner = val[1:-1]
    if _FLOW_BAD.search(inner):
        raise _Fail
    if not inner.strip(" "):
        return []
    items = inner.split(",")
    if len(items) > 1 and not items[-1].strip(" "):
        items.pop()  # one trailing comma is allowed
    out: list[str] = []
    for item in items:
        word = item.strip(" ")
        if not word or (word[0] == "-" and (len(word) == 1 or word[1] == " ")):
            raise _Fail
        out.append(word)
    return out


def _yaml(block: str) -> dict[str, Any]:
    """The slow path: python-frontmatter's YAML handler over libyaml's BaseLoader (every
    scalar kept as a string); raises ValueError with a readable reason.

    Imported here, not at module load: the flat parser answers almost every article, and a
    hook process (SPEC §11.3, p50 budget 150 ms) should not pay ~40 ms for the imports.
    """
    import yaml

    loader: Any = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
    try:
        from frontmatter.default_handlers import YAMLHandler

        load: Any = YAMLHandler().load
    except ImportError:  # an environment installed before the dependency: the same YAML
        load = yaml.load
    try:
        data = load(block, Loader=loader)  # BaseLoader builds no objects
    except yaml.YAMLError as exc:
        reason = str(exc).replace("\n", " ")
        reason = re.sub(r"\s+", " ", reason)
        raise ValueError(reason) from None
    except RecursionError:
        # libyaml stops at 1,000 levels; PyYAML's composer recurses per level before that
        # (SPEC §12: deep nesting is a finding, never a crash).
        raise ValueError("the front matter is nested too deeply") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError("the front matter is not a mapping of keys to values")
    return {str(k): v for k, v in data.items()}


def parse_front_matter(block: str) -> dict[str, Any]:
    """Front matter text (between the '---' lines) -> dict of strings/lists/dicts.

    Raises ValueError when it is not valid YAML or not a mapping."""
    try:
        return _shared(_flat(block))
    except _Fail:
        pass
    rest, owned = _owned_apart(block)
    try:
        meta = _flat(rest)
    except _Fail:
        meta = _yaml(rest)
    return _shared({**meta, **owned})


_OWNED_LINE = re.compile(r"(capsule|updated|scope)[ \t]*:(?:[ \t](.*))?")
# what pi-canon quotes when it writes an owned value: anything else it writes plain
_PI_QUOTES = re.compile(r"[:#\[\]{}\"'`,&*!|>%@\\]|^\s|\s$")


def _owned_apart(block: str) -> tuple[str, dict[str, str]]:
    """Read owned keys as pi-canon meant them, the rest of the block left for YAML (so no
    other key is lost): a one-line value pi-canon writes plain although YAML misreads it
    (`capsule: - x`, `capsule: ? x`) is the text after `key: `, and a blank owned line beside
    a non-blank one of the same key (pi-canon carries it along as a foreign line, with the
    indented block under it when there is one) is nothing."""
    lines = block.split("\n")
    found: list[tuple[int, str, str]] = []
    blocks: list[tuple[str, range]] = []  # a blank owned key and the indented lines under it
    for i, line in enumerate(lines):
        m = _OWNED_LINE.fullmatch(line.rstrip("\r"))
        if m and not _continues(next((x for x in lines[i + 1 :] if x.strip()), "")):
            found.append((i, m.group(1), (m.group(2) or "").strip()))
        elif m and not (m.group(2) or "").strip():
            end = i + 1
            while end < len(lines) and (_continues(lines[end]) or not lines[end].strip()):
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
            _scalar(value)
            if _BREAKS.search(value):  # U+2028 & co.: pi-canon writes them plain, YAML breaks
                raise _Fail
        except _Fail:
            if not _PI_QUOTES.search(value):
                apart.add(i)
                owned[key] = one_line(value)
    return "\n".join(x for i, x in enumerate(lines) if i not in apart), owned


DUPLICATE_KEY = "duplicate key: {0} appears more than once; canon reads the non-empty {0}"


def owned_duplicates(block: str) -> list[str]:
    """Owned keys that appear more than once at the top level (a `[duplicate-key]` finding)."""
    if not any(block.count(key) > 1 for key in OWNED):  # the common case, in C
        return []
    seen = [m.group(1) for m in map(_OWNED_LINE.fullmatch, block.split("\n")) if m]
    return sorted({key for key in seen if seen.count(key) > 1})


def without_duplicates(text: str) -> str:
    """The article text with each duplicated owned key once, where it first appears, holding
    the value canon reads (the non-empty one); everything else keeps its bytes."""
    parts = _parts(text)
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


SHARED_CHARS = 32  # keys and values this short (dates, scopes, tags) are one string in memory


def _shared(meta: dict[str, Any]) -> dict[str, Any]:
    """The same front matter with its keys and short values interned: 50k articles repeat
    `capsule`, `updated`, a few hundred dates and tags, each its own string once parsed
    (~13 MB of a 50k-article store)."""
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
    """A body that opens with a front matter block of its own (an agent pasting a whole
    article or entry file), as (the body after it, the block's keys); None for any other
    body. Only a closed block whose text reads as keys counts, so a Markdown rule does not."""
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
    """Parse an article file. Never raises: problems are reported in Article.problems.

    With a `source` the article is lean: its body is not kept but read through the source."""
    problems: list[str]
    if isinstance(data, bytes):
        text, problems = decode(data)
    else:
        text, problems = data, []
    meta: dict[str, Any] = {}
    front, body, body_line = split_front(text)
    if front is not None and not front[1]:
        problems.append('malformed front matter: the opening "---" line is never closed')
    elif front is not None:
        try:
            meta = parse_front_matter(front[0])
        except ValueError as exc:
            problems.append(f"malformed front matter: {exc}")
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
    """The same article without its body in memory (read through `source` when asked), its
    link targets kept."""
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
    """Article(...) without the frozen dataclass's __init__ (a setattr through object per
    field): ~2x cheaper, which counts when a store of 50k articles loads (the parse cache
    builds every article through here)."""
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


def title_of(body: str) -> str:
    """The first '# ' heading at the start of the body (after blank lines), else ''."""
    pos = 0
    while True:
        end = body.find("\n", pos)
        line = body[pos:] if end < 0 else body[pos:end]
        if line.strip():
            return line[2:].strip().rstrip("#").strip() if line.startswith("# ") else ""
        if end < 0:
            return ""
        pos = end + 1


# ---------------------------------------------------------------------------------------------
# rendering

_BREAKS = re.compile(r"[ \t]*(?:\r\n|[\r\n\x85\u2028\u2029])+[ \t]*")
_INDICATORS = set("[]{},#&*!|>'\"%@`")
_KEYWORDS = {"y", "n", "yes", "no", "true", "false", "on", "off", "null", "~", "<<", "=", ""}
# Anything a YAML 1.1 or 1.2 reader could take for a number: a sign or dot, then a digit or an
# underscore (ruamel's 1.2 int and float patterns accept `-_`, `+_`, `._`, and then fail on them).
_NUMBERISH = re.compile(
    r"(?=[-+.0-9])[-+]?(?:\.?[0-9_][0-9a-zA-Z_.:+-]*|\.(?:inf|nan))", re.IGNORECASE
)
_DATEISH = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}")
# Characters YAML readers reject or treat as breaks/BOM: always escaped inside double quotes.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\x85\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]"
)


def one_line(capsule: str) -> str:
    """Collapse every run of line breaks (and the blanks around it) to a single space."""
    return _BREAKS.sub(" ", capsule)


def needs_quotes(value: str) -> bool:
    """True when a plain YAML scalar would not read back as this exact string (1.1 or 1.2)."""
    if not value:
        return True
    first = value[0]
    if first in " \t" or value[-1] in " \t":
        return True
    if first in _INDICATORS:
        return True
    if first in "-?:" and (len(value) == 1 or value[1] in " \t"):
        return True
    if ": " in value or " #" in value or value.endswith(":") or "\t" in value:
        return True
    if value.startswith(("---", "...")):
        return True
    if value.lower() in _KEYWORDS:
        return True
    if _NUMBERISH.fullmatch(value) or _DATEISH.match(value):
        return True
    return bool(_UNSAFE.search(value) or "\n" in value or "\r" in value)


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def quote(value: str) -> str:
    """JSON-style double-quoted YAML scalar, escaping everything a YAML reader could refuse."""
    text = json.dumps(value, ensure_ascii=False)
    return _UNSAFE.sub(lambda m: _escape(m.group(0)), text)


def format_scalar(value: str) -> str:
    """The value as written after 'key: ': plain when safe, else double-quoted."""
    return quote(value) if needs_quotes(value) else value


def _key_spans(lines: list[str], key: str) -> list[tuple[int, int]]:
    """Line spans [start, end) of every top-level occurrence of `key`, continuation included."""
    pattern = re.compile(re.escape(key) + r"[ \t]*:(?:[ \t]|\r?\n|$)")
    spans: list[tuple[int, int]] = []
    n = len(lines)
    i = 0
    while i < n:
        if pattern.match(lines[i]):
            j = i + 1
            while j < n:
                line = lines[j]
                if not line.strip():
                    k = j
                    while k < n and not lines[k].strip():
                        k += 1
                    if k < n and _continues(lines[k]):
                        j = k
                        continue
                    break
                if _continues(line):
                    j += 1
                    continue
                break
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


def _continues(line: str) -> bool:
    return line[:1] in (" ", "\t") or line.startswith("- ") or line.rstrip("\r\n") == "-"


def _set_key(lines: list[str], key: str, new_line: str, after: tuple[str, ...]) -> None:
    """Replace `key`'s line(s) in place, or insert after the last of `after` present (else top)."""
    spans = _key_spans(lines, key)
    if spans:
        for start, end in reversed(spans[1:]):
            del lines[start:end]
        start, end = spans[0]
        lines[start:end] = [new_line]
        return
    at = 0
    for anchor in after:
        anchor_spans = _key_spans(lines, anchor)
        if anchor_spans:
            at = anchor_spans[0][1]
    lines.insert(_past_continuations(lines, at), new_line)


def _past_continuations(lines: list[str], at: int) -> int:
    """Never insert a key right above indented lines: they would become its value."""
    n = len(lines)
    while at < n:
        if _continues(lines[at]):
            at += 1
            continue
        if not lines[at].strip():
            k = at
            while k < n and not lines[k].strip():
                k += 1
            if k < n and _continues(lines[k]):
                at = k + 1
                continue
        break
    return at


def _drop_key(lines: list[str], key: str) -> None:
    for start, end in reversed(_key_spans(lines, key)):
        del lines[start:end]


def render(previous: str | None, *, capsule: str, updated: str, scope: str, body: str) -> str:
    """The new file text. Only capsule/updated/scope lines change; every other front matter
    line keeps its bytes. `body` is written verbatim after the front matter."""
    parts = _parts(previous) if previous else None
    if parts is None or not parts.close:
        head, lines, close, nl = "---\n", [], "---\n", "\n"
    else:
        nl = "\r\n" if parts.head.endswith("\r\n") else "\n"
        head, lines, close = parts.head, list(parts.lines), parts.close
        if not close.endswith("\n") and body:
            close += nl
    capsule = one_line(capsule).strip()  # SPEC §5: trimmed; an empty capsule has no key
    if capsule:
        _set_key(lines, "capsule", f"capsule: {format_scalar(capsule)}{nl}", ())
    else:
        _drop_key(lines, "capsule")
    _set_key(lines, "updated", f"updated: {updated}{nl}", ("capsule",))
    if scope == "rule":
        _set_key(lines, "scope", f"scope: rule{nl}", ("capsule", "updated"))
    else:
        _drop_key(lines, "scope")
    return head + "".join(lines) + close + body


def set_meta(previous: str, key: str, value: str | bool | list[str]) -> str:
    """Set one (non-owned) front matter key, e.g. reviewed: 2026-11-29 or applies: ["*.ts"];
    the rest is untouched."""
    if not isinstance(value, str):
        shown = json.dumps(value, ensure_ascii=False)
    else:
        shown = value if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) else format_scalar(value)
    parts = _parts(previous)
    if parts is None or not parts.close:
        return f"---\n{key}: {shown}\n---\n" + previous
    nl = "\r\n" if parts.head.endswith("\r\n") else "\n"
    lines = list(parts.lines)
    anchors = tuple(k for k in OWNED)
    _set_key(lines, key, f"{key}: {shown}{nl}", anchors)
    close = parts.close if parts.close.endswith("\n") or not parts.body else parts.close + nl
    return parts.head + "".join(lines) + close + parts.body
