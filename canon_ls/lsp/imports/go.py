"""Go: an import path under the module path of the nearest go.mod, or of a module the nearest
go.work `use`s, names a package folder of that module."""

from __future__ import annotations

import re
from pathlib import Path

from . import Rules, Where, by_rules, facts

EXTENSIONS = (".go",)
# an import spec line: optional `import`, optional alias, the quoted path
_SPEC = re.compile(r'^\s*(?:import\s+)?(?:[\w.]+\s+)?"(?P<path>[^"\s]+)"\s*(?://.*)?$')
CANDIDATES = re.compile(r'^[ \t]*(?:import[ \t]+)?(?:[\w.]+[ \t]+)?"', re.M)
_MODULE = re.compile(r"^\s*module\s+(\S+)", re.M)
_USE = re.compile(r"^\s*use\s+(?:\(([^)]*)\)|(\S+))", re.M)


def _resolve(where: Where, spec: str) -> Path | None:
    modules = []
    work = where.nearest("go.work")
    for folder in (facts(work, _uses) or []) if work else []:
        modules.append((facts(folder / "go.mod", _module), folder))
    mod = where.nearest("go.mod")
    if mod is not None:
        modules.append((facts(mod, _module), mod.parent))
    for name, folder in modules:
        if name and (spec == name or spec.startswith(name + "/")):
            target = folder / spec[len(name) :].lstrip("/")
            if where.first([target]):
                return target
    return None


def _module(text: str, path: Path) -> str | None:
    m = _MODULE.search(text)
    return m.group(1).strip('"') if m else None


def _uses(text: str, path: Path) -> list[Path]:
    text = re.sub(r"//[^\n]*", "", text)
    found = []
    for m in _USE.finditer(text):
        found += [path.parent / d for d in (m.group(1) or m.group(2)).split()]
    return found


RULES: Rules = ((_SPEC, "path", _resolve),)
imports = by_rules(RULES)
