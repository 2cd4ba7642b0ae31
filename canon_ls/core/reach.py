"""Articles that apply beyond their own address (SPEC §11.3): a rule imported from another agent
keeps its host's scope as front matter, `applies:` (globs of the files it applies to, `!glob`
to leave some out) or `always: true` (every file). The nearest article never hides such a rule.
pi-canon keeps front matter keys it does not know, so its reading of the store is unchanged.

Globs as the hosts write them: `**` any depth, `*` and `?` within a name, `[abc]`, `{a,b}`; a
glob without '/' matches a name at any depth; a directory covers what lies under it.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

_KEYS = re.compile(rb"^(?:applies|always)[ \t]*:", re.M)


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


def matching(rules: dict[str, Reach], relpath: str) -> list[str]:
    """The addresses of the rules that apply to this project-relative file, in order."""
    return [a for a, r in sorted(rules.items()) if applies_to(r, relpath)]


def on_disk(articles_dir: Path) -> dict[str, Reach]:
    """A store's rules read from its files, for a hook (which keeps no index): a file is
    parsed only when its head names `applies` or `always`; links are not followed."""
    from canon_ls.core.article import parse

    found: dict[str, Reach] = {}
    for root, _, names in os.walk(articles_dir):
        for name in (n for n in names if n.endswith(".md")):
            path = os.path.join(root, name)
            try:
                with open(path, "rb", opener=_no_link) as fh:
                    head = fh.read(4096)
                    if not _KEYS.search(head):
                        continue
                    data = head + fh.read()
            except OSError:
                continue
            address = os.path.relpath(path, articles_dir)[:-3].replace(os.sep, "/")
            rule = reach_of(parse(data, address).meta)
            if rule is not None:
                found[address] = rule
    return found


def _no_link(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))


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
