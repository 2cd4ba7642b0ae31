"""What an editor shows over the demo store, through a real LSP client and the real `canon-ls`.

Copies examples/demo to a temporary directory (pinned clock and source mtimes, as tour.py
does), starts the language server over stdio with pygls' LanguageClient, and prints for a few
files what VS Code or Neovim would display: hover on line 1, the inlay hint, the code lens,
diagnostics and the code action titles. Nothing in examples/demo is modified.

    .venv/bin/python examples/editor_tour.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tour import TODAY, prepare  # noqa: E402  (the CLI tour's pinned copy of the demo)

FILES = [
    "src/core/config.py",  # its own article
    "src/feed/__init__.py",  # governed by the ancestor src/feed
    "src/feed/fetch.py",  # its article is stale (stale_after passed): hint + "Mark reviewed"
    "tests/test_parse.py",  # no article at all
    ".canon/articles/src/feed/legacy_atom.md",  # an article: its own diagnostics
]

CAPABILITIES = types.ClientCapabilities(
    general=types.GeneralClientCapabilities(position_encodings=["utf-16"]),
    window=types.WindowClientCapabilities(work_done_progress=True),
    workspace=types.WorkspaceClientCapabilities(
        configuration=True, workspace_folders=True, apply_edit=True
    ),
    text_document=types.TextDocumentClientCapabilities(
        hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
        inlay_hint=types.InlayHintClientCapabilities(),
        code_lens=types.CodeLensClientCapabilities(),
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(),
        code_action=types.CodeActionClientCapabilities(
            code_action_literal_support=types.ClientCodeActionLiteralOptions(
                code_action_kind=types.ClientCodeActionKindOptions(value_set=["quickfix"])
            )
        ),
    ),
)


class Editor:
    """A tiny editor: records what the server pushes, answers what it asks."""

    def __init__(self) -> None:
        self.client = LanguageClient("editor-tour", "1")
        self.diagnostics: dict[str, list[types.Diagnostic]] = {}
        self.checked = asyncio.Event()
        client = self.client

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(ls: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = list(params.diagnostics)

        @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def on_progress_create(ls: LanguageClient, params: Any) -> None:
            return None

        @client.feature(types.PROGRESS)
        def on_progress(ls: LanguageClient, params: types.ProgressParams) -> None:
            if isinstance(params.value, dict) and params.value.get("kind") == "end":
                self.checked.set()

        @client.feature(types.WORKSPACE_CONFIGURATION)
        def on_configuration(ls: LanguageClient, params: types.ConfigurationParams) -> list[Any]:
            return [None for _ in params.items]

        @client.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(ls: LanguageClient, params: types.LogMessageParams) -> None:
            return None


async def tour(project: Path) -> None:
    editor = Editor()
    client = editor.client
    env = dict(os.environ, CANON_TODAY=TODAY)
    await client.start_io(sys.executable, "-m", "canon_ls.lsp", env=env, cwd=str(project))
    await client.initialize_async(
        types.InitializeParams(
            capabilities=CAPABILITIES,
            root_uri=project.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="demo")],
        )
    )
    client.initialized(types.InitializedParams())
    await asyncio.wait_for(editor.checked.wait(), 120)  # the startup whole-store check

    for rel in FILES:
        path = project / rel
        uri = path.as_uri()
        text = path.read_text(encoding="utf-8")
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri,
                    language_id="markdown" if rel.endswith(".md") else "python",
                    version=1,
                    text=text,
                )
            )
        )
        doc = types.TextDocumentIdentifier(uri=uri)
        first = types.Range(
            start=types.Position(line=0, character=0), end=types.Position(line=1, character=0)
        )
        print(f"\n== {rel}")
        print(f"   line 1: {text.splitlines()[0] if text else ''}")
        hover = await client.text_document_hover_async(
            types.HoverParams(text_document=doc, position=types.Position(line=0, character=1))
        )
        if hover is not None and isinstance(hover.contents, types.MarkupContent):
            print("   hover:")
            for line in hover.contents.value.splitlines():
                print(f"     | {line}")
        else:
            print("   hover: (none)")
        hints = await client.text_document_inlay_hint_async(
            types.InlayHintParams(text_document=doc, range=first)
        )
        for hint in hints or []:
            print(f"   inlay hint at end of line 1: {hint.label}")
        lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=doc))
        for lens in lenses or []:
            if lens.command is not None:
                print(f"   code lens: {lens.command.title}  [{lens.command.command}]")
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=doc, range=first, context=types.CodeActionContext(diagnostics=[])
            )
        )
        for action in actions or []:
            print(f"   code action: {action.title}")
        await asyncio.sleep(0.2)  # let pushed diagnostics for this document arrive
        for diag in editor.diagnostics.get(uri, []):
            severity = types.DiagnosticSeverity(diag.severity or 1).name.lower()
            print(f"   diagnostic ({severity}, line {diag.range.start.line + 1}): {diag.message}")

    status = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="canon.status", arguments=[])
    )
    print(f"\n== canon.status\n   {status}")
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="canon-editor-tour-") as tmp:
        project = prepare(Path(tmp), git=True)
        print(f"canon-ls editor tour: a copy of examples/demo in {project} (CANON_TODAY={TODAY})")
        asyncio.run(tour(project))
    return 0


if __name__ == "__main__":
    sys.exit(main())
