"""The first workspace symbols, answered at once from what the server holds (SPEC §10)."""

from __future__ import annotations

import heapq
import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from canon_ls.core.storage import freshness
from canon_ls.core.storage.article import Article

if TYPE_CHECKING:
    from canon_ls.core.storage.store import Store

LIMIT = 50  # symbols per answer; the client asks again as the query grows
SMALL = 1000  # articles a query only bodies match is ranked for by BM25 built on the spot
SEPARATOR = " — "
CAPSULE_CHARS = 120


def symbol_name(address: str, capsule: str) -> str:
    """`address — capsule`: the capsule belongs in the name, not only in the container."""
    if not capsule:
        return address
    if len(capsule) > CAPSULE_CHARS:
        capsule = capsule[: CAPSULE_CHARS - 1].rstrip() + "…"
    return f"{address}{SEPARATOR}{capsule}"


def listed(store: Store) -> list[str] | None:
    """Every address of the store by name only."""
    if store.mounts or store.layout_problem():
        return None
    return freshness.addresses(store.articles_dir, os.path.realpath(store.articles_dir))


def rank(
    query: str, addresses: Iterable[str], articles: Iterable[Article], limit: int
) -> list[str]:
    """The best `limit` addresses for `query` (every address, by name, for an empty one)."""
    lowered = query.strip().lower()
    words = lowered.split()
    held = {a.address: a for a in articles}
    # Whether a name holds any of the words, ignoring case.
    holding = re.compile("|".join(map(re.escape, words)), re.IGNORECASE).search if words else None
    scored: list[tuple[int, int, int, str]] = []
    for address in addresses:
        if holding is not None and address not in held and not holding(address):
            continue  # nothing to rank it by: one search in C instead of the loop below
        low = address.lower()
        if not lowered:
            scored.append((0, 0, len(address), address))
            continue
        if low == lowered:
            tier = 0
        elif low.startswith(lowered) or low.rpartition("/")[2].startswith(lowered):
            tier = 1
        elif lowered in low:
            tier = 2
        else:
            tier = 3
        named = sum(word in low for word in words)
        article = held.get(address)
        if tier == 3:
            text = _text(article) if article is not None else ""
            held_words = sum(word in low or word in text for word in words)
            if not held_words:
                continue
            if held_words < len(words):  # some words only: below every article holding all
                tier, named = 4, held_words
            else:
                named += sum(word in article.title.lower() for word in words) if article else 0
        scored.append((tier, -named, len(address), address))
    return [address for *_, address in heapq.nsmallest(limit, scored)]


def _text(article: Article) -> str:
    return " ".join((article.title, article.capsule, *article.tags)).lower()


def by_text(pairs: Iterable[tuple[str, Article | None]], query: str) -> list[str]:
    """BM25 over a small store's articles with the search worker's tokens, best first (before
    the server is built; the server builds the same in steps between requests)."""
    from canon_ls.core.retrieval.search import SearchIndex, article_tokens

    index = SearchIndex()
    for address, article in pairs:
        if article is not None:
            index.add_tokens(address, article_tokens(article))
    return best(index, query)


def best(index: Any, query: str) -> list[str]:
    """The addresses a built BM25 index ranks for `query`, best first."""
    from canon_ls.core.retrieval.search import boosted, tokenize

    return [address for address, _ in index.query_tokens(boosted(tokenize(query)), LIMIT)[0]]
