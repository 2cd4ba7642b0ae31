"""The server's capabilities, declared once (SPEC §10): the early `initialize` answer."""

from __future__ import annotations

COMMANDS = [
    "canon.read",
    "canon.write",
    "canon.journal",
    "canon.map",
    "canon.search",
    "canon.status",
    "canon.settings",
    "canon.resolve",
    "canon.open",
    "canon.createArticle",
    "canon.journalAbout",
    "canon.applyAction",
    "canon.history",
    "canon.showChanges",
]
"""The workspace/executeCommand names, in the order the server registers them."""

# LSP method -> (its key in ServerCapabilities, its options as the wire carries them; True: none)
PROVIDERS: dict[str, tuple[str, object]] = {
    "textDocument/completion": ("completionProvider", {"triggerCharacters": ["["]}),
    "textDocument/hover": ("hoverProvider", True),
    "textDocument/definition": ("definitionProvider", True),
    "textDocument/references": ("referencesProvider", True),
    "textDocument/codeAction": (
        "codeActionProvider",
        {"codeActionKinds": ["quickfix"], "resolveProvider": True},
    ),
    "textDocument/codeLens": ("codeLensProvider", {"resolveProvider": False}),
    "textDocument/documentLink": ("documentLinkProvider", {"resolveProvider": False}),
    "workspace/symbol": ("workspaceSymbolProvider", {"resolveProvider": False}),
    "workspace/executeCommand": ("executeCommandProvider", {"commands": COMMANDS}),
    "textDocument/inlayHint": ("inlayHintProvider", {"resolveProvider": False}),
}
# pull diagnostics (offered to a client that pulls) and willRename (to a client that sends it)
DIAGNOSTICS = {"identifier": "canon", "interFileDependencies": True, "workspaceDiagnostics": True}
WILL_RENAME = {"filters": [{"pattern": {"glob": "**/*"}}]}
