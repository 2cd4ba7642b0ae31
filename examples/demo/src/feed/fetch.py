"""HTTP fetching with a per-feed retry budget and conditional requests (ETag)."""

from __future__ import annotations

import time
import urllib.request


def fetch(url: str, etag: str | None = None, timeout: float = 10.0, budget: int = 3) -> bytes:
    headers = {"User-Agent": "feedlet/0.3"}
    if etag:
        headers["If-None-Match"] = etag
    for attempt in range(budget):
        try:
            request = urllib.request.Request(url, headers=headers)
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.read()
        except OSError:
            if attempt + 1 == budget:
                raise
            time.sleep(2**attempt)
    return b""
