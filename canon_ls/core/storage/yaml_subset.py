"""The YAML subset of front matter (SPEC §5): flat keys read without a YAML library, anything
else handed to PyYAML; `Fail` says YAML must decide."""

from __future__ import annotations

import json
import re
from typing import Any

# Characters YAML readers reject or treat as breaks/BOM: always escaped inside double quotes.
UNSAFE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\x85\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]"
)


class Fail(Exception):
    pass


KEY = re.compile(r"[A-Za-z_][\w.-]*[ \t]*:")
_PLAIN_BAD_START = set("[]{},#&*!|>%@`")


def scalar(val: str) -> str:
    """One flat YAML scalar as a string (quotes removed); Fail when YAML must decide."""
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
                raise Fail from None
            if isinstance(got, str):
                return got
        raise Fail
    if c == "'":
        if len(val) >= 2 and val.endswith("'"):
            inner = val[1:-1]
            if "'" not in inner.replace("''", ""):
                return inner.replace("''", "'")
        raise Fail
    if c in _PLAIN_BAD_START or (c in "-?:" and (len(val) == 1 or val[1] in " \t")):
        raise Fail
    for mark in (" #", "\t#"):
        cut = val.find(mark)
        if cut >= 0:
            val = val[:cut].rstrip()
    if ": " in val or ":\t" in val or val.endswith(":") or "\t" in val:
        raise Fail
    return val


def flat(block: str) -> dict[str, Any]:
    """The hand parser for flat front matter; raises Fail for anything it does not know."""
    if "\t" in block or UNSAFE.search(block):
        raise Fail  # tabs, control characters, BOMs, odd line breaks: let YAML judge them
    meta: dict[str, Any] = {}
    list_key: str | None = None
    list_indent = -1
    for raw in block.split("\n"):
        line = raw[:-1] if raw.endswith("\r") else raw
        if "\r" in line:
            raise Fail
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if line[0] in " \t-":
            body = line.lstrip(" ")
            indent = len(line) - len(body)
            if list_key is None or not (body.startswith("- ") or body == "-"):
                raise Fail
            if list_indent < 0:
                list_indent = indent
            elif indent != list_indent:
                raise Fail
            value = scalar(body[2:].strip())
            current = meta[list_key]
            if not isinstance(current, list):
                current = meta[list_key] = []
            current.append(value)
            continue
        m = KEY.match(line)
        if not m:
            raise Fail
        after = line[m.end() :]
        if after and after[0] != " ":
            raise Fail
        key, value = line[: m.end() - 1].rstrip(" "), after.strip(" ")
        if key in meta:
            raise Fail
        list_key, list_indent = None, -1
        if not value:
            meta[key] = ""
            list_key = key
        elif value[0] == "[" and value[-1] == "]":
            meta[key] = _flow(value)
        else:
            meta[key] = scalar(value)
    return meta


# Anything that could make YAML read a flow item differently (quotes, nesting, anchors, tags,
# comments, mapping keys): the flat parser declines and libyaml decides.
_FLOW_BAD = re.compile(r"[\[\]{}#&*!|>%@`\"'?:]")


def _flow(val: str) -> list[str]:
    """A one-line flow list of plain words (`tags: [a, b c]`), as libyaml's BaseLoader reads it;
    Fail for anything else (40% of real front matter carries such a list, so YAML is costly)."""
    inner = val[1:-1]
    if _FLOW_BAD.search(inner):
        raise Fail
    if not inner.strip(" "):
        return []
    items = inner.split(",")
    if len(items) > 1 and not items[-1].strip(" "):
        items.pop()  # one trailing comma is allowed
    out: list[str] = []
    for item in items:
        word = item.strip(" ")
        if not word or (word[0] == "-" and (len(word) == 1 or word[1] == " ")):
            raise Fail
        out.append(word)
    return out


def _yaml_reason(exc: Exception) -> str:
    """YAML's complaint with its places counted in the article file (the block starts on the line
    after `---`), e.g. `did not find expected ',' or ']' (line 5, column 1)`."""
    parts = []
    for what, mark in (("context", "context_mark"), ("problem", "problem_mark")):
        text, at = getattr(exc, what, None), getattr(exc, mark, None)
        if text:
            parts.append(f"{text} (line {at.line + 2}, column {at.column + 1})" if at else text)
    return re.sub(r"\s+", " ", ", ".join(parts) or str(exc))


def yaml_mapping(block: str) -> dict[str, Any]:
    """The slow path: python-frontmatter's YAML handler over libyaml's BaseLoader (every scalar kept
    as a string); raises ValueError with a readable reason."""
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
        raise ValueError(_yaml_reason(exc)) from None
    except RecursionError:
        # libyaml stops at 1,000 levels; PyYAML's composer recurses per level before that
        # (SPEC §12: deep nesting is a finding, never a crash).
        raise ValueError("the front matter is nested too deeply") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError("the front matter is not a mapping of keys to values")
    return {str(k): v for k, v in data.items()}


BREAKS = re.compile(r"[ \t]*(?:\r\n|[\r\n\x85\u2028\u2029])+[ \t]*")
_INDICATORS = set("[]{},#&*!|>'\"%@`")
_KEYWORDS = {"y", "n", "yes", "no", "true", "false", "on", "off", "null", "~", "<<", "=", ""}
# Anything a YAML 1.1 or 1.2 reader could take for a number (ruamel accepts `-_`, `+_`, `._`)
_NUMBERISH = re.compile(
    r"(?=[-+.0-9])[-+]?(?:\.?[0-9_][0-9a-zA-Z_.:+-]*|\.(?:inf|nan))", re.IGNORECASE
)
_DATEISH = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}")


def continues(line: str) -> bool:
    """Whether a front matter line belongs to the key above it (indented, or a list item)."""
    return line[:1] in (" ", "\t") or line.startswith("- ") or line.rstrip("\r\n") == "-"


def one_line(capsule: str) -> str:
    """Collapse every run of line breaks (and the blanks around it) to a single space."""
    return BREAKS.sub(" ", capsule)


def needs_quotes(value: str) -> bool:
    """True when a plain YAML scalar would not read back as this exact string (1.1 or 1.2)."""
    if not value:
        return True
    first = value[0]
    if first in " \t" or value[-1] in " \t" or first in _INDICATORS:
        return True
    if first in "-?:" and (len(value) == 1 or value[1] in " \t"):
        return True
    if ": " in value or " #" in value or value.endswith(":") or "\t" in value:
        return True
    if value.startswith(("---", "...")) or value.lower() in _KEYWORDS:
        return True
    if _NUMBERISH.fullmatch(value) or _DATEISH.match(value):
        return True
    return bool(UNSAFE.search(value) or "\n" in value or "\r" in value)


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def quote(value: str) -> str:
    """JSON-style double-quoted YAML scalar, escaping everything a YAML reader could refuse."""
    return UNSAFE.sub(lambda m: _escape(m.group(0)), json.dumps(value, ensure_ascii=False))


def format_scalar(value: str) -> str:
    """The value as written after 'key: ': plain when safe, else double-quoted."""
    return quote(value) if needs_quotes(value) else value
