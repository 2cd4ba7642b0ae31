"""How to find imports for hover (issue 38): the line rules of canon_ls/lsp/imports against
Python's `ast` on real files. For each .py file under --corpus: which lines `ast` says start an
import statement and which the line rules match (agreement both ways), the time to parse the
whole file with `ast` against the time the rules take on one line (what a hover pays) and on
every line (what document links pay), and how often `ast` cannot parse the file at all once it
is cut at two thirds of its characters (an editor's buffer while typing). Plus the cost of
`imports.on_line` for the name under
the cursor on lines of a generated src-layout project (resolution included: its stats and the
cached pyproject.toml).

usage: python benchmarks/bench_imports.py --corpus .venv/lib/python3.11/site-packages
"""

from __future__ import annotations

import argparse
import ast
import tempfile
import time
from pathlib import Path

from common import pct as percentile

from canon_ls.lsp import imports
from canon_ls.lsp.imports import python


def ast_import_lines(tree: ast.AST) -> set[int]:
    return {
        node.lineno - 1 for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)
    }


def rule_lines(lines: list[str]) -> set[int]:
    rules = (python._IMPORT, python._FROM)  # the rules for a statement's first line
    return {n for n, line in enumerate(lines) if any(r.match(line) for r in rules)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=3000)
    args = parser.parse_args()
    files = sorted(args.corpus.rglob("*.py"))[: args.limit]
    both = only_ast = only_rules = 0
    ast_s = rules_s = 0.0
    line_costs: list[float] = []
    cut_fail = cut_total = 0
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        lines = text.split("\n")
        t = time.perf_counter()
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        ast_s += time.perf_counter() - t
        t = time.perf_counter()
        found = rule_lines(lines)
        rules_s += time.perf_counter() - t
        expected = ast_import_lines(tree)
        both += len(found & expected)
        only_ast += len(expected - found)
        only_rules += len(found - expected)
        for n in sorted(expected)[:3]:
            t = time.perf_counter()
            any(r.match(lines[n]) for r in (python._IMPORT, python._FROM))
            line_costs.append(time.perf_counter() - t)
        if len(lines) > 20:  # the buffer cut at two thirds, as while typing
            cut_total += 1
            try:
                ast.parse(text[: len(text) * 2 // 3])
            except SyntaxError:
                cut_fail += 1
    print(f"files: {len(files)}  import lines by ast: {both + only_ast}")
    print(f"  rules agree on {both}, miss {only_ast}, match {only_rules} that ast does not")
    print(
        f"  whole-file ast.parse: {ast_s * 1000:.0f} ms in all,"
        f" rules on every line {rules_s * 1000:.0f} ms"
    )
    print(
        f"  one line by the rules: p50 {percentile(line_costs, 50) * 1e6:.1f} µs,"
        f" p99 {percentile(line_costs, 99) * 1e6:.1f} µs"
    )
    print(f"  ast on a buffer being typed in: fails {cut_fail}/{cut_total}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        (root / "pyproject.toml").write_text('[project]\nname = "x"\n')
        for rel in ("src/shop/__init__.py", "src/shop/models.py", "src/shop/tax/rates.py"):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text("")
        doc = root / "src/shop/app.py"
        src = [
            "from shop.models import Invoice",
            "import shop.tax.rates as r",
            "from .models import Invoice",
            "import os.path",
            "from requests import get",
            "x = compute(1, 2)",
        ]
        for line in src:
            costs = []
            for _ in range(2000):
                t = time.perf_counter()
                imports.on_line(root, doc, lambda n, line=line: line, 0, line.index(" ") + 2)
                costs.append(time.perf_counter() - t)
            print(
                f"  on_line {line!r}: p50 {percentile(costs, 50) * 1e6:.1f} µs,"
                f" p90 {percentile(costs, 90) * 1e6:.1f} µs,"
                f" p99 {percentile(costs, 99) * 1e6:.1f} µs"
            )


if __name__ == "__main__":
    main()
