"""The language server's modules import one way (issue 10): no cycle among `canon_ls.lsp`
modules, counting imports inside functions too (a local import that only hides a cycle is
still one); imports under `if TYPE_CHECKING:` are annotations and do not count."""

from __future__ import annotations

import ast
from pathlib import Path

LSP = Path(__file__).resolve().parents[2] / "canon_ls" / "lsp"


def _module(path: Path) -> str:
    rel = path.relative_to(LSP.parent.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, name: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden.update(id(n) for n in ast.walk(node))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in found if m.startswith("canon_ls.lsp")}


def test_no_import_cycle_in_the_language_server():
    modules = {_module(p): p for p in LSP.rglob("*.py")}
    graph = {
        name: {m for m in _imports(path, name) if m in modules and m != name}
        for name, path in modules.items()
    }
    # packages themselves are not edges of interest (`from . import x` names the package)
    for name in graph:
        graph[name] = {m for m in graph[name] if modules[m].name != "__init__.py"}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt) :] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
