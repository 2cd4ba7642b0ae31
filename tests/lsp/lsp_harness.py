"""Shared pieces of the language-server tests: the demo workspace, client profiles, helpers.

The workspace is a real git repository with a real `.canon/` store; the server is the real
`python -m canon_ls.lsp` process driven by pytest-lsp's client.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

TODAY = "2026-11-29"
FIRST_LINE = "// config loader 🚀 é: reads src/app.ts and src/core/util.py"
CACHE = tempfile.mkdtemp(prefix="canon-ls-test-cache-")
atexit.register(shutil.rmtree, CACHE, ignore_errors=True)  # the servers' caches go with the run
SERVER_ENV = {**os.environ, "CANON_TODAY": TODAY, "XDG_CACHE_HOME": CACHE}
SERVER_COMMAND = [sys.executable, "-m", "canon_ls.lsp"]

PROFILES = ["neovim@0.11", "visual-studio-code", "vscode-modern"]


def busy_search_worker(base: Path) -> dict[str, str]:
    """The server environment whose search worker never gets ready (a `sitecustomize` that
    blocks it for good, as a long index build would)."""
    busy = base / "busy"
    busy.mkdir()
    (busy / "sitecustomize.py").write_text(
        "import select, sys\n"
        "if 'canon_ls.lsp.helpers.searcher' in sys.orig_argv:  # a build that never ends\n"
        "    select.select([], [], [])\n"
    )
    return {
        "PYTHONPATH": os.pathsep.join(p for p in (str(busy), SERVER_ENV.get("PYTHONPATH")) if p)
    }


def capabilities(profile: str) -> types.ClientCapabilities:
    """pytest-lsp's captured profiles, plus a modern VS Code built on the 1.65 capture."""
    if profile != "vscode-modern":
        return client_capabilities(profile)
    caps = client_capabilities("visual-studio-code")
    caps.general = types.GeneralClientCapabilities(
        position_encodings=[types.PositionEncodingKind.Utf16]
    )
    td = caps.text_document
    assert td is not None and caps.workspace is not None
    td.inlay_hint = types.InlayHintClientCapabilities(
        dynamic_registration=True,
        resolve_support=types.ClientInlayHintResolveOptions(properties=["tooltip"]),
    )
    td.diagnostic = types.DiagnosticClientCapabilities(
        dynamic_registration=True, related_document_support=False
    )
    caps.workspace.inlay_hint = types.InlayHintWorkspaceClientCapabilities(refresh_support=True)
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    caps.workspace.code_lens = types.CodeLensWorkspaceClientCapabilities(refresh_support=True)
    caps.workspace.workspace_folders = True
    caps.workspace.did_change_watched_files = types.DidChangeWatchedFilesClientCapabilities(
        dynamic_registration=True, relative_pattern_support=True
    )
    return caps


def folder_params(root: Path, profile: str = "visual-studio-code") -> types.InitializeParams:
    """An `initialize` with `root` as the one workspace folder, from a captured profile."""
    return types.InitializeParams(
        capabilities=client_capabilities(profile),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="proj")],
    )


# -- the workspace --------------------------------------------------------------------------
def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def article(capsule: str, updated: str, body: str, extra: str = "") -> str:
    return f"---\ncapsule: {capsule}\nupdated: {updated}\n{extra}---\n{body}"


