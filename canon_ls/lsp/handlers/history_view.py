"""`canon.history {path}` and `canon.showChanges {address}` (SPEC §9.2)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from canon_ls.core.git import history as core_history
from canon_ls.core.storage.store import BadInput
from canon_ls.lsp.handlers.commands import pick_folder
from canon_ls.lsp.helpers.child import python_module
from canon_ls.lsp.session.lifecycle import show
from canon_ls.lsp.session.state import CanonLanguageServer, Folder

log = logging.getLogger(__name__)

TIMEOUT = 120.0  # seconds for the child (a first history pass on a big repository)


async def run_cli(folder: Folder, command: str, path: str, *flags: str) -> tuple[int, str]:
    """Run `canon <command> <flags> -- <path>` for the folder's project and options."""
    options = folder.store_options()
    argv = python_module("canon_ls.agent.cli", command, "--project", str(folder.project))
    if options.get("root"):
        argv += ["--root", str(options["root"])]
    for mount in options.get("mounts", ()):
        argv += ["--mount", str(mount)]
    argv += [*flags, "--", path]
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(folder.project),
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout=TIMEOUT)
    except (TimeoutError, asyncio.CancelledError):
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        raise
    code = proc.returncode or 0
    return code, (out if code == 0 else err or out).decode("utf-8", "replace").rstrip("\n")


def _argument(ls: CanonLanguageServer, args: tuple[Any, ...]) -> tuple[Folder | None, str, dict]:
    """(folder, path or address, the object): `{path}`, `{address}`, `{uri}` or a bare string."""
    obj = args[0] if args else {}
    if isinstance(obj, str):
        obj = {"path": obj}
    if not isinstance(obj, dict):
        return None, "", {}
    raw = obj.get("path") or obj.get("address") or obj.get("uri") or ""
    raw = raw if isinstance(raw, str) else ""
    if raw.startswith("file:"):
        raw = to_fs_path(raw) or raw
    return pick_folder(ls, obj), raw, obj


async def history(ls: CanonLanguageServer, *args: Any) -> str:
    """`canon.history {path, sinceUpdated?}`: the text of `canon history PATH`."""
    folder, path, obj = _argument(ls, args)
    if folder is None or folder.store is None or not path:
        return 'canon.history needs {"path": …}, a file or an address.'
    since = bool(obj.get("sinceUpdated") or obj.get("since_updated"))
    _, text = await run_cli(folder, "history", path, *(["--since-updated"] if since else []))
    return text


async def show_changes(ls: CanonLanguageServer, *args: Any) -> str:
    """`canon.showChanges {address}`: the governed files' diff as a read-only document."""
    folder, address, _ = _argument(ls, args)
    if folder is None or folder.store is None or not address:
        return 'canon.showChanges needs {"address": …}.'
    code, text = await run_cli(folder, "history", address, "--diff")
    if code != 0:
        show(ls, text)
        return text
    store = folder.store
    try:
        governing = store.governing(store.address_of(address)) or address
        file = core_history.changes_file(store, governing, text + "\n")
    except (BadInput, OSError, ValueError) as exc:
        message = f"canon could not write the changes document: {exc}"
        show(ls, message)
        return message
    uri = from_fs_path(str(Path(file))) or ""
    result = await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True))
    if result is None or not result.success:
        log.info("the client did not show %s", uri)
    return uri
