"""Python: `import a.b`, `from a.b import c`."""

from __future__ import annotations

import re
import tomllib
from functools import partial
from pathlib import Path
from typing import Any

from canon_ls.lsp.imports import Found, Lines, Where, facts

EXTENSIONS = (".py", ".pyi")
_NAME = re.compile(r"[A-Za-z_]\w*")
_DOTTED = re.compile(r"\.*[A-Za-z_][\w.]*|\.+")
# The rules: `import a.b, c` (each dotted name), `from a.b import c, d` (the module, and each
# name as a module or else the module), a line of the name list of a `from a.b import (`.
_IMPORT = re.compile(r"^\s*import\s+(?P<names>[^#;]+)")
_FROM = re.compile(r"^\s*from\s+(?P<module>\S+)\s+import\b(?P<names>[^#;]*)")
_OPEN = re.compile(r"^\s*from\s+(?P<module>\S+)\s+import\s*\((?P<names>[^)#]*)$")
_ITEM = r"\s*\w+(?:\s+as\s+\w+)?\s*"
_CONTINUED = re.compile(rf"^(?:{_ITEM},)*(?:{_ITEM})?\)?\s*(#.*)?$")
CANDIDATES = re.compile(r"^[ \t]*(?:import|from)[ \t][^\n(]*(?:\([^)]*)?", re.M)
LOOK_BACK = 50  # lines searched for the `from x import (` a name list belongs to


def imports(where: Where, lines: Lines, n: int, line: str) -> Found:
    if m := _IMPORT.match(line):
        for name in _DOTTED.finditer(line, m.start("names"), m.end("names")):
            if not _alias(line, name):
                yield name.start(), name.end(), partial(_module, where, name.group())
    elif m := _FROM.match(line):
        yield m.start("module"), m.end("module"), partial(_module, where, m.group("module"))
        yield from _names(where, m.group("module"), line, m.start("names"), m.end("names"))
    elif _CONTINUED.match(line):
        for back in range(n - 1, max(-1, n - LOOK_BACK), -1):
            above = lines(back)
            if opened := _OPEN.match(above):
                yield from _names(where, opened.group("module"), line, 0, len(line))
            if opened or not _CONTINUED.match(above) or ")" in above:
                return


def _names(where: Where, module: str, line: str, lo: int, hi: int) -> Found:
    """`c` of `from a.b import c`: the module a.b.c if it is one, else a.b."""
    for name in _NAME.finditer(line, lo, hi):
        if _alias(line, name):
            continue
        joined = module + name.group() if module.endswith(".") else f"{module}.{name.group()}"
        yield name.start(), name.end(), partial(_module, where, joined, module)


def _alias(line: str, name: re.Match[str]) -> bool:
    """`as` or the name after it: what the import is bound to, not what it imports."""
    return name.group() == "as" or line[: name.start()].rstrip().endswith(" as")


def _module(where: Where, dotted: str, otherwise: str = "") -> Path | None:
    """The module `dotted` names, else the one `otherwise` names."""
    level = len(dotted) - len(dotted.lstrip("."))
    parts = [p for p in dotted[level:].split(".") if p]
    if level:
        roots = [where.doc.parents[min(level, len(where.doc.parents)) - 1]]
    else:
        config = where.nearest("pyproject.toml")
        base = config.parent if config else where.project
        declared = facts(config, _declared) if config else None
        roots = list(dict.fromkeys([*(declared or []), base / "src", base, where.project]))
    for root in roots:
        top = [root / parts[0], root / f"{parts[0]}.py", root / f"{parts[0]}.pyi"] if parts else []
        if top and where.first(top) is None:
            continue  # no such top-level package here (the standard library, third-party)
        at = root.joinpath(*parts)
        files = [at.with_name(at.name + ".py"), at.with_name(at.name + ".pyi")] if parts else []
        found = where.first([*files, at])
        if found is not None and (parts or level):
            return found
    return _module(where, otherwise) if otherwise else None


def _declared(text: str, path: Path) -> list[Path]:
    """The package roots a pyproject.toml declares."""
    tool: dict[str, Any] = tomllib.loads(text).get("tool", {})
    base, roots = path.parent, []
    setuptools = tool.get("setuptools", {})
    package_dir = setuptools.get("package-dir", {})
    if isinstance(package_dir, dict) and isinstance(package_dir.get(""), str):
        roots.append(base / package_dir[""])
    find = setuptools.get("packages", {})
    if isinstance(find, dict):
        where = find.get("find", {}).get("where", [])
        roots += [base / w for w in ([where] if isinstance(where, str) else where)]
    hatch = tool.get("hatch", {}).get("build", {}).get("targets", {}).get("wheel", {})
    roots += [(base / p).parent for p in hatch.get("packages", []) if isinstance(p, str)]
    poetry = tool.get("poetry", {}).get("packages", [])
    roots += [base / p.get("from", ".") for p in poetry if isinstance(p, dict)]
    return roots
