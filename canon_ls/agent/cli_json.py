"""`--format json` of the commands that print data."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from canon_ls.core.storage.article import Article
    from canon_ls.core.storage.store import Store


def emit(value: object) -> int:
    """Print one JSON value and a newline; exit 0."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")
    return 0


def article(store: Store, address: str) -> dict[str, Any] | None:
    """An article's fields as `read` shows them, None when there is none."""
    art: Article | None = store.article(address)
    if art is None:
        return None
    return {
        "address": address,
        "capsule": art.capsule,
        "updated": art.updated or None,
        "reviewed": str(art.meta.get("reviewed") or "") or None,
        "scope": art.scope,
        "title": art.title,
        "body": art.body,
    }


def stale(store: Store, address: str) -> dict[str, Any] | None:
    """The staleness evidence of one project article (its `canon check` JSON), else None."""
    from canon_ls.core.git.staleness import evidence_for

    try:
        found = evidence_for(store, address)
    except OSError:
        return None
    return found.to_json() if found is not None else None


def read(store: Store, path: str) -> int:
    asked = store.address_of(path)
    store.refresh()
    governing = store.governing(asked) if asked else None
    return emit(
        {
            "asked": asked,
            "governing": governing,
            "article": article(store, governing) if governing else None,
            "stale": stale(store, governing) if governing else None,
            "journal": store.journal_names(governing) if governing else [],
        }
    )


def map_(store: Store, prefix: str) -> int:
    from canon_ls.core.storage.store import iter_addresses

    store.refresh()
    addresses = iter_addresses(store, store.address_of(prefix) if prefix else "")
    return emit([{"address": a, "capsule": _capsule(store, a)} for a in addresses])


def search(store: Store, query: str, journal: bool, limit: int = 20) -> int:
    store.refresh()
    hits, total = store.search_articles(query, limit)
    out: dict[str, Any] = {
        "query": query,
        "total": total,
        "articles": [
            {"address": a, "score": round(score, 4), "capsule": _capsule(store, a)}
            for a, score in hits
        ],
    }
    if journal:
        entries, found = store.search_journal(query, limit)
        out["journal_total"] = found
        out["journal"] = [
            {"name": e.name, "date": e.date, "subject": list(e.subject), "score": round(s, 4)}
            for e, s in entries
        ]
    return emit(out)


def _capsule(store: Store, address: str) -> str:
    art = store.article(address)
    return art.capsule if art is not None else ""


def links(store: Store, asked: str, governing: str) -> int:
    art = store.article(governing)
    targets = list(dict.fromkeys(art.targets if art is not None else ()))
    return emit(
        {
            "asked": asked,
            "governing": governing,
            "outbound": [{"address": t, "exists": store.article(t) is not None} for t in targets],
            "backlinks": store.backlinks(governing),
            "journal": store.journal_names(governing),
        }
    )


def review(store: Store, governing: str, before: dict[str, Any] | None) -> int:
    art = article(store, governing) or {}
    return emit(
        {
            "address": governing,
            "reviewed": art.get("reviewed"),
            "updated": art.get("updated"),
            "stale": stale(store, governing),
            "was_stale": before,
        }
    )


def status(store: Store) -> int:
    from canon_ls.core.checking import assets, check
    from canon_ls.core.git import changes, staleness

    schema = "absent" if not store.schema_file.exists() else "ok"
    problem = store.schema().error if schema == "ok" else ""
    out: dict[str, Any] = {
        "store": str(store.root),
        "articles": len(store.addresses()),
        "journal_entries": len(store.journal_entries()),
        "schema": "malformed" if problem else schema,
        "schema_problem": problem or None,
        "schema_ignored": list(store.schema().notes),
        "orphans": None,
        "stale": None,
    }
    with contextlib.suppress(OSError):  # null: not known (the text says "unavailable")
        project_assets = assets.Assets(store.project, store.root)
        out["orphans"] = sorted(check.orphans(store, project_assets))
        times = changes.ChangeTimes(store.project)
        out["stale"] = sorted(staleness.stale(store, project_assets, times))
    return emit(out)
