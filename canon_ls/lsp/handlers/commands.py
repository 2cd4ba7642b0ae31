"""`workspace/executeCommand`: the five §6 actions, status, and what the actions/lenses use."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from canon_ls.core import tool
from canon_ls.core.git.evidence import plural
from canon_ls.core.storage import address as core_address
from canon_ls.lsp.handlers import actions, edits
from canon_ls.lsp.session import sync
from canon_ls.lsp.session.lifecycle import show
from canon_ls.lsp.session.state import CanonLanguageServer, Folder

log = logging.getLogger(__name__)

TOOL_COMMANDS = ("read", "write", "journal", "map", "search")


def tool_command(action: str) -> Callable[..., str]:
    def run(ls: CanonLanguageServer, *args: Any) -> str:
        obj = args[0] if args else {}
        if not isinstance(obj, dict):
            return (
                f"canon.{action} takes one argument, the tool's object without its action, "
                'e.g. {"path": "src/a.ts"}.'
            )
        folder = pick_folder(ls, obj)
        if folder is None or folder.store is None:
            return "canon has no workspace folder to act on; open a folder first."
        payload = {k: v for k, v in obj.items() if k not in ("folder", "uri")}
        evidence = folder.signals.evidence.get  # §9.1 as the last whole-store pass measured it
        result = tool.run(
            folder.store, {**payload, "action": action}, source="lsp", evidence=evidence
        )
        if action in ("write", "journal"):
            sync.store_changed(ls, folder, folder.store.refresh())
            ls.notifier.schedule()
            if not folder.check.asked:
                folder.check.schedule()  # the first write just created the store
        return result.text

    run.__name__ = f"canon_{action}"
    return run


def pick_folder(ls: CanonLanguageServer, obj: dict[str, Any]) -> Folder | None:
    """The folder a command is about: its `folder`/`uri`/absolute `path`, else the first served."""
    for key in ("folder", "uri", "path"):
        value = obj.get(key)
        if not isinstance(value, str):
            continue
        if key != "path" and value in ls.folders:
            return ls.folders[value]
        fs = to_fs_path(value) if value.startswith("file:") else None
        fs = value if key == "path" and os.path.isabs(value) else fs
        found = ls.folder_of(Path(fs)) if fs else None
        if found is not None:
            return found
    folders = list(ls.folders.values())
    return next((f for f in folders if f.serving), folders[0] if folders else None)


def status(ls: CanonLanguageServer, *args: Any) -> str:
    folder = pick_folder(ls, args[0] if args and isinstance(args[0], dict) else {})
    if folder is None or folder.store is None:
        return (
            folder.error if folder is not None and folder.error else "canon: no workspace folder."
        )
    store = folder.store
    if not store.exists():
        return f"No canon store at {store.root} yet; the first write or journal creates it."
    findings = [f for fs in folder.signals.findings.values() for f in fs]
    errors = sum(1 for f in findings if f.severity == "error")
    orphans = sum(1 for f in findings if f.code == "orphan")
    state = "checked" if folder.signals.checked else "checking"
    counts = [
        plural(len(store.addresses()), "article"),
        plural(len(store.journal_entries()), "journal entry", "journal entries"),
        f"{plural(len(findings), 'finding')} ({plural(errors, 'error')})",
        plural(orphans, "orphan"),
        f"{len(folder.signals.stale)} stale ({state})",
    ]
    return f"canon store {store.root}: {', '.join(counts)}."


def settings(ls: CanonLanguageServer, *args: Any) -> str:
    """`canon.settings`: each option's effective value and its source (SPEC §13)."""
    from canon_ls.lsp.session.options import settings_text

    folder = pick_folder(ls, args[0] if args and isinstance(args[0], dict) else {})
    return settings_text(folder) if folder is not None else "canon: no workspace folder."


def resolve(ls: CanonLanguageServer, *args: Any) -> dict[str, Any] | str | None:
    """`canon.resolve`: what a document, path or address is to canon."""
    obj = args[0] if args else None
    if not isinstance(obj, dict):
        return 'canon.resolve takes one argument, e.g. {"uri": "file:///…/src/a.ts"}.'
    try:
        return _resolve(ls, obj)
    except ValueError as exc:  # OutsideStore: a NUL byte, a lone surrogate, an escaping address
        return f"canon.resolve: {exc}."


