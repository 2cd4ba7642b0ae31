"""TypeScript/JavaScript imports: the specifier of `import … from "x"`, `import "x"`,
`export … from "x"`, `require("x")` and `import("x")`. Relative specifiers resolve against the
document's folder, trying the extensions and `index.*` a bundler tries (and `.ts` for a `.js`
written for it); bare ones through the nearest tsconfig.json/jsconfig.json (`paths`, then
`baseUrl`; comments and trailing commas allowed; `extends` is not followed), then the
workspace packages the project's package.json names (`workspaces`)."""

from __future__ import annotations

import json
import os
import re
from functools import partial
from pathlib import Path
from typing import Any

from . import Found, Lines, Where, facts, first

EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
RULES = (  # each: a specifier in quotes after an import form
    re.compile(
        r"""(?:\bfrom|^\s*import|\bimport\s*\(|\brequire\s*\()\s*(['"])(?P<spec>[^'"]+)\1"""
    ),
)
_JS_TO_TS = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}
_JSONC = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING = re.compile(r'("(?:\\.|[^"\\])*")|,(?=\s*[}\]])')


def imports(where: Where, lines: Lines, n: int) -> Found:
    line = lines(n)
    for rule in RULES:
        for m in rule.finditer(line):
            yield m.start("spec"), m.end("spec"), partial(_resolve, where, m.group("spec"))


def _resolve(where: Where, spec: str) -> Path | None:
    if spec.startswith("."):
        return _module(where.doc.parent / spec)
    config = where.nearest("tsconfig.json", "jsconfig.json")
    options = (facts(config, _options) or {}) if config else {}
    base = config.parent / options.get("baseUrl", ".") if config else where.project
    for pattern, targets in (options.get("paths") or {}).items():
        head, star, tail = pattern.partition("*")
        matched = spec == pattern if not star else spec.startswith(head) and spec.endswith(tail)
        if matched and len(spec) >= len(head) + len(tail):
            middle = spec[len(head) : len(spec) - len(tail)] if star else ""
            for target in targets if isinstance(targets, list) else []:
                found = _module(base / target.replace("*", middle))
                if found is not None:
                    return found
    if "baseUrl" in options and (found := _module(base / spec)) is not None:
        return found
    package = where.project / "package.json"
    names: dict[str, Path] = facts(package, _workspaces) or {}
    scoped = spec.startswith("@")
    name, _, rest = spec.partition("/") if not scoped else _two(spec)
    folder = names.get(name)
    if folder is None:
        return None
    return _module(folder / rest) if rest else folder


def _two(spec: str) -> tuple[str, str, str]:
    scope, _, rest = spec.partition("/")
    name, _, rest = rest.partition("/")
    return f"{scope}/{name}", "/", rest


def _module(base: Path) -> Path | None:
    base = Path(os.path.normpath(base))
    swapped = [base.with_suffix(e) for e in _JS_TO_TS.get(base.suffix, ())]
    files = [base, *swapped, *(base.with_name(base.name + e) for e in EXTENSIONS)]
    return first([*files, *(base / f"index{e}" for e in EXTENSIONS)], folders=False) or first(
        [base]
    )


def _jsonc(text: str) -> Any:
    text = _JSONC.sub(lambda m: m.group(1) or "", text)
    return json.loads(_TRAILING.sub(lambda m: m.group(1) or "", text))


def _options(text: str, path: Path) -> dict[str, Any]:
    options = _jsonc(text).get("compilerOptions") or {}
    return options if isinstance(options, dict) else {}


def _workspaces(text: str, path: Path) -> dict[str, Path]:
    """Workspace package name -> its folder (the globs are expanded when package.json changes)."""
    declared = _jsonc(text).get("workspaces") or []
    if isinstance(declared, dict):
        declared = declared.get("packages") or []
    names = {}
    for pattern in declared if isinstance(declared, list) else []:
        if not isinstance(pattern, str) or pattern.startswith("!"):
            continue
        for folder in sorted(path.parent.glob(pattern.rstrip("/"))):
            data = facts(folder / "package.json", _name)
            if isinstance(data, str):
                names[data] = folder
    return names


def _name(text: str, path: Path) -> Any:
    return _jsonc(text).get("name")
