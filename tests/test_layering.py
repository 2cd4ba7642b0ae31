"""SPEC §1 / STYLE: the store core never imports the editor or MCP layers."""

from __future__ import annotations

import ast
import gc
from pathlib import Path

import canon_ls
import canon_ls.core

FORBIDDEN = ("pygls", "lsprotocol", "mcp", "canon_ls.lsp", "canon_ls.agent")


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
    files = sorted(core.glob("*.py"))
    assert files
    bad = [
        f"{f.name} imports {name}"
        for f in files
        for name in _imports(f)
        if any(name == m or name.startswith(m + ".") for m in FORBIDDEN)
    ]
    assert not bad, bad


def test_only_fsio_renames_a_file_into_place() -> None:
    """The one atomic writer (core/fsio.py): no other module renames a temp file over a name
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
