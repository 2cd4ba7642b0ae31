"""Users never see the specification: the README, the user docs and the editor READMEs stand
alone (issue 14: help text, messages and docs never point to a file users do not have)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
USER_DOCS = [
    "README.md",
    "docs/FORMAT.md",
    "docs/GETTING-STARTED.md",
    "docs/EDITORS.md",
    "docs/LSP.md",
    "docs/AGENTS.md",
    "editors/vscode/README.md",
    "editors/neovim/README.md",
]


@pytest.mark.parametrize("doc", USER_DOCS)
def test_user_docs_never_cite_the_specification(doc: str) -> None:
    text = (ROOT / doc).read_text("utf-8")
    assert "SPEC" not in text and "§" not in text, doc
