"""TS/JS: relative specifiers as a bundler tries them; bare ones via tsconfig or packages."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from canon_ls.lsp.imports import Rules, Where, by_rules, facts

EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_SPEC = re.compile(
    r"""(?:\bfrom|^\s*import|\bimport\s*\(|\brequire\s*\()\s*(['"])(?P<spec>[^'"]+)\1"""
)
CANDIDATES = re.compile(r"^.*\b(?:from|import|require)\b", re.M)
_JS_TO_TS = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}
_COMMENT = r"//[^\n]*|/\*.*?\*/"
_JSONC = re.compile(rf'("(?:\\.|[^"\\])*")|{_COMMENT}|,(?=(?:\s|{_COMMENT})*[}}\]])', re.S)
_PACKAGE = re.compile(r"((?:@[^/]+/)?[^/]+)/?(.*)")


def _resolve(where: Where, spec: str) -> Path | None:
    if spec.startswith("."):
        return _module(where, where.doc.parent / spec)
    config = where.nearest("tsconfig.json", "jsconfig.json")
    options = (facts(config, _options) or {}) if config else {}
    base = config.parent / options.get("baseUrl", ".") if config else where.project
    for pattern, targets in (options.get("paths") or {}).items():
        head, star, tail = pattern.partition("*")
        m = re.fullmatch(re.escape(head) + "(.*)" * bool(star) + re.escape(tail), spec)
        middle = m.group(1) if m and star else ""
        for target in targets if m and isinstance(targets, list) else []:
            if found := _module(where, base / str(target).replace("*", middle)):
                return found
    if "baseUrl" in options and (found := _module(where, base / spec)) is not None:
        return found
    names: dict[str, Path] = facts(where.project / "package.json", _workspaces) or {}
    m = _PACKAGE.match(spec)  # `name/rest` or `@scope/name/rest`
    folder = names.get(m.group(1)) if m else None
    if m is None or folder is None:
        return None
    return _module(where, folder / m.group(2)) if m.group(2) else folder


def _module(where: Where, base: Path) -> Path | None:
    base = Path(os.path.normpath(base))
    files = [base, *(base.with_suffix(e) for e in _JS_TO_TS.get(base.suffix, ()))]
    files += [base.with_name(base.name + e) for e in EXTENSIONS]
    files += [base / f"index{e}" for e in EXTENSIONS]
    return where.first(files, folders=False) or where.first([base])


def _jsonc(text: str, path: Path | None = None) -> dict[str, Any]:
    """JSON with comments and trailing commas (tsconfig.json's dialect); {} for a non-object."""
    value = json.loads(_JSONC.sub(lambda m: m.group(1) or "", text))
    return value if isinstance(value, dict) else {}


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
            name = (facts(folder / "package.json", _jsonc) or {}).get("name")
            if isinstance(name, str):
                names[name] = folder
    return names


RULES: Rules = ((_SPEC, "spec", _resolve),)
imports = by_rules(RULES)
