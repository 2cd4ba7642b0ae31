"""Journal entries (SPEC §6 journal): names, front matter, and reading one entry back.

Pure functions over text; Store.journal writes an entry through fsio (whole or not at all) and
Store lists and indexes them. Kept apart so the store module stays about the index.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from canon_ls.core import article as art

_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class JournalEntry:
    name: str
    path: Path
    date: str
    subject: tuple[str, ...]
    source: str
    session: str
    mtime_ns: int = 0
    size: int = 0


def sanitise_slug(text: str) -> str:
    """[a-z0-9-] only, at most 60 characters, no leading/trailing hyphen (§6 journal)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(slug) > 60:
        slug = slug[:60].rstrip("-")
    return slug


def slug_from_body(body: str, words: int = 6) -> str:
    """The body's first words as a slug, or 'entry'."""
    ascii_text = unicodedata.normalize("NFKD", body).encode("ascii", "ignore").decode()
    found = re.findall(r"[a-z0-9]+", ascii_text.lower())
    return sanitise_slug("-".join(found[:words])) or "entry"


def names(date: str, stem: str) -> Iterator[str]:
    """Candidate file names, first free wins: <date>-<stem>.md, then -2, -3, …"""
    yield f"{date}-{stem}.md"
    for n in range(2, 100000):
        yield f"{date}-{stem}-{n}.md"


def subjects_of(value: object) -> list[str]:
    """A `subject` as given: an array of strings, or a bare string taken as a one-element
    array (SPEC §6: never silently dropped). Anything else names nothing."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [item for item in value if isinstance(item, str)]
    return []


def header(
    date: str,
    subject: object,
    source: str,
    session: str | None,
    address_of: Callable[[str], str],
) -> str:
    """Front matter of a new entry (§6): date, subject (addresses normalised with
    `address_of`, duplicates and empties dropped, only when any remain), source, session."""
    subjects: list[str] = []
    for item in subjects_of(subject):
        address = address_of(item)
        if address and address not in subjects:
            subjects.append(address)
    lines = ["---\n", f"date: {date}\n"]
    if subjects:
        lines.append("subject:\n")
        lines += [f"  - {art.format_scalar(s)}\n" for s in subjects]
    lines.append(f"source: {art.format_scalar(source or 'cli')}\n")
    if session:
        lines.append(f"session: {art.format_scalar(str(session))}\n")
    lines.append("---\n")
    return "".join(lines)


def entry_of(
    name: str, path: Path, data: bytes, mtime_ns: int, size: int
) -> tuple[JournalEntry, str]:
    """An entry read back from its bytes, and its body. The date falls back to the file name's;
    a malformed front matter gives an entry without subject (never an exception)."""
    parsed = art.parse(data, name)
    meta = parsed.meta
    date = meta.get("date") if isinstance(meta.get("date"), str) else ""
    if not date or not _ISO.fullmatch(date.strip()):
        date = name[:10] if _ISO.fullmatch(name[:10]) else ""
    subject = tuple(subjects_of(meta.get("subject")))
    source = meta.get("source") if isinstance(meta.get("source"), str) else ""
    session = meta.get("session") if isinstance(meta.get("session"), str) else ""
    entry = JournalEntry(
        name, path, date.strip(), subject, source or "", session or "", mtime_ns, size
    )
    return entry, parsed.body


def newest_first(entries: Iterable[JournalEntry]) -> list[JournalEntry]:
    """Journal order: by date, then file time, then name, newest first."""
    return sorted(entries, key=lambda e: (e.date, e.mtime_ns, e.name), reverse=True)
