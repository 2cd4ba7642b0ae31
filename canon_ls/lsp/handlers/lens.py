"""Code lens on line 1: which article governs the file, or an offer to create one (SPEC §10)."""

from __future__ import annotations

from lsprotocol import types

from canon_ls.lsp.session.state import CanonLanguageServer, Folder, lookup
from canon_ls.lsp.wire import convert


def on_code_lens(
    ls: CanonLanguageServer, params: types.CodeLensParams
) -> list[types.CodeLens] | None:
    uri = params.text_document.uri
    where = ls.view(uri)  # from the article files while the store loads
    if where is None or where.kind not in ("asset", "article") or not where.address:
        return None
    if not where.folder.settings.code_lens_enabled:
        return None
    if where.kind == "article":
        stale = stale_lens(where.folder, where.address)
        return [stale] if stale is not None else None
    found = lookup(ls, uri, where)
    if found is None:
        command = types.Command(
            title="canon: no article · create",
            command="canon.createArticle",
            arguments=[{"uri": uri}],
        )
        return [types.CodeLens(range=convert.TOP, command=command)]
    governing = found.governing
    title = f"canon: {governing} · updated {found.article.updated or 'never'}"
    if where.journal_read():  # a long journal is counted once the store has loaded
        title += f" · {len(where.reader.journal_names(governing))} journal"
    command = types.Command(title=title, command="canon.open", arguments=[found.uri])
    lenses = [types.CodeLens(range=convert.TOP, command=command)]
    stale = stale_lens(where.folder, governing)
    if stale is not None:
        lenses.append(stale)
    return lenses


def stale_lens(folder: Folder, governing: str) -> types.CodeLens | None:
    """`stale · 7 commits since 2026-10-21` (SPEC §9.1); it opens the changes since then."""
    if governing not in folder.signals.stale or not folder.settings.staleness_enabled:
        return None
    evidence = folder.signals.evidence.get(governing)
    title = evidence.short() if evidence is not None else "stale"
    command = types.Command(
        title=title,
        command="canon.showChanges",
        arguments=[{"address": governing, "folder": folder.uri}],
    )
    return types.CodeLens(range=convert.TOP, command=command)
