"""Code lens on line 1: which article governs the file, or an offer to create one (SPEC §10)."""

from __future__ import annotations

from lsprotocol import types

from .. import convert
from ..state import CanonLanguageServer
from . import freshness


def on_code_lens(
    ls: CanonLanguageServer, params: types.CodeLensParams
) -> list[types.CodeLens] | None:
    uri = params.text_document.uri
    where = ls.where(uri)
    if where is None or where.kind != "asset" or not where.address:
        return None
    if not where.folder.settings.code_lens_enabled:
        return None
    freshness.check_article(ls, where.folder, where.address)
    governing = where.governing()
    if not governing:
        command = types.Command(
            title="canon: no article · create",
            command="canon.createArticle",
            arguments=[{"uri": uri}],
        )
        return [types.CodeLens(range=convert.TOP, command=command)]
    article = where.store.article(governing)
    if article is None:
        return None
    count = len(where.folder.journal_names(governing))
    title = f"canon: {governing} · updated {article.updated or 'never'} · {count} journal"
    command = types.Command(
        title=title, command="canon.open", arguments=[where.folder.article_uri(governing)]
    )
    return [types.CodeLens(range=convert.TOP, command=command)]
