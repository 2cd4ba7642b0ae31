"""Articles that apply beyond their own address (SPEC §11.3): `applies:` (globs, `!glob` leaves
some out) or `always: true`, never hidden by the nearest article (pi-canon keeps unknown keys).
Globs as hosts write them: `**`, `*`, `?`, `[abc]`, `{a,b}`; without '/' a name at any depth."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import time
from pathlib import Path
from typing import Any, NamedTuple

from canon_ls.core.storage import freshness, fsio
from canon_ls.core.storage.freshness import RACY_NS

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


def always(meta: dict[str, Any], key: str = "always") -> bool:
    """`always: true` (the front matter parser keeps scalars as text; YAML gives a bool)."""
    return str(meta.get(key)).strip().lower() == "true"


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


def on_disk(articles_dir: Path, cache: Path | None = None) -> dict[str, Reach]:
    """A store's rules from its files, for a hook: kept in `cache` with the stat of every folder
    and rule file, so the articles are read again only when those changed (freshness.RACY_NS)."""
    from canon_ls.core.storage.article import parse

    now = time.time_ns()
    with contextlib.suppress(OSError, ValueError, AttributeError, TypeError, KeyError):
        kept = json.loads(cache.read_bytes())  # type: ignore[union-attr]
        stamps = {p: m.pop("stamp") for p, m in kept["rules"].items()} | kept["folders"]
        if all(
            _stamp(p) == k and max(k[0], k[3]) < kept["at"] - RACY_NS for p, k in stamps.items()
        ):  # no folder gained or lost a file (or folder), no rule file changed
            return _by_address(articles_dir, kept["rules"])
    folders, files = {}, []
    for root, _, names in os.walk(articles_dir):
        folders[root] = _stamp(root)
        files += [os.path.join(root, n) for n in names if n.endswith(".md")]
    metas: dict[str, dict[str, Any]] = {}
    for path in files:
        with contextlib.suppress(OSError, ValueError):
            data, _ = fsio.read_regular(path, 1_000_000, inside=os.path.realpath(articles_dir))
            meta = parse(data, "").meta if _KEYS.search(data) else {}
            if reach_of(meta) is not None:
                metas[path] = {"applies": applies(meta), "always": always(meta)}
                metas[path]["stamp"] = _stamp(path)
    with contextlib.suppress(OSError, AttributeError):  # no cache: read again next time
        cache.parent.mkdir(parents=True, exist_ok=True)  # type: ignore[union-attr]
        kept = {"at": now, "folders": folders, "rules": metas}
        fsio.atomic_write(cache, json.dumps(kept).encode(), durable=False)  # type: ignore[arg-type]
    return _by_address(articles_dir, metas)


def _stamp(path: str) -> list[int]:
    try:
        return list(freshness.key(os.lstat(path)))
    except OSError:
        return [0, 0, 0, 0]


def _by_address(articles_dir: Path, metas: dict[str, dict[str, Any]]) -> dict[str, Reach]:
    found = {os.path.relpath(p, articles_dir)[:-3]: reach_of(m) for p, m in metas.items()}
    return {a.replace(os.sep, "/"): r for a, r in found.items() if r is not None}


def applies_to(reach: Reach, relpath: str) -> bool:
    """Whether the rule applies to this project-relative file."""
    if reach.exclude is not None and reach.exclude.match(relpath):
        return False
    return reach.always or (reach.include is not None and bool(reach.include.match(relpath)))


@functools.lru_cache(maxsize=512)
def _union(globs: tuple[str, ...]) -> re.Pattern[str] | None:
    try:
        return re.compile("|".join(f"(?:{glob_regex(g)})" for g in globs)) if globs else None
    except re.error:  # a glob no host could read either (`[a\\]`): it matches nothing
        return None


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
        end = glob.find("]", i + 2) if c == "[" and glob[i + 1 : i + 2] not in "!^" else -1
        end = glob.find("]", i + 3) if c == "[" and end < 0 else end
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
    return out + ")" * depth + "(?:/.*)?\\Z"
