"""The one calendar canon dates by: the UTC date, as pi-canon stamps `updated` and journal names, so
two tools (or two people in different zones) sharing a store agree on "today"."""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import re

DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def today() -> str:
    """Return today's UTC date 'YYYY-MM-DD', or CANON_TODAY when it holds a valid date."""
    forced = os.environ.get("CANON_TODAY", "").strip()
    if forced and DATE.fullmatch(forced):
        with contextlib.suppress(ValueError):  # a date that does not exist (2026-02-30)
            _dt.date.fromisoformat(forced)
            return forced
    return _dt.datetime.now(_dt.UTC).date().isoformat()


def day_of(ts: float) -> str:
    """The UTC calendar day of an epoch time."""
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).date().isoformat()


def day_start(date: str) -> float:
    """The epoch time at which the UTC day `date` ('YYYY-MM-DD') begins."""
    return _dt.datetime.combine(_dt.date.fromisoformat(date), _dt.time(), _dt.UTC).timestamp()