def _resolve(ls: CanonLanguageServer, obj: dict[str, Any]) -> dict[str, Any] | str | None:
    address, path, uri = obj.get("address"), obj.get("path"), obj.get("uri")
    if isinstance(address, str) or isinstance(path, str):
        folder = pick_folder(ls, obj)
        if folder is None or folder.store is None:
            return None
        kind = "asset"
        if isinstance(address, str):
            address = core_address.clean(address)
        elif isinstance(path, str):
            fs = to_fs_path(path) if path.startswith("file:") else path
            located = folder.where(Path(os.path.abspath(folder.project / (fs or ""))))
            if located is None:  # outside the project, or inside .git
                return None
            kind, address = located.kind, located.address
    elif isinstance(uri, str):
        where = ls.where(uri)
        if where is None or where.folder.store is None:
            return None
        folder, kind, address = where.folder, where.kind, where.address
    else:
        return 'canon.resolve needs "uri", "path" or "address".'
    store = folder.store
    assert store is not None
    governing = store.governing(address) if address and kind in ("asset", "article") else None
    if kind == "article" and address and governing is None:
        governing = address  # an article file not indexed yet (just created) governs itself
    target = governing or (address if kind in ("asset", "article") else "")
    return {
        "folder": folder.uri,
        "kind": kind,
        "address": address,
        "governing": governing,
        "article": folder.article_uri(target) if target else None,
        "exists": bool(governing) and os.path.isfile(store.article_file(governing or "")),
    }


async def open_article(ls: CanonLanguageServer, *args: Any) -> bool:
    """`canon.open <uri>`: show a document (lens and 'Update governing article')."""
    uri = args[0] if args else None
    if isinstance(uri, dict):
        uri = uri.get("uri")
    if not isinstance(uri, str) or not uri.startswith("file:"):
        show(ls, "canon.open needs a file URI.")
        return False
    result = await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True))
    return bool(result and result.success)


async def apply_action(ls: CanonLanguageServer, *args: Any) -> bool:
    """`canon.applyAction <data>`: build a code action's edit now and ask the client to apply."""
    data = args[0] if args and isinstance(args[0], dict) else {}
    return await _apply(ls, actions.build_edit(ls, data), "canon")


async def create_article(ls: CanonLanguageServer, *args: Any) -> bool:
    """`canon.createArticle {uri}` (the lens on an ungoverned file) or `{address, folder}`."""
    obj = args[0] if args and isinstance(args[0], dict) else {}
    address = obj.get("address")
    folder = pick_folder(ls, obj)
    if not isinstance(address, str) and isinstance(obj.get("uri"), str):
        where = ls.where(obj["uri"])
        if where is not None and where.kind == "asset":
            folder, address = where.folder, where.address
    if folder is None or folder.store is None or not isinstance(address, str):
        return await _apply(ls, "canon.createArticle needs a file uri or an address.", "canon")
    edit = actions.create_article(folder, address)
    applied = await _apply(ls, edit, f"Create article for {address}")
    if applied:
        await open_article(ls, folder.article_uri(address))
    return applied


async def journal_about(ls: CanonLanguageServer, *args: Any) -> str:
    """`canon.journalAbout {address, body?}`: with a body, journal it (source lsp)."""
    obj = args[0] if args and isinstance(args[0], dict) else {}
    address = obj.get("address")
    folder = pick_folder(ls, obj)
    if folder is None or folder.store is None or not isinstance(address, str) or not address:
        return 'canon.journalAbout needs {"address": …}.'
    body = obj.get("body")
    if isinstance(body, str) and body.strip():
        result = tool.run(
            folder.store, {"action": "journal", "body": body, "subject": [address]}, source="lsp"
        )
        ls.notifier.schedule()
        show(ls, result.text, types.MessageType.Info)
        return result.text
    path, text = folder.store.journal_draft([address], slug=address.replace("/", "-"))
    uri = edits.path_uri(path)
    ok = await _apply(ls, edits.workspace_edit(edits.create_file(uri, text)), "Journal entry")
    if ok:
        await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True))
    return uri if ok else "The editor did not create the journal entry."


async def _apply(ls: CanonLanguageServer, edit: types.WorkspaceEdit | str, label: str) -> bool:
    if isinstance(edit, str):
        show(ls, edit)
        return False
    result = await ls.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=edit, label=label)
    )
    if result is None or not result.applied:
        reason = getattr(result, "failure_reason", None) or "the editor refused it"
        show(ls, f"{label} was not applied: {reason}.")
        return False
    return True
