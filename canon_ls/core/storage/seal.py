"""Cache files read whole (the change times, the hooks' lane corpus) carry their length and CRC-32
in front, as each record of the parse cache does (core/storage/cache.py): a file cut short,
extended or
with a byte flipped is discarded and rebuilt, never believed. Only zlib: a hook imports this."""

from __future__ import annotations

import zlib


def sealed(payload: bytes) -> bytes:
    """The file's bytes: length (4 bytes), CRC-32 (4 bytes), then the payload."""
    return len(payload).to_bytes(4, "big") + zlib.crc32(payload).to_bytes(4, "big") + payload


def unsealed(data: bytes) -> bytes | None:
    """The payload of a sealed() file; None when it is cut short, extended or damaged."""
    payload = data[8:]
    if len(data) < 8 or int.from_bytes(data[:4], "big") != len(payload):
        return None
    return payload if zlib.crc32(payload) == int.from_bytes(data[4:8], "big") else None
