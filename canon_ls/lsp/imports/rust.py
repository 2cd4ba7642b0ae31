"""Rust: `mod x;` names x.rs or x/mod.rs in the folder of the declaring module's children
(the file's own folder for mod.rs, lib.rs and main.rs, else a folder named after the file);
`use crate::a::b` (or `self::`, `super::`) names the deepest of a.rs, a/mod.rs, a/b.rs, ...
that exists, from the crate root: src/ beside the nearest Cargo.toml."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

from . import Found, Lines, Where, first

_PUB = r"^\s*(?:pub(?:\([^)]*\))?\s+)?"
RULES = (
    ("mod", re.compile(_PUB + r"mod\s+(?P<path>\w+)\s*;")),
    ("use", re.compile(_PUB + r"use\s+(?P<path>(?:crate|self|super)(?:::\w+)+)")),
)
_ROOTS = ("mod.rs", "lib.rs", "main.rs")


def imports(where: Where, lines: Lines, n: int) -> Found:
    line = lines(n)
    for kind, rule in RULES:
        m = rule.match(line)
        if m is not None:
            yield m.start("path"), m.end("path"), partial(_resolve, where, kind, m.group("path"))


def _resolve(where: Where, kind: str, path: str) -> Path | None:
    doc = where.doc
    children = doc.parent if doc.name in _ROOTS else doc.parent / doc.stem
    if kind == "mod":
        return first([children / f"{path}.rs", children / path / "mod.rs"], folders=False)
    head, *parts = path.split("::")
    if head == "crate":
        cargo = where.nearest("Cargo.toml")
        folder = (cargo.parent if cargo else where.project) / "src"
    else:
        folder = children if head == "self" else children.parent
    for i in range(len(parts), 0, -1):
        at = folder.joinpath(*parts[:i])
        found = first([at.with_name(at.name + ".rs"), at / "mod.rs"], folders=False)
        if found is not None:
            return found
    return None
