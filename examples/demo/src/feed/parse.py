"""RSS 2.0 parsing into plain item dicts; Atom was dropped in 0.3."""

from __future__ import annotations

import xml.etree.ElementTree as ET


def parse(feed: str, data: bytes) -> list[dict[str, str]]:
    root = ET.fromstring(data)
    items = []
    for node in root.iter("item"):
        link = node.findtext("link", "")
        items.append(
            {
                "guid": node.findtext("guid") or link,
                "feed": feed,
                "title": (node.findtext("title") or "").strip(),
                "link": link,
                "published": node.findtext("pubDate", ""),
            }
        )
    return items
