"""SPEC §12 (deep nesting): a `.cursor/rules` tree 1,100 folders deep, committed, degrades to a
sentence in `canon import` (the dry run and --write) and leaves the export checks (`canon export
--check`, `canon check`) answering; never a RecursionError. The rule beside it still imports."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from deep_tree import make_deep, remove_deep

from tests.agent.test_cli import canon

DEEP = 1100


@pytest.mark.timeout(240)
def test_a_deep_rule_tree_is_one_sentence(tmp_path: Path) -> None:
    rules = tmp_path / ".cursor/rules"
    rules.mkdir(parents=True)
    (rules / "style.mdc").write_text("---\nalwaysApply: true\n---\nKeep functions short.\n")
    make_deep(rules, DEEP)
    try:
        subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
        subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
        for args in (("import",), ("import", "--write")):
            run = canon(*args, cwd=tmp_path)
            assert run.code == 0 and "unexpected" not in run.err, (args, run.err)
            deep = [line for line in run.out.splitlines() if line.startswith(".cursor/rules/d/")]
            assert len(deep) == 1 and "levels deep; nothing in it is read" in deep[0], run.out
        assert (tmp_path / ".canon/articles/rules/style.md").is_file()
        for args in (("export", "--check"), ("export", "cursor", "--check"), ("check",)):
            run = canon(*args, cwd=tmp_path)
            assert run.code in (0, 1) and "unexpected" not in run.err, (args, run.err)
    finally:
        remove_deep(rules)
