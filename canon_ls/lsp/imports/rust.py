"""Rust: `mod x;` names x.rs or x/mod.rs where the declaring module's children live."""

from __future__ import annotations

import re
from pathlib import Path

from canon_ls.lsp.imports import Rules, Where, by_rules

EXTENSIONS = (".rs",)
_PUB = r"^\s*(?:pub(?:\([^)]*\))?\s+)?"
CANDIDATES = re.compile(r"^[ \t]*(?:pub\S*[ \t]+)?(?:mod|use)[ \t]", re.M)
_ROOTS = ("mod.rs", "lib.rs", "main.rs")


def _use(where: Where, path: str) -> Path | None:
    head, *parts = path.split("::")
    doc = where.doc
    folder = doc.parent if doc.name in _ROOTS else doc.parent / doc.stem  # its own modules
    if head == "crate":
        cargo = where.nearest("Cargo.toml")
        folder = (cargo.parent if cargo else where.project) / "src"
    elif head == "super":
        folder = folder.parent
    for i in range(len(parts), 0, -1):
        at = folder.joinpath(*parts[:i])
        if found := where.first([at.with_name(at.name + ".rs"), at / "mod.rs"], folders=False):
            return found
    return None


RULES: Rules = (  # `mod x;` is `use self::x`
    (re.compile(_PUB + r"mod\s+(?P<path>\w+)\s*;"), "path", lambda w, x: _use(w, f"self::{x}")),
    (re.compile(_PUB + r"use\s+(?P<path>(?:crate|self|super)(?:::\w+)+)"), "path", _use),
)
imports = by_rules(RULES)
