"""`workspace/willRenameFiles` (SPEC §10 file operations, §12)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path

from canon_ls.lsp.handlers import edits
from canon_ls.lsp.session.state import CanonLanguageServer, Folder

log = logging.getLogger(__name__)


def on_will_rename_files(
    ls: CanonLanguageServer, params: types.RenameFilesParams
) -> types.WorkspaceEdit | None:
    link_moves: dict[str, dict[str, str]] = {}  # folder uri -> {old address: new}
    file_moves: list[tuple[Folder, str, Folder, str]] = []  # articles we move ourselves
    for rename in params.files:
        old_fs, new_fs = to_fs_path(rename.old_uri), to_fs_path(rename.new_uri)
        if not old_fs or not new_fs:
            continue
        old, new = Path(os.path.abspath(old_fs)), Path(os.path.abspath(new_fs))
        where = ls.where(rename.old_uri)
        if where is None or where.folder.store is None:
            continue
        folder = where.folder
        moves = link_moves.setdefault(folder.uri, {})
        if where.kind == "article" or (where.kind == "store" and old.is_dir()):
            moves.update(_article_moves(folder, old, new))
        elif where.kind == "asset" and where.address:
            dest = ls.where(rename.new_uri)  # an asset of a served folder: its article follows
            if (
                dest is None
                or dest.kind != "asset"
                or not dest.address
                or not dest.folder.serving
                or (dest.folder is folder and dest.address == where.address)
            ):
                continue
            target = dest.store
            for a, b in _asset_moves(folder, old, where.address, dest.address):
                if target.path_of(b).exists():
                    log.info("not moving %s: an article already exists at %s", a, b)
                    continue
                if dest.folder is folder:  # links in another root cannot name it: none follow
                    moves[a] = b
                file_moves.append((folder, a, dest.folder, b))
    changes: list[edits.AnyChange] = []
    for folder_uri, moves in link_moves.items():  # (none for an empty `moves`)
        changes.extend(edits.link_rewrites(ls, ls.folders[folder_uri], moves))
    for folder, a, into, b in file_moves:
        changes.append(edits.rename_file(folder.article_uri(a), into.article_uri(b)))
    return edits.workspace_edit(changes) if changes else None


def _article_moves(folder: Folder, old: Path, new: Path) -> list[tuple[str, str]]:
    """Renaming article files inside the store: each affected address and its new one."""
    store = folder.store
    assert store is not None
    base = store.articles_dir
    try:
        new.relative_to(base)
    except ValueError:
        return []  # moved out of the store: links cannot follow it
    if old.is_dir():
        try:
            old_rel = old.relative_to(base).as_posix()
            new_rel = new.relative_to(base).as_posix()
        except ValueError:
            return []
        prefix = "" if old_rel == "." else old_rel + "/"
        into = "" if new_rel == "." else new_rel + "/"
        moved = [a for a in store.addresses() if a.startswith(prefix) and ":" not in a]
        return [(a, into + a[len(prefix) :]) for a in moved]
    a, b = store.paths.address(old), store.paths.address(new)
    return [(a, b)] if a and b and a != b else []


def _asset_moves(folder: Folder, old: Path, a: str, b: str) -> list[tuple[str, str]]:
    """Renaming an asset: its exact article, and for a folder every article beneath it."""
    store = folder.store
    assert store is not None
    if old.is_dir():
        prefix = a + "/"
        return [(x, b + x[len(a) :]) for x in store.addresses() if x == a or x.startswith(prefix)]
    return [(a, b)] if store.has(a) and not _other_assets_keep(folder, old, a) else []


def _other_assets_keep(folder: Folder, old: Path, address: str) -> bool:
    """Another file (x.py beside x.ts) or the directory x/ still maps to the old address."""
    from canon_ls.core.checking.assets import address_of_path

    try:
        siblings = [p for p in old.parent.iterdir() if p != old]
    except OSError:
        return False
    base = old.parent.relative_to(folder.project).as_posix()
    prefix = "" if base == "." else base + "/"
    return any(address_of_path(prefix + p.name) == address for p in siblings)
