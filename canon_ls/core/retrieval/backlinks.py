"""The inverse wikilink index (target -> linking articles) that `Store.backlinks` answers from."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from canon_ls.core.storage.address import link_stem
from canon_ls.core.storage.article import Article


def targets_of(article: Article | None) -> tuple[str, ...]:
    """The addresses an article's wikilinks target (empty for a missing article): the tuple the
    article keeps, not a copy (a set each was 9 MB at 50k articles); the index reads no body."""
    return () if article is None else article.targets


class LinkIndex:
    """source -> targets and target -> sources, updated one source article at a time."""

    def __init__(self, pending: Iterable[str] = ()) -> None:
        self._in: dict[str, set[str]] = {}
        self._stems: dict[str, set[str]] = {}  # 'src/x' -> {'src/x.ts'}: targets with an extension
        self._out: dict[str, tuple[str, ...]] = {}
        self.pending: list[str] = list(pending)

    @property
    def ready(self) -> bool:
        return not self.pending

    def set(self, source: str, links: tuple[str, ...]) -> None:
        """Record the targets `source` links to now (empty: it links nowhere or vanished)."""
        before = self._out.get(source, ())
        if before == links:
            return
        old, targets = frozenset(before), frozenset(links)
        for target in old - targets:
            sources = self._in.get(target)
            if sources is not None:
                sources.discard(source)
                if not sources:
                    del self._in[target]
                    self._stems.get(link_stem(target), set()).discard(target)
        for target in targets - old:
            self._in.setdefault(target, set()).add(source)
            stem = link_stem(target)
            if stem != target:
                self._stems.setdefault(stem, set()).add(target)
        if links:
            self._out[source] = links
        else:
            self._out.pop(source, None)

    def step(self, n: int, lookup: Callable[[str], Article | None]) -> bool:
        """Index up to `n` pending sources from their current articles; True while more wait."""
        pending = self.pending
        for _ in range(min(n, len(pending))):
            source = pending.pop()
            self.set(source, targets_of(lookup(source)))
        return bool(pending)

    def sources(self, target: str, is_article: Callable[[str], bool] | None = None) -> list[str]:
        """Articles linking to `target`, sorted, itself excluded; with `is_article`, links naming it
        by a path (`[[src/x.ts]]` for `src/x`: address.link_target) count too."""
        found = set(self._in.get(target, ()))
        if is_article is not None:
            for named in self._stems.get(target, ()):
                if not is_article(named):
                    found |= self._in.get(named, set())
        return sorted(s for s in found if s != target)
