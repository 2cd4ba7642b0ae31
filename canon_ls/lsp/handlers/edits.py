"""Build `WorkspaceEdit`s from text computed by core (SPEC §10 code actions, §12)."""

from __future__ import annotations

from lsprotocol import types
from pygls.uris import from_fs_path

from canon_ls.core.retrieval.links import new_target, wikilinks
from canon_ls.lsp.session.state import CanonLanguageServer, Folder
from canon_ls.lsp.wire import convert
from canon_ls.lsp.wire.convert import Text

AnyChange = types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile


def replace_text(
    ls: CanonLanguageServer, uri: str, old: Text, new: str
) -> types.TextDocumentEdit | None:
    """One edit turning `old` into `new`: the differing middle lines only."""
    if old.source == new:
        return None
    a = old.source.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    start = sum(len(x) for x in a[:head])
    end = len(old.source) - sum(len(x) for x in a[len(a) - tail :]) if tail else len(old.source)
    inserted = "".join(b[head : len(b) - tail])
    rng = convert.offsets(ls.workspace.position_codec, old, start, end)
    return _document_edit(uri, old.version, [types.TextEdit(range=rng, new_text=inserted)])


def create_file(uri: str, text: str) -> list[AnyChange]:
    """Create a new file with content; never overwrites an existing one."""
    return [
        types.CreateFile(
            uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True)
        ),
        _document_edit(uri, None, [types.TextEdit(range=convert.TOP, new_text=text)]),
    ]


def rename_file(old_uri: str, new_uri: str) -> types.RenameFile:
    """Move a file; never over an existing one."""
    options = types.RenameFileOptions(overwrite=False, ignore_if_exists=True)
    return types.RenameFile(old_uri=old_uri, new_uri=new_uri, options=options)


def link_rewrites(
    ls: CanonLanguageServer,
    folder: Folder,
    moves: dict[str, str],
    anchors: dict[str, str] | None = None,
) -> list[types.TextDocumentEdit]:
    """Rewrite inbound `[[old]]` targets to their new addresses; labels and headings stay."""
    store = folder.store
    if store is None or not moves:
        return []
    sources: set[str] = ls.open_articles(folder)  # unsaved links are rewritten too
    for old in moves:
        sources.update(store.backlinks(old))
    out = []
    codec = ls.workspace.position_codec
    for source in sorted(sources):
        uri = folder.article_uri(source)
        text = ls.text_of(uri)
        if text is None:
            continue
        edits = [
            types.TextEdit(
                range=convert.offsets(codec, text, link.target_start, link.target_end),
                new_text=new_target(link, moves, anchors, store.link_target),
            )
            for link in wikilinks(text.source)
            if store.link_target(link.target) in moves
        ]
        if edits:
            out.append(_document_edit(uri, text.version, edits))
    return out


def _document_edit(
    uri: str, version: int | None, edits: list[types.TextEdit]
) -> types.TextDocumentEdit:
    identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
    return types.TextDocumentEdit(text_document=identifier, edits=edits)


def path_uri(path: object) -> str:
    return from_fs_path(str(path)) or ""


def workspace_edit(changes: list[AnyChange]) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(document_changes=changes)
