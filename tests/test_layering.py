"""SPEC §1 / STYLE: the store core never imports the editor or MCP layers."""

from __future__ import annotations

import ast
import gc
from pathlib import Path

import canon_ls
import canon_ls.core

FORBIDDEN = ("pygls", "lsprotocol", "mcp", "canon_ls.lsp", "canon_ls.agent", "canon_ls.formats")


def _tree(path: Path) -> ast.Module:
    # CPython 3.11 (before 3.11.8) may fail ast.parse with "AST constructor recursion depth
    # mismatch" when a finalizer runs mid-parse (seen at the end of the whole suite: an
    # asyncio subprocess transport collected during the parse). Collect first, parse without GC.
    gc.collect()
    gc.disable()
    try:
        return ast.parse(path.read_text(encoding="utf-8"), str(path))
    finally:
        gc.enable()


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_spec_1_core_has_no_adapter_imports() -> None:
    core = Path(canon_ls.core.__file__).parent
    files = sorted(core.rglob("*.py"))
    assert files
    bad = [
        f"{f.relative_to(core)} imports {name}"
        for f in files
        for name in _imports(f)
        if any(name == m or name.startswith(m + ".") for m in FORBIDDEN)
    ]
    assert not bad, bad


def test_only_fsio_renames_a_file_into_place() -> None:
    """The one atomic writer (core/storage/fsio.py): no other module renames a temp file over a name
    itself, so the temp name, the sweep and the fsyncs have one home (docs/ARCHITECTURE.md)."""
    package = Path(canon_ls.__file__).parent
    bad = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "fsio.py":
            continue
        for node in ast.walk(_tree(path)):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in ("replace", "rename", "renames")
                and isinstance(node.value, ast.Name)
                and node.value.id == "os"
            ):
                bad.append(f"{path.relative_to(package)}:{node.lineno} os.{node.attr}")
    assert not bad, bad


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_uses_another_modules_private_names() -> None:
    """A `_name` belongs to its module (issue 26): what modules share has a public name, so no
    `from canon_ls.x import _y` (one line or several) and no `x._y` on an imported module."""
    package = Path(canon_ls.__file__).parent
    modules = {
        ".".join(("canon_ls", *p.relative_to(package).with_suffix("").parts)).removesuffix(
            ".__init__"
        )
        for p in package.rglob("*.py")
    }
    bad = []
    for path in sorted(package.rglob("*.py")):
        here = ".".join(("canon_ls", *path.relative_to(package).with_suffix("").parts))
        parts = here.split(".")[: None if path.name == "__init__.py" else -1]
        tree, aliases = _tree(path), {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                up = parts[: len(parts) - node.level + 1] if node.level else []
                base = ".".join([*up, *([node.module] if node.module else [])])
                for alias in node.names:
                    if f"{base}.{alias.name}" in modules:
                        aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
                    elif _private(alias.name) and base.startswith("canon_ls"):
                        bad.append(f"{here}: from {base} import {alias.name}")
            elif isinstance(node, ast.Import):
                aliases.update({a.asname: a.name for a in node.names if a.asname})
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                module = aliases.get(node.value.id)
                if module in modules and module != here and _private(node.attr):
                    bad.append(f"{here}:{node.lineno} {module}.{node.attr}")
    assert not bad, bad
