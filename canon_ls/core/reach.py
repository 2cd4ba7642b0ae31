"""Articles that apply beyond their own address (SPEC §11.3): a rule imported from another agent
keeps its host's scope as front matter, `applies:` (globs of the files it applies to, `!glob`
to leave some out) or `always: true` (every file). The nearest article never hides such a rule.
pi-canon keeps front matter keys it does not know, so its reading of the store is unchanged.

Globs as the hosts write them: `**` any depth, `*` and `?` within a name, `[abc]`, `{a,b}`; a
glob without '/' matches a name at any depth; a directory covers what lies under it.
"""

from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple


class Reach(NamedTuple):
    always: bool
    include: re.Pattern[str] | None
    exclude: re.Pattern[str] | None


def applies(meta: dict[str, Any]) -> list[str]:
    """The `applies` globs of a front matter (one string or a list)."""
    value = meta.get("applies")
    items = value if isinstance(value, list) else [value]
    return [g.strip() for g in items if isinstance(g, str) and g.strip()]


def always(meta: dict[str, Any]) -> bool:
    """`always: true` (the front matter parser keeps scalars as text)."""
    return str(meta.get("always")).strip().lower() == "true"


def reach_of(meta: dict[str, Any]) -> Reach | None:
    """How far an article applies beyond its address; None: only its address (SPEC §4)."""
    globs, every = applies(meta), always(meta)
    if not every and not globs:
        return None
    include = tuple(g for g in globs if not g.startswith("!"))
    return Reach(every, _union(include), _union(tuple(g[1:] for g in globs if g[:1] == "!")))


def applies_to(reach: Reach, relpath: str) -> bool:
    """Whether the rule applies to this project-relative file."""
    if reach.exclude is not None and reach.exclude.match(relpath):
        return False
    return reach.always or (reach.include is not None and bool(reach.include.match(relpath)))


@functools.lru_cache(maxsize=512)
def _union(globs: tuple[str, ...]) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{glob_regex(g)})" for g in globs)) if globs else None


def glob_regex(glob: str) -> str:
    """One glob as a regular expression matching a whole project-relative path."""
    glob = glob.strip().removeprefix("./").rstrip("/")
    if "/" not in glob:
        glob = "**/" + glob
    out, i, depth = "", 0, 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out, i = out + "(?:[^/]*/)*", i + 3
            continue
        if glob.startswith("**", i):
            out, i = out + ".*", i + 2
            continue
        end = glob.find("]", i + 2) if c == "[" else -1
        if c == "\\" and i + 1 < len(glob):
            out, i = out + re.escape(glob[i + 1]), i + 1
        elif end > 0:
            inner = glob[i + 1 : end]
            out, i = out + "[" + ("^" + inner[1:] if inner[0] in "!^" else inner) + "]", end
        elif c == "{":
            out, depth = out + "(?:", depth + 1
        elif c == "}" and depth:
            out, depth = out + ")", depth - 1
        elif c == "," and depth:
            out += "|"
        else:
            out += {"*": "[^/]*", "?": "[^/]"}.get(c) or re.escape(c)
        i += 1
    return out + "(?:/.*)?\\Z"
