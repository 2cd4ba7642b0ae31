"""`canon graph`: one self-contained HTML page showing the store as a graph (SPEC §11.1, §12)."""

from __future__ import annotations

import html
import json
import re
from typing import Any

from canon_ls.core.checking import assets as assets_mod
from canon_ls.core.checking import check
from canon_ls.core.git import changes, staleness
from canon_ls.core.storage.address import parent
from canon_ls.core.storage.store import Store

# Above this many articles asset nodes are left out: the page stays usable in a browser.
ASSET_NODE_LIMIT = 2000


def graph_data(store: Store) -> dict[str, Any]:
    """Nodes and edges as plain data (also what the page embeds)."""
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, str]] = []
    if not store.exists():
        return {"nodes": nodes, "edges": edges, "root": str(store.root), "assets_omitted": False}
    project_assets = assets_mod.Assets(store.project, store.root)
    orphans = set(check.orphans(store, project_assets))
    stale = staleness.stale(store, project_assets, changes.ChangeTimes(store.project))
    addresses = store.addresses()
    known = set(addresses)
    with_assets = len(addresses) <= ASSET_NODE_LIMIT
    missing: set[str] = set()
    for address in addresses:
        art = store.article(address)
        if art is None:
            continue
        status = "stale" if address in stale else "orphan" if address in orphans else "ok"
        nodes.append(
            {
                "id": "a:" + address,
                "kind": "article",
                "label": address,
                "capsule": art.capsule,
                "updated": art.updated,
                "scope": art.scope,
                "status": status,
                "note": stale.get(address, ""),
                "problems": list(art.problems),
            }
        )
        for target in map(store.link_target, art.targets):
            if target in known:
                edges.append({"source": "a:" + address, "target": "a:" + target, "kind": "link"})
            else:
                missing.add(target)
                edges.append({"source": "a:" + address, "target": "m:" + target, "kind": "broken"})
        ancestor = store.governing(parent(address)) if "/" in address else None
        if ancestor:
            edges.append({"source": "a:" + address, "target": "a:" + ancestor, "kind": "parent"})
        if with_assets and ":" not in address:
            for rel in project_assets.of(address):
                nodes.append({"id": "f:" + rel, "kind": "asset", "label": rel})
                edges.append({"source": "a:" + address, "target": "f:" + rel, "kind": "asset"})
    nodes += [{"id": "m:" + t, "kind": "missing", "label": t} for t in sorted(missing)]
    for entry in store.journal_entries():
        nodes.append(
            {
                "id": "j:" + entry.name,
                "kind": "journal",
                "label": entry.name,
                "date": entry.date,
                "subject": list(entry.subject),
                "source": entry.source,
            }
        )
        for subject in entry.subject:
            governing = store.governing(subject)
            if governing:
                edges.append(
                    {"source": "j:" + entry.name, "target": "a:" + governing, "kind": "subject"}
                )
    return {
        "nodes": list({n["id"]: n for n in nodes}.values()),  # an asset under two articles: once
        "edges": edges,
        "root": str(store.root),
        "assets_omitted": not with_assets,
    }


def _json_for_script(data: object) -> str:
    """JSON that cannot close its <script> element or start markup."""
    text = json.dumps(data, ensure_ascii=False)
    for raw, safe in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, safe)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _index_html(data: dict[str, Any]) -> str:
    """Plain tables under the drawing: readable without script, every value escaped."""
    e = html.escape
    rows = [
        f'<tr class="{e(n["status"])}"><td>{e(n["label"])}</td><td>{e(n["capsule"])}</td>'
        f"<td>{e(n['updated'])}</td><td>{e(n['status'])}{' (rule)' if n['scope'] == 'rule' else ''}"
        f"</td></tr>"
        for n in data["nodes"]
        if n["kind"] == "article"
    ]
    entries = [
        f"<tr><td>{e(n['label'])}</td><td>{e(', '.join(n['subject']))}</td>"
        f"<td>{e(n['source'])}</td></tr>"
        for n in data["nodes"]
        if n["kind"] == "journal"
    ]
    broken = [f"<li>{e(n['label'])}</li>" for n in data["nodes"] if n["kind"] == "missing"]
    parts = [
        "<h2>Articles</h2><table><tr><th>address</th><th>capsule</th><th>updated</th>"
        "<th>status</th></tr>" + "".join(rows) + "</table>",
        "<h2>Journal</h2><table><tr><th>entry</th><th>subject</th><th>harness</th></tr>"
        + "".join(entries)
        + "</table>",
    ]
    if broken:
        parts.append("<h2>Broken link targets</h2><ul>" + "".join(broken) + "</ul>")
    return "\n".join(parts)


def render(store: Store) -> str:
    """The whole page as one string."""
    data = graph_data(store)
    counts = {k: sum(1 for n in data["nodes"] if n["kind"] == k) for k in ("article", "journal")}
    title = html.escape(f"canon graph: {data['root']}")
    omitted = f" (asset nodes left out above {ASSET_NODE_LIMIT} articles)"
    summary = html.escape(
        f"{counts['article']} articles, {counts['journal']} journal entries, "
        f"{len(data['edges'])} edges{omitted if data.get('assets_omitted') else ''}"
    )
    fills = {
        "TITLE": title,
        "SUMMARY": summary,
        "INDEX": _index_html(data),
        "DATA": _json_for_script(data),
    }
    # One pass, so store text that happens to contain a placeholder is never expanded.
    from importlib.resources import files

    page = files("canon_ls.agent").joinpath("graph.html").read_text("utf-8")  # `@@NAME@@` holes
    return re.sub(r"@@([A-Z]+)@@", lambda m: fills[m.group(1)], page)
