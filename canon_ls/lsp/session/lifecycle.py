"""initialize / initialized / folders / configuration / shutdown (SPEC §10 configuration)."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging

from lsprotocol import types
from pygls.capabilities import get_capability

from canon_ls.core.storage import cache
from canon_ls.lsp.handlers import diagnostics
from canon_ls.lsp.session import checks, options, sync, watch
from canon_ls.lsp.session import settings as settings_mod
from canon_ls.lsp.session.state import CanonLanguageServer, Folder
from canon_ls.lsp.startup import first_answer
from canon_ls.lsp.wire import pygls_private

log = logging.getLogger(__name__)


def create(ls: CanonLanguageServer) -> None:
    """The features that own state and the work a folder asks of the server, wired here."""
    ls.watcher = watch.Watcher(ls)
    ls.notifier = sync.Notifier(ls)
    ls.check_work = functools.partial(checks.run, ls)
    ls.store_changed = functools.partial(sync.store_changed, ls)


def on_initialize(ls: CanonLanguageServer, params: types.InitializeParams) -> None:
    ls.global_settings, ls.initial_errors = settings_mod.parse(params.initialization_options)
    named = [f.uri for f in params.workspace_folders or []]
    for uri in first_answer.folder_uris(named, params.root_uri, params.root_path):
        ls.add_folder(uri, ls.global_settings)
    caps = ls.client_capabilities
    ls.pull_diagnostics = bool(
        get_capability(caps, "text_document.diagnostic", None) is not None
        and get_capability(caps, "workspace.diagnostics.refresh_support", False)
    )
    if ls.pull_diagnostics:  # registered here so push-only clients never see the provider
        for method, options, handler in ls.pull_features:
            ls.feature(method, options)(handler)


async def on_initialized(ls: CanonLanguageServer, params: types.InitializedParams) -> None:
    if ls.log_handler is not None:
        ls.log_handler.attach()
    for message in ls.initial_errors:
        show(ls, message)
    # The whole-store check starts first: its git pass is the long pole of cold diagnostics,
    # and a first hover (the in-process store load) must not delay its child. A root, mounts
    # or staleness setting from workspace/configuration re-runs it (`apply`).
    for folder in list(ls.folders.values()):
        if folder.serving:
            folder.check.schedule()
    cache.fingerprint()  # YAML's import, core hashed: now, not in a load step between hovers
    await load_configuration(ls)
    for folder in ls.folders.values():
        if folder.error:
            show(ls, folder.error)
        options.show_problems(ls, folder)  # a bad canon.toml / settings.json key (SPEC §13)
    await ls.watcher.start()
    for folder in list(ls.folders.values()):
        if folder.serving and not folder.check.asked:
            folder.check.schedule()
    ls.started = True


async def load_configuration(ls: CanonLanguageServer) -> None:
    """Ask `workspace/configuration` for section `canon` per folder; reopen changed stores."""
    if not get_capability(ls.client_capabilities, "workspace.configuration", False):
        return
    folders = list(ls.folders.values())
    items = [types.ConfigurationItem(section="canon", scope_uri=f.uri) for f in folders]
    if not items:
        return
    try:
        values = await asyncio.wait_for(
            ls.workspace_configuration_async(types.ConfigurationParams(items=items)), timeout=10
        )
    except Exception as exc:
        log.info("workspace/configuration failed: %s", exc)
        return
    seen: set[str] = set()
    for folder, value in zip(folders, values or [], strict=False):
        if value is None:
            continue
        parsed, errors = settings_mod.parse(value)
        if ls.global_settings.untrusted:  # said once, at initialize; never undone by a setting
            parsed = dataclasses.replace(parsed, untrusted=True)
        parsed = dataclasses.replace(parsed, trusted_client=ls.global_settings.trusted_client)
        for message in errors:
            if message not in seen:
                seen.add(message)
                show(ls, message)
        apply(ls, folder, parsed)


def apply(ls: CanonLanguageServer, folder: Folder, parsed: settings_mod.Settings) -> None:
    reopen = parsed.store_options() != folder.settings.store_options()
    restale = parsed.staleness_enabled != folder.settings.staleness_enabled
    requested = folder.check.asked  # not after `open`: a new Store
    folder.settings = parsed
    if reopen:
        folder.open()
        if folder.error:
            show(ls, folder.error)
        if ls.started:
            options.show_problems(ls, folder)
    if (reopen or restale) and (ls.started or requested) and folder.serving:
        folder.check.schedule()  # a running check with the old settings is discarded


async def on_did_change_configuration(
    ls: CanonLanguageServer, params: types.DidChangeConfigurationParams
) -> None:
    await load_configuration(ls)
    ls.notifier.schedule()


def on_did_change_workspace_folders(
    ls: CanonLanguageServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    for removed in params.event.removed or []:
        folder = ls.folders.pop(removed.uri, None)
        if folder is not None:
            folder.close()
            for uri in list(ls.notifier.published):
                if uri.startswith(folder.uri):
                    diagnostics.publish(ls, uri, [])
    for added in params.event.added or []:
        folder = ls.add_folder(added.uri, ls.global_settings)
        if folder is not None and folder.serving:
            folder.check.schedule()


def on_shutdown(ls: CanonLanguageServer, params: None) -> None:
    ls.shutting_down = True
    protocol = ls.protocol  # the requests still running are cancelled
    table = pygls_private.request_futures(protocol)
    current = getattr(protocol, "msg_id", None)
    for msg_id, future in list(table.items()):
        if msg_id != current and not future.done():
            table.pop(msg_id, None)
            future.cancel()
    ls.stop_work()


def show(
    ls: CanonLanguageServer, message: str, kind: types.MessageType = types.MessageType.Warning
) -> None:
    ls.window_show_message(types.ShowMessageParams(type=kind, message=message))
