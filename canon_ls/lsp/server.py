"""The whole protocol surface of canon-ls in one table (SPEC §10)."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.lsp import get_method_options_type

from canon_ls.lsp.capabilities import DIAGNOSTICS, PROVIDERS, WILL_RENAME
from canon_ls.lsp.handlers import (
    actions,
    commands,
    completion,
    diagnostics,
    documents,
    history_view,
    hover,
    inlay,
    lens,
    navigation,
    rename,
    symbols,
)
from canon_ls.lsp.session import lifecycle, watch
from canon_ls.lsp.session.state import CanonLanguageServer
from canon_ls.lsp.startup import meanwhile
from canon_ls.lsp.wire import logs

log = logging.getLogger(__name__)
converter = get_converter()


def guard(fn: Callable[..., Any], fallback: Any = None) -> Callable[..., Any]:
    """Catch, log and swallow a feature's failure (the first parameter stays `ls`)."""
    name = getattr(fn, "__name__", "handler")

    def fail() -> Any:
        log.exception("canon: %s failed", name)
        return fallback(name) if callable(fallback) else fallback

    if asyncio.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapped(ls: CanonLanguageServer, *args: Any) -> Any:
            try:
                return await fn(ls, *args)
            except asyncio.CancelledError:
                raise
            except Exception:
                return fail()

        return async_wrapped

    @functools.wraps(fn)
    def wrapped(ls: CanonLanguageServer, *args: Any) -> Any:
        try:
            return fn(ls, *args)
        except Exception:
            return fail()

    return wrapped


def _command_failed(name: str) -> str:
    return f"The canon command {name} failed; the server log has the details."


def _options(method: str, wire: object) -> Any:
    """A provider's options (capabilities.py's wire form) as pygls registers them."""
    kind = get_method_options_type(method)
    return None if wire is True or kind is None else converter.structure(wire, kind)


def create_server() -> CanonLanguageServer:
    ls = CanonLanguageServer()
    ls.log_handler = logs.configure(ls)
    lifecycle.create(ls)
    feature = ls.feature

    feature(types.INITIALIZE)(guard(lifecycle.on_initialize))
    feature(types.INITIALIZED)(guard(lifecycle.on_initialized))
    feature(types.SHUTDOWN)(guard(lifecycle.on_shutdown))
    feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(guard(lifecycle.on_did_change_configuration))
    feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(
        guard(lifecycle.on_did_change_workspace_folders)
    )
    feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(guard(watch.on_did_change_watched_files))

    feature(types.TEXT_DOCUMENT_DID_OPEN)(guard(documents.on_did_open))
    feature(types.TEXT_DOCUMENT_DID_CHANGE)(guard(documents.on_did_change))
    feature(types.TEXT_DOCUMENT_DID_SAVE)(guard(documents.on_did_save))
    feature(types.TEXT_DOCUMENT_DID_CLOSE)(guard(documents.on_did_close))

    # Pull diagnostics: registered by `initialize` only for clients that pull (push-only
    # clients never see the provider), but listed and guarded here like every handler.
    ls.pull_features = [
        (
            types.TEXT_DOCUMENT_DIAGNOSTIC,
            converter.structure(DIAGNOSTICS, types.DiagnosticOptions),
            guard(
                diagnostics.on_document_diagnostic,
                types.RelatedFullDocumentDiagnosticReport(items=[]),
            ),
        ),
        (
            types.WORKSPACE_DIAGNOSTIC,
            None,
            guard(diagnostics.on_workspace_diagnostic, types.WorkspaceDiagnosticReport(items=[])),
        ),
    ]

    # Each provider with its options from the one table (capabilities.PROVIDERS).
    provide: dict[str, Callable[..., Any]] = {
        types.TEXT_DOCUMENT_HOVER: hover.on_hover,
        types.TEXT_DOCUMENT_INLAY_HINT: inlay.on_inlay_hint,
        types.TEXT_DOCUMENT_CODE_LENS: lens.on_code_lens,
        types.TEXT_DOCUMENT_CODE_ACTION: actions.on_code_action,
        types.TEXT_DOCUMENT_DOCUMENT_LINK: navigation.on_document_link,
        types.TEXT_DOCUMENT_DEFINITION: navigation.on_definition,
        types.TEXT_DOCUMENT_REFERENCES: navigation.on_references,
        types.TEXT_DOCUMENT_COMPLETION: completion.on_completion,
        types.WORKSPACE_SYMBOL: symbols.on_workspace_symbol,
    }
    for method, handler in provide.items():
        feature(method, _options(method, PROVIDERS[method][1]))(guard(handler))
    feature(types.CODE_ACTION_RESOLVE)(guard(actions.on_code_action_resolve))
    feature(meanwhile.ANSWERED)(guard(symbols.on_answered_early))
    rename_options = _options(types.WORKSPACE_WILL_RENAME_FILES, WILL_RENAME)
    feature(types.WORKSPACE_WILL_RENAME_FILES, rename_options)(guard(rename.on_will_rename_files))

    for action in commands.TOOL_COMMANDS:
        ls.command(f"canon.{action}")(guard(commands.tool_command(action), _command_failed))
    ls.command("canon.status")(guard(commands.status, _command_failed))
    ls.command("canon.settings")(guard(commands.settings, _command_failed))
    ls.command("canon.resolve")(guard(commands.resolve, _command_failed))
    ls.command("canon.open")(guard(commands.open_article, False))
    ls.command("canon.createArticle")(guard(commands.create_article, False))
    ls.command("canon.journalAbout")(guard(commands.journal_about, _command_failed))
    ls.command("canon.applyAction")(guard(commands.apply_action, False))
    ls.command("canon.history")(guard(history_view.history, _command_failed))
    ls.command("canon.showChanges")(guard(history_view.show_changes, _command_failed))
    return ls
