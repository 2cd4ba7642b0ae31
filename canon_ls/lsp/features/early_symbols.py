"""The first workspace symbols, answered at once from what the server holds (SPEC §10).

Before the store has loaded and the BM25 worker is ready, the answer comes from every address
(the load's first step lists them) and the articles read so far: their titles, capsules and
tags. An address typed as such ranks first (exact, then starting with the query, then holding
it), then articles holding every word of the query, most words in the address or title first,
then those holding some of its words, the most first (BM25 too ranks an article holding some
words of the query). Body words wait for BM25, which answers as soon as it is ready (the next
keystroke).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from canon_ls.core.article import Article


def rank(
    query: str, addresses: Iterable[str], articles: Iterable[Article], limit: int
) -> list[str]:
    """The best `limit` addresses for `query` (every address, by name, for an empty one)."""
    lowered = query.strip().lower()
    words = lowered.split()
    held = {a.address: a for a in articles}
    scored: list[tuple[int, int, int, str]] = []
    for address in addresses:
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
