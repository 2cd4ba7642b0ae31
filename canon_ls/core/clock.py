"""Today's date for `updated` and journal names; CANON_TODAY overrides it (SPEC §5)."""

from __future__ import annotations

import datetime as _dt
import os
import re

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def today() -> str:
    """Return 'YYYY-MM-DD' from the local clock, or CANON_TODAY when it holds a valid date."""
    forced = os.environ.get("CANON_TODAY", "").strip()
    if forced and _DATE.fullmatch(forced):
        try:
            _dt.date.fromisoformat(forced)
            return forced
        except ValueError:
            pass
    return _dt.date.today().isoformat()
