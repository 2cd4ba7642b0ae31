"""Code actions (SPEC §10): create, update, journal, mark reviewed, show changes."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.uris import from_fs_path, to_fs_path

from canon_ls.core.retrieval.links import rewrite_links, wikilinks
from canon_ls.core.storage import article as core_article
from canon_ls.core.storage import front_write
from canon_ls.core.storage.address import parent
from canon_ls.core.storage.clock import today
from canon_ls.lsp.handlers import edits
from canon_ls.lsp.session.state import CanonLanguageServer, Folder, read_text

log = logging.getLogger(__name__)

QUICKFIX = types.CodeActionKind.QuickFix


def on_code_action(
    ls: CanonLanguageServer, params: types.CodeActionParams
) -> list[types.CodeAction] | None:
    uri = params.text_document.uri
    where = ls.where(uri)
    if where is None or where.kind in ("journal", "store"):
        return None
    store = where.store
    folder = where.folder
    out: list[types.CodeAction] = []
    if where.kind == "asset":
        if where.address and not store.has(where.address):
            title = f"Create article for {where.address}"
            out.append(_edit_action(ls, title, "create", folder, where.address))
        governing = where.governing()
        subject = governing or where.address
    else:
        governing = where.address
        subject = where.address
    if governing and where.kind == "asset":
        out.append(
            _command_action(
                f"Update governing article {governing}", "canon.open", folder.article_uri(governing)
            )
        )
    if subject and folder.serving:
        out.append(
            _command_action(
                f"Journal an entry about {subject}",
                "canon.journalAbout",
                {"address": subject, "folder": folder.uri},
            )
        )
    if governing and governing in folder.signals.stale:
        out.append(_edit_action(ls, f"Mark {governing} reviewed", "reviewed", folder, governing))
        out.append(  # SPEC §9.2: a read-only document with the diff since the reference date
            _command_action(
                f"Show changes since {governing} was updated",
                "canon.showChanges",
                {"address": governing, "folder": folder.uri},
            )
        )
    if where.kind == "article":
        if any(f.code == "duplicate-key" for f in folder.signals.findings.get(where.address, [])):
            title = "Keep the non-empty value of the key given twice"
            out.append(_edit_action(ls, title, "dedupe", folder, where.address))
        out.extend(_orphan_actions(ls, folder, where.address))
        out.extend(_link_actions(ls, folder, uri, params.range))
    return out or None


def _orphan_actions(
    ls: CanonLanguageServer, folder: Folder, address: str
) -> list[types.CodeAction]:
    if not any(f.code == "orphan" for f in folder.signals.findings.get(address, [])):
        return []
    store = folder.store
    # Assets named like the orphan (a likely rename), measured by the whole-store check.
    moved = [
        m for m in folder.signals.moves.get(address, []) if store is not None and not store.has(m)
    ]
    out = [_edit_action(ls, f"Move article to {m}", "move", folder, address, to=m) for m in moved]
    up = parent(address)
    into = store.governing(up) if store is not None and up else None
    if into:
        out.append(_edit_action(ls, "Merge into parent", "merge", folder, address, into=into))
    out.append(_edit_action(ls, "Declare scope: rule", "rule", folder, address))
    return out


def _link_actions(
    ls: CanonLanguageServer, folder: Folder, uri: str, rng: types.Range
) -> list[types.CodeAction]:
    text = ls.text_of(uri)
    store = folder.store
    if text is None or store is None:
        return []
    out = []
    seen = set()
    for line_no in range(rng.start.line, min(rng.end.line, rng.start.line + 50) + 1):
        for link in wikilinks(text.line(line_no)):
            named = store.link_target(link.target)  # `[[src/x.ts]]` is created as src/x
            if named in seen or store.has(named):
                continue
            seen.add(named)
            out.append(_edit_action(ls, f"Create article {named}", "create", folder, named))
    return out


def _edit_action(
    ls: CanonLanguageServer, title: str, op: str, folder: Folder, address: str, **more: str
) -> types.CodeAction:
    """A quick fix whose edit is built when it is applied (resolved, or through a command):
    its data names the `op`, the folder, the address and what else `build_edit` reads."""
    data = {"op": op, "folder": folder.uri, "address": address, **more}
    properties = get_capability(
        ls.client_capabilities, "text_document.code_action.resolve_support.properties", []
    )
    if "edit" in (properties or []):
        return types.CodeAction(title=title, kind=QUICKFIX, data=data)
    return types.CodeAction(
        title=title,
        kind=QUICKFIX,
        command=types.Command(title=title, command="canon.applyAction", arguments=[data]),
    )


def _command_action(title: str, command: str, argument: object) -> types.CodeAction:
    """A quick fix that runs a server command (opening a document, asking for a journal body)."""
    return types.CodeAction(
        title=title,
        kind=QUICKFIX,
        command=types.Command(title=title, command=command, arguments=[argument]),
    )


def on_code_action_resolve(ls: CanonLanguageServer, action: types.CodeAction) -> types.CodeAction:
    edit = build_edit(ls, action.data if isinstance(action.data, dict) else {})
    if isinstance(edit, str):
        action.disabled = types.CodeActionDisabled(reason=edit)
    else:
        action.edit = edit
    return action


# -- building edits at apply time -----------------------------------------------------------
def build_edit(ls: CanonLanguageServer, data: dict[str, Any]) -> types.WorkspaceEdit | str:
    """The edit for an action, from the files as they are now; a sentence when impossible."""
    folder = ls.folders.get(str(data.get("folder", "")))
    if folder is None or folder.store is None:
        return "The workspace folder of this action is no longer open."
    address = str(data.get("address", ""))
    op = data.get("op")
    try:
        if op == "create":
            return create_article(folder, address)
        if op == "reviewed":
            return _set_key(ls, folder, address, "reviewed", today())
        if op == "rule":
            return _set_key(ls, folder, address, "scope", "rule")
        if op == "dedupe":
            return _rewrite(ls, folder, address, front_write.without_duplicates, "no key twice")
        if op == "move":
            return _move(ls, folder, address, str(data.get("to", "")))
        if op == "merge":
            return _merge(ls, folder, address, str(data.get("into", "")))
    except ValueError as exc:  # OutsideStore and friends: an address that may not be written
        return f"canon cannot edit {address}: {exc}"
    return f"Unknown canon action {op!r}."


def create_article(folder: Folder, address: str) -> types.WorkspaceEdit | str:
    store = folder.store
    assert store is not None
    if not address:
        return "The project root has no article; open a file inside the project."
    path = store.path_of(address)
    if path.exists():
        return f"The article {address} already exists."
    text = front_write.render(
        None, capsule="", updated=today(), scope="asset", body=f"# {address}\n\n"
    )
    return edits.workspace_edit(edits.create_file(from_fs_path(str(path)) or "", text))


def _set_key(
    ls: CanonLanguageServer, folder: Folder, address: str, key: str, value: str
) -> types.WorkspaceEdit | str:
    return _rewrite(
        ls, folder, address, lambda text: front_write.set_meta(text, key, value), f"{key}: {value}"
    )


def _rewrite(
    ls: CanonLanguageServer, folder: Folder, address: str, change: Callable[[str], str], has: str
) -> types.WorkspaceEdit | str:
    """An edit of the article's text (the editor's, unsaved lines included) by `change`."""
    uri = folder.article_uri(address)
    text = ls.text_of(uri)
    if text is None:
        return f"The article {address} cannot be read as UTF-8 text."
    edit = edits.replace_text(ls, uri, text, change(text.source))
    return f"{address} already has {has}." if edit is None else edits.workspace_edit([edit])


def _move(
    ls: CanonLanguageServer, folder: Folder, address: str, to: str
) -> types.WorkspaceEdit | str:
    store = folder.store
    assert store is not None
    if not to or store.path_of(to).exists():
        return f"An article already exists at {to}."
    changes: list[edits.AnyChange] = list(edits.link_rewrites(ls, folder, {address: to}))
    changes.append(edits.rename_file(folder.article_uri(address), folder.article_uri(to)))
    return edits.workspace_edit(changes)


def _merge(
    ls: CanonLanguageServer, folder: Folder, address: str, into: str
) -> types.WorkspaceEdit | str:
    """The orphan becomes a section of its parent and is deleted (SPEC §10, §12)."""
    orphan_uri = folder.article_uri(address)
    target_uri = folder.article_uri(into)
    source, target = ls.text_of(orphan_uri), ls.text_of(target_uri)
    if source is None or target is None:
        return f"{address} or {into} cannot be read as UTF-8 text; nothing was merged."
    addition, problem = _section(address, source.source)
    if problem:
        return problem
    if source.version is not None:  # open: what is on disk must be in the editor's text too
        path = to_fs_path(orphan_uri)
        on_disk = read_text(Path(path)) if path and os.path.exists(path) else None
        if path and os.path.exists(path) and on_disk is None:
            return f"{address} on disk cannot be read as UTF-8 text; nothing was merged."
        if on_disk is not None and on_disk.source != source.source:
            kept, problem = _section(address, on_disk.source)
            if problem or not _carried(kept, addition):
                return (
                    f"{address} changed on disk in ways the editor does not show; "
                    "reload or save it, then merge."
                )
    section = address.rsplit("/", 1)[-1]
    source_text = (
        target.source if target.source.endswith("\n") or not target.source else target.source + "\n"
    )
    # Links to the merged article now point at its section, in the parent itself too (a
    # `[[orphan]]` left there would be a broken link the moment the orphan is deleted).
    anchors = {address: section}
    merged = rewrite_links(source_text + addition, {address: into}, anchors)
    change = edits.replace_text(ls, target_uri, target, merged)
    changes: list[edits.AnyChange] = [c for c in [change] if c is not None]
    changes.extend(
        c
        for c in edits.link_rewrites(ls, folder, {address: into}, anchors)
        if c.text_document.uri != target_uri
    )
    changes.append(
        types.DeleteFile(uri=orphan_uri, options=types.DeleteFileOptions(ignore_if_not_exists=True))
    )
    return edits.workspace_edit(changes)


# Front matter a section does not need: the article's own bookkeeping, gone with the file.
BOOKKEEPING = ("capsule", "updated", "scope", "reviewed", "stale_after")


def _section(address: str, text: str) -> tuple[str, str]:
    """(the section's text, ''), or ('', why the article cannot become a section)."""
    orphan = core_article.parse(text, address)
    if orphan.problems:
        return "", f"{address} cannot be merged: {orphan.problems[0]}."
    foreign = [key for key in orphan.meta if key not in BOOKKEEPING]
    if foreign:
        return "", (
            f"{address} cannot be merged: a section cannot hold its front matter "
            f"({', '.join(foreign)}); move that text by hand first."
        )
    body = orphan.body
    lines = body.splitlines(keepends=True)
    if lines and lines[0].startswith("# "):
        body = "".join(lines[1:]).lstrip("\n")
    intro = f"{orphan.capsule}\n\n" if orphan.capsule else ""
    return f"\n## {address.rsplit('/', 1)[-1]}\n\n{intro}{body.rstrip()}\n", ""


def _carried(kept: str, addition: str) -> bool:
    """Every non-blank line of `kept` appears in `addition`, in order."""
    remaining = iter(line.strip() for line in addition.splitlines())
    return all(
        any(line == other for other in remaining)
        for line in (x.strip() for x in kept.splitlines())
        if line
    )