def git(root: Path, *args: str, date: str = "2026-06-01T12:00:00") -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def build_workspace(root: Path) -> Path:
    """A project with governed, ungoverned, stale and orphan cases (see the test docstrings)."""
    root.mkdir(parents=True, exist_ok=True)
    write(root, "src/core/config.ts", FIRST_LINE + "\nexport const x = 1;\n")
    write(root, "src/core/util.py", "def util():\n    return 1\n")
    write(root, "src/app.ts", 'import { x } from "./core/config";\n')
    write(root, "docs/readme.md", "# Readme\n\nSee [[src/core/config]] and src/app.ts.\n")
    write(root, "lib/widgets/widget.ts", "export {}\n")
    write(root, "lib/keep.ts", "export {}\n")
    write(
        root,
        ".canon/articles/src.md",
        article(
            "Source root; everything under src.",
            "2026-12-01",
            "# src\n\nSee [[src/core/config]].\n",
        ),
    )
    write(
        root,
        ".canon/articles/src/core/config.md",
        article(
            "Loads layered config; env beats file.",
            "2026-01-01",
            "# Config\n\nResolution order is defaults, then file, then env.\n",
        ),
    )
    write(
        root,
        ".canon/articles/lib/widget.md",
        article(
            "A widget that moved.",
            "2026-12-01",
            "# lib/widget\n\nUses [[src/core/config]] and [[missing/thing]].\n",
        ),
    )
    write(
        root,
        ".canon/journal/2026-01-02-config.md",
        # pi-canon's bytes (SPEC §6 journal): hover, lenses and references read its shape
        "---\nsubject: [src/core/config]\nlogged: 2026-01-02T10:00:00.000Z\nharness: pi\n---\n"
        "Chose env over file.\n",
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


# -- helpers --------------------------------------------------------------------------------
async def poll(
    check: Callable[[], Any], timeout: float, failure: Callable[[], str], every: float = 0.02
) -> Any:
    """Await check() (sync or async) until it is truthy; past timeout, fail with failure()."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(failure())
        await asyncio.sleep(every)


class Session:
    """A started client plus the workspace and the negotiated position encoding."""

    def __init__(self, client: LanguageClient, root: Path, profile: str, encoding: str) -> None:
        self.client = client
        self.root = root
        self.profile = profile
        self.encoding = encoding
        self.versions: dict[str, int] = {}

    # paths and positions
    def uri(self, rel: str) -> str:
        return (self.root / rel).as_uri()

    def col(self, line_text: str, codepoints: int) -> int:
        """Client column for a code-point column, computed independently of pygls."""
        prefix = line_text[:codepoints]
        if self.encoding == "utf-8":
            return len(prefix.encode("utf-8"))
        if self.encoding == "utf-32":
            return len(prefix)
        return len(prefix.encode("utf-16-le")) // 2

    def pos(self, rel: str, line: int, codepoints: int) -> types.Position:
        text = (self.root / rel).read_text(encoding="utf-8").split("\n")[line]
        return types.Position(line=line, character=self.col(text, codepoints))

    def pos_of(self, rel: str, needle: str, offset: int = 1) -> types.Position:
        """Position just inside the first occurrence of `needle`."""
        for n, text in enumerate((self.root / rel).read_text(encoding="utf-8").split("\n")):
            at = text.find(needle)
            if at != -1:
                return types.Position(line=n, character=self.col(text, at + offset))
        raise AssertionError(f"{needle!r} not in {rel}")

    # documents
    def open(self, rel: str, language: str = "plaintext") -> str:
        uri = self.uri(rel)
        self.versions[uri] = 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri,
                    language_id=language,
                    version=1,
                    text=(self.root / rel).read_text(encoding="utf-8", errors="replace"),
                )
            )
        )
        return uri

    def change(self, rel: str, text: str) -> None:
        """Replace an open document's text in the editor (unsaved: the file stays as it is)."""
        uri = self.uri(rel)
        self.versions[uri] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=self.versions[uri]
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def hover(self, rel: str, position: types.Position) -> types.Hover | None:
        return await self.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri(rel)), position=position
            )
        )

    async def inlay(self, rel: str) -> list[types.InlayHint]:
        result = await self.client.text_document_inlay_hint_async(
            types.InlayHintParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri(rel)),
                range=types.Range(
                    start=types.Position(line=0, character=0),
                    end=types.Position(line=5, character=0),
                ),
            )
        )
        return list(result or [])

    async def command(self, name: str, *args: Any) -> Any:
        return await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=list(args))
        )

    async def diagnostics(self, rel: str) -> list[types.Diagnostic]:
        """Current diagnostics of a file: pulled for pull clients, else the last push."""
        uri = self.uri(rel)
        if self.pulls:
            report = await self.client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
            return list(getattr(report, "items", []) or [])
        return list(self.client.diagnostics.get(uri, []))

    @property
    def pulls(self) -> bool:
        return self.profile == "vscode-modern"

    async def until(self, check: Callable[[], Any], timeout: float = 15.0, what: str = "") -> Any:
        """Poll a synchronous or async condition until it is truthy (no event exists for it)."""
        return await poll(check, timeout, lambda: f"timed out waiting for {what or check}")

    async def checked(self, timeout: float = 30.0) -> None:
        """Wait for the startup whole-store check (its work-done progress ends; the symbol
        indexing progress, `canon-index-…`, is another matter)."""

        def ended() -> bool:
            return any(
                any(isinstance(r, types.WorkDoneProgressEnd) for r in reports)
                for token, reports in self.client.progress_reports.items()
                if str(token).startswith("canon-check-")
            )

        await self.until(ended, timeout, "the whole-store check's progress to end")


def text_of(hover: types.Hover | None) -> str:
    assert hover is not None, "expected a hover"
    contents = hover.contents
    assert isinstance(contents, types.MarkupContent)
    return contents.value


def apply_edit(root: Path, edit: types.WorkspaceEdit) -> None:
    """A minimal editor: apply a WorkspaceEdit's text edits and file operations on disk."""
    base = root.as_uri() + "/"

    def path_of(uri: str) -> Path:
        assert uri.startswith(base), uri
        from urllib.parse import unquote

        return root / unquote(uri[len(base) :])

    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            path = path_of(change.text_document.uri)
            text = path.read_text(encoding="utf-8") if path.exists() else ""
            ordered = sorted(
                change.edits,
                key=lambda e: (e.range.start.line, e.range.start.character),
                reverse=True,
            )
            for e in ordered:
                lines = text.splitlines(keepends=True) or [""]

                def offset(p: types.Position, lines: list[str] = lines) -> int:
                    return sum(len(x) for x in lines[: p.line]) + p.character  # ascii columns

                start, end = offset(e.range.start), offset(e.range.end)
                text = text[:start] + e.new_text + text[end:]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        elif isinstance(change, types.CreateFile):
            path = path_of(change.uri)
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                path.write_text("", encoding="utf-8")
        elif isinstance(change, types.RenameFile):
            old, new = path_of(change.old_uri), path_of(change.new_uri)
            assert not new.exists(), f"rename would overwrite {new}"
            new.parent.mkdir(parents=True, exist_ok=True)
            old.rename(new)
        elif isinstance(change, types.DeleteFile):
            path_of(change.uri).unlink(missing_ok=True)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the project except .git, by relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }
