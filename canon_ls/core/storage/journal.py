"""Journal entries (SPEC §6 journal): names, front matter, and reading one entry back."""

from __future__ import annotations

import datetime as _dt
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from canon_ls.core.storage import article as art

_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
_FRONT = re.compile(r"---\r?\n(.*?)\r?\n---(?:\r?\n|$)", re.S)
_ITEM = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|([^,]+))')


class JournalEntry(NamedTuple):  # a frozen dataclass cost 20 µs an entry to build
    name: str
    directory: str  # one string shared by every entry (a Path each cost 25 ms per 5k)
    date: str
    subject: tuple[str, ...]
    source: str  # who wrote it: `harness` (the shared shape) or `source` (the older one)
    session: str
    mtime_ns: int = 0
    size: int = 0
    logged: str = ""  # the instant it was written, when the entry records one

    @property
    def path(self) -> Path:
        return Path(self.directory, self.name)


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


def _scalar(value: str) -> str:
    """A value as pi-canon writes it: JSON-quoted when YAML could misread it plain."""
    return json.dumps(value, ensure_ascii=False) if art.PI_QUOTES.search(value) else value


def _unscalar(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            got = json.loads(value)
        except ValueError:
            return value
        return got if isinstance(got, str) else value
    return value


def instant(date: str) -> str:
    """`logged`: now in UTC to the millisecond (`2026-11-29T14:03:07.512Z`), on the entry's
    `date` (the file name's day, which CANON_TODAY may fix)."""
    now = _dt.datetime.now(_dt.UTC)
    return f"{date}T{now:%H:%M:%S}.{now.microsecond // 1000:03d}Z"


def header(
    date: str, subject: object, harness: str, session: str | None, address_of: Callable[[str], str]
) -> str:
    """Front matter of a new entry (§6) in the shape pi-canon writes and reads: `subject` as
    a flow list (addresses normalised with `address_of`, duplicates and empties dropped, only
    when any remain), `logged`, `harness`, then our own `session`."""
    subjects = [a for a in dict.fromkeys(map(address_of, subjects_of(subject))) if a]
    lines = ["---\n", *([flow_line(subjects) + "\n"] if subjects else [])]
    lines += [f"logged: {instant(date)}\n", f"harness: {_scalar(harness or 'cli')}\n"]
    if session:
        lines.append(f"session: {_scalar(str(session))}\n")
    lines.append("---\n")
    return "".join(lines)


def flow_line(subjects: list[str]) -> str:
    """`subject: [a, b]` as pi-canon writes and splits it: an item YAML could misread is a JSON
    string, following its comma without a space (else pi-canon misses the quotes)."""
    items = [_scalar(s) for s in subjects]
    flow = items[0] + "".join(("," if i[0] == '"' else ", ") + i for i in items[1:])
    return f"subject: [{flow}]"


_BLOCK = re.compile(r"^subject:[ \t]*(\r?\n)((?:[ \t]*-[ \t].*\r?\n)+)", re.M)


def flow_shaped(text: str) -> str | None:
    """The entry with the older block-list `subject` (which pi-canon reads as naming nothing) as
    the one-line list both tools read; None when there is nothing to mend. Other bytes stay."""
    front = _FRONT.match(text)
    found = _BLOCK.search(text, front.start(1), front.end(1) + 2) if front else None
    if found is None:
        return None
    try:
        items = art.parse_front_matter("subject:\n" + found.group(2).replace("\r\n", "\n"))
    except ValueError:
        return None
    subjects = subjects_of(items.get("subject"))
    if not subjects:
        return None
    return text[: found.start()] + flow_line(subjects) + found.group(1) + text[found.end() :]


def _inline(text: str) -> dict[str, object]:
    """The one-line keys of an entry's front matter as pi-canon reads them (`subject: [a, b]`,
    `logged: …`, `harness: …`): for front matter YAML refuses (an unquoted `- x` in the list)."""
    front = _FRONT.match(text[1:] if text.startswith("\ufeff") else text)
    found: dict[str, object] = {}
    for line in front.group(1).splitlines() if front else ():
        key, colon, value = line.partition(":")
        if colon and key in ("subject", "logged", "harness") and value.strip():
            raw = value.strip()
            found.setdefault(key, list(flow_subjects(raw)) if key == "subject" else _unscalar(raw))
    return found


def flow_subjects(raw: str) -> tuple[str, ...]:
    """An inline `subject` value, split as pi-canon does: brackets dropped, items split on
    commas outside double quotes, quoted items unescaped, empty items dropped (a quoted item
    after a space is a quoted item too, as YAML reads it; pi-canon's reader misses that)."""
    inner = re.sub(r"^\[|\]$", "", raw.strip())
    out = []
    for m in _ITEM.finditer(inner):
        value = _unscalar(f'"{m.group(1)}"') if m.group(1) is not None else m.group(2).strip()
        if value:
            out.append(value)
    return tuple(out)


def entry_of(
    name: str, path: Path, data: bytes, mtime_ns: int, size: int
) -> tuple[JournalEntry, str]:
    """An entry read back from its bytes, and its body: either shape (`subject: [a, b]`, `logged`,
    `harness`; or `date`, a block-list `subject`, `source`)."""
    parsed = art.parse(data, name)
    meta = parsed.meta
    if parsed.problems:
        meta = {**meta, **_inline(art.decode(data)[0])}

    def text(key: str) -> str:
        value = meta.get(key)
        return value.strip() if isinstance(value, str) else ""

    logged = text("logged")
    date = next((d for d in (text("date"), logged[:10], name[:10]) if _ISO.fullmatch(d)), "")
    subject = tuple(dict.fromkeys(subjects_of(meta.get("subject"))))  # pi-canon keeps repeats
    source = text("harness") or text("source")
    where = str(path.parent)
    entry = JournalEntry(
        name, where, date, subject, source, text("session"), mtime_ns, size, logged
    )
    return entry, parsed.body


def order(entry: JournalEntry) -> tuple[str, str, int, int, str]:
    """Journal order, oldest first: by day, then the instant recorded (entries of one day
    written by either tool interleave as written), then the collision number (`x.md` before
    `x-2.md`, whatever a checkout did to file times), file time, name."""
    number = re.search(r"-(\d+)\.md$", entry.name)
    return (
        entry.date,
        entry.logged,
        int(number.group(1)) if number else 1,
        entry.mtime_ns,
        entry.name,
    )


def newest_first(entries: Iterable[JournalEntry]) -> list[JournalEntry]:
    """Journal order (`order`), newest first."""
    return sorted(entries, key=order, reverse=True)
