"""SPEC §10 hover: an import written in the language's own syntax names the project module it
imports, and hover shows that module's governing article as for any path token; the same
resolution gives a document link on the import and, when `inlayHints.imports` is on (off by
default), an inlay hint after it. Anything outside the project (the standard library,
third-party packages) answers nothing (issue 38)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import Session, article, build_workspace, git, text_of, write
from lsprotocol import types

PY = "src/invoicer/app.py"
TS = "web/src/app.ts"
GO = "gosvc/main.go"
GO_WORK = "gows/cmd/main.go"
RS = "rs/src/lib.rs"
RS_CHILD = "rs/src/tax.rs"

ARTICLES = {
    "src/invoicer/models": "Invoice models.",
    "src/invoicer/tax": "Tax rules.",
    "src/plugins/csv_export": "CSV export plugin.",
    "billing/ledger": "Ledger postings.",
    "svc/lib/payroll/run": "Payroll run.",
    "svc_hatch/code/shop/cart": "Shopping cart.",
    "svc_poetry/lib/pay/card": "Card payments.",
    "svc_dir/python/mail/send": "Mail sending.",
    "web/src/tax": "Tax rates.",
    "web/src/lib/money": "Money formatting.",
    "web/src/util": "Small utilities.",
    "web/src/esm": "An ES module.",
    "packages/ui": "Shared UI kit.",
    "gosvc/internal/tax": "Go tax package.",
    "gows/api/routes": "API routes.",
    "rs/src/tax": "Rust tax module.",
    "rs/src/tax/inner": "Inner tax helpers.",
    "rs/src/net": "Networking.",
    "rs/src/net/http": "HTTP client.",
}

FILES = {
    # Python: a src layout (with a namespace package), a plain package at the root, and a
    # subproject whose pyproject.toml declares its package root.
    "src/invoicer/__init__.py": "",
    "src/invoicer/models.py": "class Invoice: ...\n",
    "src/invoicer/tax.py": "def total(): ...\n",
    "src/plugins/csv_export.py": "def export(): ...\n",
    "billing/__init__.py": "",
    "billing/ledger.py": "def post(): ...\n",
    "svc/pyproject.toml": '[tool.setuptools.packages.find]\nwhere = ["lib"]\n',
    "svc/lib/payroll/__init__.py": "",
    "svc/lib/payroll/run.py": "def go(): ...\n",
    "svc/lib/payroll/cli.py": "from payroll.run import go\n",
    "svc_hatch/pyproject.toml": '[tool.hatch.build.targets.wheel]\npackages = ["code/shop"]\n',
    "svc_hatch/code/shop/cart.py": "",
    "svc_hatch/main.py": "import shop.cart\n",
    "svc_poetry/pyproject.toml": '[tool.poetry]\npackages = [{include = "pay", from = "lib"}]\n',
    "svc_poetry/lib/pay/card.py": "",
    "svc_poetry/run.py": "from pay.card import charge\n",
    "svc_dir/pyproject.toml": '[tool.setuptools]\npackage-dir = {"" = "python"}\n',
    "svc_dir/python/mail/send.py": "",
    "svc_dir/tool.py": "import mail.send as send\n",
    PY: '"""The app."""\n'
    "import invoicer.models\n"
    "import invoicer.tax as tx\n"
    "from invoicer.models import Invoice\n"
    "from invoicer import tax\n"
    "from . import models\n"
    "from .tax import total\n"
    "from ..plugins import csv_export\n"
    "import plugins.csv_export\n"
    "from billing.ledger import post\n"
    "from invoicer import (\n"
    "    Invoice,\n"
    "    tax as levy,\n"
    ")\n"
    "import os.path\n"
    "from requests import get\n",
    # TypeScript: relative specifiers, tsconfig baseUrl and paths, a workspace package.
    "web/tsconfig.json": "{\n  // comments and trailing commas, as tsc allows\n"
    '  "compilerOptions": {\n    "baseUrl": "src",\n    "paths": { "@lib/*": ["lib/*"], },\n'
    "  },\n}\n",
    "web/src/tax.ts": "export const rate = 1;\n",
    "web/src/lib/money.tsx": "export const fmt = 1;\n",
    "web/src/util/index.ts": "export const pad = 1;\n",
    "web/src/esm.ts": "export const now = 1;\n",
    "package.json": '{"name": "root", "workspaces": ["packages/*"]}\n',
    "packages/ui/package.json": '{"name": "@acme/ui"}\n',
    "packages/ui/index.ts": "export const Button = 1;\n",
    TS: 'import { rate } from "./tax";\n'
    'import { fmt } from "@lib/money";\n'
    'import { pad } from "./util";\n'
    'import { now } from "./esm.js";\n'
    'import { Button } from "@acme/ui";\n'
    'import * as baseTax from "tax";\n'
    'import React from "react";\n',
    # Go: a module, and a go.work using another one.
    "gosvc/go.mod": "module example.com/shop\n\ngo 1.22\n",
    "gosvc/internal/tax/tax.go": "package tax\n",
    GO: 'package main\n\nimport (\n\t"fmt"\n\ttx "example.com/shop/internal/tax"\n)\n',
    "gows/go.work": "go 1.22\n\nuse (\n\t./api // the API module\n)\n",
    "gows/api/go.mod": "module example.com/api\n",
    "gows/api/routes/routes.go": "package routes\n",
    GO_WORK: 'package main\n\nimport "example.com/api/routes"\n',
    # Rust: a crate with mod declarations and use crate:: paths.
    "rs/Cargo.toml": '[package]\nname = "rs"\n',
    RS: "mod tax;\npub mod net;\nuse crate::net::http::get;\nuse std::io;\n",
    RS_CHILD: "mod inner;\nuse super::net;\n",
    "rs/src/tax/inner.rs": "",
    "rs/src/net/mod.rs": "pub mod http;\n",
    "rs/src/net/http.rs": "pub fn get() {}\n",
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = build_workspace(tmp_path / "proj")
    for rel, text in FILES.items():
        write(root, rel, text)
    for address, capsule in ARTICLES.items():
        write(root, f".canon/articles/{address}.md", article(capsule, "2026-12-01", "# x\n"))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "imports")
    return root


def position(s: Session, rel: str, line_needle: str, word: str) -> types.Position:
    """Just inside `word` on the first line of `rel` holding `line_needle`."""
    lines = (s.root / rel).read_text(encoding="utf-8").split("\n")
    n = next(i for i, line in enumerate(lines) if line_needle in line)
    at = lines[n].index(word, lines[n].index(line_needle)) + 1
    return types.Position(line=n, character=s.col(lines[n], at))


async def check(s: Session, rel: str, cases: list[tuple[str, str, str | None]]) -> None:
    """Each (line, word on it, capsule the hover shows or None for no hover)."""
    s.open(rel)
    wrong = []
    for line, word, capsule in cases:
        hover = await s.hover(rel, position(s, rel, line, word))
        if capsule is None and hover is not None:
            wrong.append(f"{line!r} on {word!r}: expected no hover, got {text_of(hover)!r}")
        elif capsule is not None and (hover is None or capsule not in text_of(hover)):
            got = text_of(hover) if hover is not None else None
            wrong.append(f"{line!r} on {word!r}: expected {capsule!r}, got {got!r}")
    assert not wrong, "\n".join(wrong)


async def test_python_imports_hover_the_module_they_import(s: Session) -> None:
    """`import a.b`, `import a.b as c`, `from a.b import c` (c a module or a name), relative
    `from . import x` and `from ..a import b`, a parenthesised name list; package roots from
    the src layout, a plain package at the root, a namespace package (no __init__.py) and a
    pyproject.toml's setuptools `packages.find.where` and `package-dir`, hatch's and poetry's
    `packages`; the standard library and third-party answer nothing."""
    await check(
        s,
        PY,
        [
            ("import invoicer.models", "models", "Invoice models."),
            ("import invoicer.tax as tx", "invoicer", "Tax rules."),
            ("from invoicer.models import Invoice", "invoicer", "Invoice models."),
            ("from invoicer.models import Invoice", "Invoice", "Invoice models."),
            ("from invoicer import tax", "tax", "Tax rules."),
            ("from . import models", "models", "Invoice models."),
            ("from .tax import total", ".tax", "Tax rules."),
            ("from ..plugins import csv_export", "csv_export", "CSV export plugin."),
            ("import plugins.csv_export", "plugins", "CSV export plugin."),
            ("from billing.ledger import post", "billing", "Ledger postings."),
            ("    tax as levy,", "tax", "Tax rules."),
            ("import os.path", "os", None),
            ("from requests import get", "requests", None),
        ],
    )
    for rel, line, word, capsule in [
        ("svc/lib/payroll/cli.py", "from payroll.run import go", "payroll", "Payroll run."),
        ("svc_hatch/main.py", "import shop.cart", "cart", "Shopping cart."),
        ("svc_poetry/run.py", "from pay.card import charge", "card", "Card payments."),
        ("svc_dir/tool.py", "import mail.send as send", "mail", "Mail sending."),
    ]:
        await check(s, rel, [(line, word, capsule)])


async def test_typescript_imports_hover_the_module_they_import(s: Session) -> None:
    """Relative specifiers without extension (`.ts`, `.tsx`, `index.ts`, `.js` written for a
    `.ts` file), tsconfig `paths` and `baseUrl` (with comments and trailing commas), a
    workspace package named in package.json; a third-party package answers nothing."""
    await check(
        s,
        TS,
        [
            ('from "./tax"', "./tax", "Tax rates."),
            ('from "@lib/money"', "@lib/money", "Money formatting."),
            ('from "./util"', "./util", "Small utilities."),
            ('from "./esm.js"', "./esm.js", "An ES module."),
            ('from "@acme/ui"', "@acme/ui", "Shared UI kit."),
            ('from "tax"', '"tax', "Tax rates."),
            ('from "react"', "react", None),
        ],
    )


async def test_go_imports_hover_the_package_they_import(s: Session) -> None:
    """An import path under go.mod's module path, and under a module go.work uses; the
    standard library answers nothing."""
    await check(
        s,
        GO,
        [
            ('"example.com/shop/internal/tax"', "internal", "Go tax package."),
            ('"fmt"', "fmt", None),
        ],
    )
    await check(s, GO_WORK, [('"example.com/api/routes"', "routes", "API routes.")])


async def test_rust_mod_and_use_hover_the_module_they_name(s: Session) -> None:
    """`mod x;` (x.rs, x/mod.rs; beside lib.rs, in the folder named after a non-root file),
    `use crate::a::b` (the deepest module file that exists) and `use super::x`; `use std::`
    answers nothing."""
    await check(
        s,
        RS,
        [
            ("mod tax;", "tax", "Rust tax module."),
            ("pub mod net;", "net", "Networking."),
            ("use crate::net::http::get;", "http", "HTTP client."),
            ("use std::io;", "std", None),
        ],
    )
    await check(
        s,
        RS_CHILD,
        [("mod inner;", "inner", "Inner tax helpers."), ("use super::net;", "net", "Networking.")],
    )


async def test_import_hover_is_ranged_on_the_import(s: Session) -> None:
    """The hover's range is the module name as written."""
    s.open(PY)
    hover = await s.hover(PY, position(s, PY, "from .tax import total", ".tax"))
    assert hover is not None and hover.range is not None
    line = "from .tax import total"
    assert hover.range.start == types.Position(line=6, character=s.col(line, 5))
    assert hover.range.end == types.Position(line=6, character=s.col(line, 9))


