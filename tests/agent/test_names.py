"""One name per thing (issue 27 item 10): `canon` (the store, the command, the plugin) in lower
case wherever a user reads it, `canon-ls` for the project, package, server and extensions; no
"Canon" in the VS Code extension's names and messages or in the docs (Vim's :Canon… commands,
which must start with a capital, aside)."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CAPITAL = re.compile(r"\bCanon\b(?![A-Za-z])")
ALLOWED = re.compile(r":Canon[A-Z]|Canon(?:Open|Journal)|CanonLanguageServer|CanonProtocol")


def test_the_extension_names_itself_canon_ls_and_its_commands_canon() -> None:
    manifest = json.loads((ROOT / "editors/vscode/package.json").read_text("utf-8"))
    assert manifest["name"] == manifest["displayName"] == "canon-ls"
    categories = {c["category"] for c in manifest["contributes"]["commands"]}
    assert categories == {"canon"}


def test_no_capitalised_canon_where_a_user_reads() -> None:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    files += sorted((ROOT / "editors").glob("*/README.md"))
    files += sorted((ROOT / "editors/vscode/src").glob("*.ts"))
    files += [ROOT / "editors/vscode/package.json"]
    found = []
    for path in files:
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if CAPITAL.search(ALLOWED.sub("", line)):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert not found, "\n".join(found)
