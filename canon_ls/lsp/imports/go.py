"""Go: an import path under a go.mod / go.work module path names a package folder."""

from __future__ import annotations

import re
from pathlib import Path

from canon_ls.lsp.imports import Rules, Where, by_rules, facts

EXTENSIONS = (".go",)
# an import spec line: optional `import`, optional alias, the quoted path
_SPEC = re.compile(r'^\s*(?:import\s+)?(?:[\w.]+\s+)?"(?P<path>[^"\s]+)"\s*(?://.*)?$')
CANDIDATES = re.compile(r'^[ \t]*(?:import[ \t]+)?(?:[\w.]+[ \t]+)?"', re.M)
_MODULE = re.compile(r"^\s*module\s+(\S+)", re.M)
_USE = re.compile(r"^\s*use\s+(?:\(([^)]*)\)|(\S+))", re.M)


def _resolve(where: Where, spec: str) -> Path | None:
    work, mod = where.nearest("go.work"), where.nearest("go.mod")
    for folder in [*((facts(work, _uses) or []) if work else []), *([mod.parent] if mod else [])]:
        name = facts(folder / "go.mod", _module)
        inside = name and (spec + "/").startswith(name + "/")
        if inside and (found := where.first([folder / spec[len(name) :].lstrip("/")])):
            return found
    return None


def _module(text: str, path: Path) -> str | None:
    m = _MODULE.search(text)
    return m.group(1).strip('"') if m else None


def _uses(text: str, path: Path) -> list[Path]:
    uses = _USE.finditer(re.sub(r"//[^\n]*", "", text))
    return [path.parent / d for m in uses for d in (m.group(1) or m.group(2)).split()]


RULES: Rules = ((_SPEC, "path", _resolve),)
imports = by_rules(RULES)
