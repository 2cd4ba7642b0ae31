"""Hover: the governing article of the path token under the cursor (SPEC §10 hover)."""

from __future__ import annotations

from dataclasses import replace

from lsprotocol import types

from canon_ls.core.article import Article

from .. import early, resolve
from ..state import CanonLanguageServer
from . import freshness


def on_hover(ls: CanonLanguageServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    where = early.where(ls, uri)  # from the article files while the store loads
    target = resolve.at_cursor(ls, uri, params.position, where=where)
    if target is None:
        return None
    if not isinstance(target.where, early.DiskWhere):  # (those were just read from disk)
        freshness.check_article(ls, target.where.folder, target.address)
    governing = target.where.store.governing(target.address)
    if governing is None:
        return None
    target = replace(target, governing=governing)
    article = target.where.store.article(governing)
    if article is None:
        return None
    return types.Hover(
        contents=types.MarkupContent(
            kind=types.MarkupKind.Markdown, value=render(ls, target, article)
        ),
        range=resolve.token_range(ls, target),
    )


def render(ls: CanonLanguageServer, target: resolve.Target, article: Article) -> str:
    governing = target.governing
    title = article.title or governing
    lines = [f"**{_escape(title)}**"]
    if governing != target.address:
        lines.append(f"`{governing}` governs `{target.address}`")
    lines.append("")
    lines.append(_escape(article.capsule) if article.capsule else "_no capsule yet_")
    lines.append("")
    facts = [f"updated {article.updated or 'never'}"]
    if article.reviewed:
        facts.append(f"reviewed {article.reviewed}")
    folder = target.where.folder
    evidence = folder.signals.evidence.get(governing)
    if evidence is None and governing in folder.signals.stale:
        facts.append("**stale**")
    lines.append(" · ".join(facts))
    if evidence is not None:  # SPEC §9.1: how many commits, since when, which was newest
        lines.append("")
        lines.append("**stale**: " + _escape(evidence.line().removeprefix("stale: ")))
    journal = early.journal_names(target.where, governing)[:3]
    if journal:
        lines.append("")
        lines.append("journal: " + ", ".join(f"`{name}`" for name in journal))
    lines.append("")
    lines.append(f"[Open {governing}]({early.article_uri(target.where, governing)})")
    return "\n".join(lines)


def _escape(text: str) -> str:
    """Keep article text from being read as Markdown structure (headings, HTML)."""
    return text.replace("<", "&lt;").replace(">", "&gt;")
