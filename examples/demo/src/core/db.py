"""SQLite storage for feed items; one connection per process, WAL mode."""

from __future__ import annotations

import sqlite3
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
    guid TEXT PRIMARY KEY,
    feed TEXT NOT NULL,
    title TEXT NOT NULL,
    link TEXT NOT NULL,
    published TEXT,
    read INTEGER NOT NULL DEFAULT 0
);
"""


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(SCHEMA)
    return conn


def upsert(conn: sqlite3.Connection, items: list[dict[str, str]]) -> int:
    with conn:
        cur = conn.executemany(
            "INSERT OR IGNORE INTO items (guid, feed, title, link, published) "
            "VALUES (:guid, :feed, :title, :link, :published)",
            items,
        )
    return cur.rowcount