async def test_imports_are_document_links_to_their_articles(s: Session) -> None:
    """textDocument/documentLink: each import naming a governed module links to its article."""
    s.open(TS)
    links = await s.client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(uri=s.uri(TS)))
    )
    got = {(link.range.start.line, link.target) for link in links or []}
    articles = s.root / ".canon/articles"
    assert (0, (articles / "web/src/tax.md").as_uri()) in got
    assert (4, (articles / "packages/ui.md").as_uri()) in got
    assert not any(line == 6 for line, _ in got)  # react


async def test_import_inlay_hints_are_off_by_default_and_follow_the_setting(s: Session) -> None:
    """`inlayHints.imports` (default false): a hint after each import naming a governed module."""
    s.open(RS)
    assert await s.inlay(RS) == []  # no article governs lib.rs itself; imports are off
    s.client.set_configuration({"inlayHints": {"imports": True}}, section="canon")
    s.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))

    async def labels() -> list[str]:
        return [str(h.label) for h in await s.inlay(RS)]

    got = await s.until(labels, what="import inlay hints")
    assert got[:2] == ["rs/src/tax: Rust tax module.", "rs/src/net: Networking."]
    hint = (await s.inlay(RS))[0]
    assert hint.position == types.Position(line=0, character=len("mod tax"))
