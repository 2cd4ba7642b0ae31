"""Find the path-shaped token or `[[wikilink]]` under the cursor on one line."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from canon_ls.lsp import imports

if TYPE_CHECKING:
    from canon_ls.core.storage.reader import Reader
    from canon_ls.lsp.wire.convert import Text

WINDOW = 1000  # characters scanned either side of the cursor
_WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_PATH_CHAR = re.compile(r"[\w@+~.\-/\\:]")
_TRIM = ".,;:!?-"


@dataclass(frozen=True)
class CursorToken:
    text: str  # the path or the wikilink target (no |label, no #heading)
    start: int  # code-point columns of the whole token on the line
    end: int
    wikilink: bool


def token_at(line: str, column: int) -> CursorToken | None:
    """The wikilink or path token touching `column`, or None."""
    lo = max(0, column - WINDOW)
    window = line[lo : column + WINDOW]
    col = column - lo
    for m in _WIKILINK.finditer(window):
        if m.start() <= col <= m.end():
            target = m.group(1).split("|", 1)[0].split("#", 1)[0].strip()
            if not target:
                return None
            return CursorToken(target, m.start() + lo, m.end() + lo, True)
    start = col
    while start > 0 and _PATH_CHAR.match(window[start - 1]):
        start -= 1
    end = col
    while end < len(window) and _PATH_CHAR.match(window[end]):
        end += 1
    text = window[start:end]
    # Leading './' or '/' are part of a path; trailing punctuation ends a sentence.
    while text and text[-1] in _TRIM:
        text = text[:-1]
        end -= 1
    while text and text[0] in ".,;:!?-" and not text.startswith(("./", "../")):
        text = text[1:]
        start += 1
    if not text or "://" in window[start : end + 3] or not (start <= col <= end):
        return None
    return CursorToken(text, start + lo, end + lo, False)


def wikilink_open_before(line: str, column: int) -> int | None:
    """Column just after an unclosed `[[` before the cursor (completion context), else None."""
    head = line[max(0, column - 300) : column]
    at = head.rfind("[[")
    return None if at == -1 or "]]" in head[at:] else column - (len(head) - at - 2)


def named(
    reader: Reader,
    project: Path,
    document: Path,
    kind: str,
    text: Text,
    line_no: int,
    line: str,
    col: int,
) -> tuple[CursorToken, str, bool, Path | None] | None:
    """What the text under the cursor names in `document`: (its token, the address, whether only
    an article at exactly that address answers, the file or folder it names: None for a link)."""
    hit = next(iter(imports.on_line(project, document, text.line, line_no, col, line=line)), None)
    if hit is not None:  # an import in the language's own syntax naming a project module
        address = reader.address_of(str(hit.path), as_path=True)
        found = CursorToken(line[hit.start : hit.end], hit.start, hit.end, False)
        return (found, address, False, hit.path) if address else None
    token = token_at(line, col)
    if token is None:
        return None
    try:
        if token.wikilink:
            address = reader.address_of(token.text)
            return (token, address, False, None) if address else None
        raw = token.text.replace("\\", "/")
        candidates = [project / raw.lstrip("/")]
        if raw.startswith(("./", "../")) or kind == "asset":
            candidates.insert(0, document.parent / raw)
        existing = next((c for c in candidates if os.path.exists(c)), None)
        if existing is not None:
            address = reader.address_of(str(existing.resolve()), as_path=True)
        else:
            address = reader.address_of(raw)
    except ValueError:
        return None
    path = existing or candidates[0 if raw.startswith(("./", "../")) else -1]
    return (token, address, existing is None and "/" not in raw, path) if address else None
