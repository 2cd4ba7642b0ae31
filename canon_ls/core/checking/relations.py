"""Graph relations (SPEC §7 `relations`): `orphan.warn` (an article no other one links to) and
`children.listed` (an article that does not link its direct children), with their sentences."""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import TYPE_CHECKING

from canon_ls.core.storage.address import link_target

if TYPE_CHECKING:
    from canon_ls.core.storage.article import Article
    from canon_ls.core.storage.store import Store


def inbound(store: Store, addresses: Iterable[str]) -> dict[str, set[str]]:
    """Target address -> the other articles whose wikilinks reach it."""
    inbound: dict[str, set[str]] = {}
    for source in addresses:
        art = store.article(source)
        if art is None:
            continue
        for target in map(store.link_target, art.targets):
            if target != source:
                inbound.setdefault(target, set()).add(source)
    return inbound


def _children(address: str, addresses: list[str]) -> list[str]:
    """Direct child articles: below `address`, with no nearer article in between."""
    lo = bisect.bisect_left(addresses, address + "/")
    hi = bisect.bisect_left(addresses, address + "0")
    out = []
    for child in addresses[lo:hi]:
        up = child.rpartition("/")[0]
        while up != address and not _holds(addresses, up):
            up = up.rpartition("/")[0]
        if up == address:
            out.append(child)
    return out


def _holds(addresses: list[str], address: str) -> bool:
    """Whether `address` is in the sorted `addresses`."""
    i = bisect.bisect_left(addresses, address)
    return i < len(addresses) and addresses[i] == address


def unlisted(address: str, art: Article, addresses: list[str]) -> list[str]:
    children = _children(address, addresses)
    if not children:
        return []
    targets = {link_target(t, lambda a: _holds(addresses, a)) for t in art.targets}
    return [c for c in children if c not in targets]


def unreferenced_message(address: str) -> str:
    return (
        f"No other article references {address}; the schema asks every article to be linked "
        f"from another one: add [[{address}]] where it belongs (e.g. its parent)."
    )


def children_message(address: str, missing: list[str]) -> str:
    shown = ", ".join(f"[[{c}]]" for c in missing[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    return (
        f"{address} does not reference its child article(s) {shown}{more}; the schema asks "
        "every article to list its direct children."
    )
