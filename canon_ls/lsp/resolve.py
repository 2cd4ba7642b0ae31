"""From what the cursor touches to an address the store can answer for.

Adapter logic only: which text is a path (cursor.py) and which base it is relative to. The
address itself always comes from `Store.address_of` and resolution from `Store.governing`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lsprotocol import types

from . import convert, imports
from .convert import Text
from .cursor import CursorToken, token_at
from .state import CanonLanguageServer, Where


@dataclass(frozen=True)
class Target:
    where: Where  # the document the cursor is in
    address: str  # what the token names
    governing: str  # the article answering for it (§4)
    token: CursorToken | None  # None when the answer is the document's own article (line 1)
    path: Path | None  # the file on disk the token names, if it exists
    line: int = 0  # the cursor's line
    text: Text | None = None  # the document's text, for ranges
    store: Any = None  # what answered (the Store, or the article files while it loads)


def at_cursor(
    ls: CanonLanguageServer,
    uri: str,
    pos: types.Position,
    *,
    own_on_first_line: bool = True,
    where: Where | None = None,
) -> Target | None:
    """`where`: the document's place when the caller located it already (`ls.view`)."""
    where = where or ls.where(uri)
    if where is None or where.folder.store is None or where.kind == "store":
        return None
    text = ls.text_of(uri)
    if text is None:
        return None
    codec = ls.workspace.position_codec
    line_no, col, line = convert.from_client(codec, text, pos)
    token = token_at(line, col)
    # an import in the language's own syntax naming a project module
    named = next(
        iter(imports.on_line(where.folder.project, where.path, text.line, line_no, col)), None
    )
    if named is not None:
        token = CursorToken(line[named.start : named.end], named.start, named.end, False)
    if token is not None:
        target = resolve_token(where, token, named.path if named else None)
        if target is not None:
            return replace(target, line=line_no, text=text)
    if own_on_first_line and line_no == 0 and where.kind == "asset":
        governing = where.governing()
        if governing:
            return Target(
                where, where.address, governing, None, where.path, line_no, text, where.store
            )
    return None


def resolve_token(where: Where, token: CursorToken, named: Path | None = None) -> Target | None:
    """The governed address a token names; None for words that name nothing (no empty hovers).
    `named`: the file or folder the token names when an import resolver found it."""
    store = where.store
    if token.wikilink:
        try:
            address = store.address_of(token.text)
        except ValueError:
            return None
        if not address:
            return None
        governing = store.governing(address)  # the address itself when it is an article
        return Target(where, address, governing, token, None, store=store) if governing else None
    raw = token.text.replace("\\", "/")
    candidates = [named] if named else [where.folder.project / raw.lstrip("/")]
    if named is None and (raw.startswith(("./", "../")) or where.kind == "asset"):
        candidates.insert(0, where.path.parent / raw)
    existing = next((c for c in candidates if _exists(c)), None)
    try:
        if existing is not None:
            address = store.address_of(str(existing.resolve()), as_path=True)
        else:
            address = store.address_of(raw)
    except ValueError:
        return None
    if not address:
        return None
    governing = store.governing(address)  # the address itself when it is an article
    if not governing or not (governing == address or existing is not None or "/" in raw):
        return None
    return Target(where, address, governing, token, existing, store=store)


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def imported(
    where: Where, text: Text, lines: range
) -> Iterator[tuple[int, imports.Import, Target]]:
    """Each import on `lines` naming a governed project module (document links, inlay hints)."""
    seen: dict[Any, Any] = {}  # one stat per path for the whole document
    for n in imports.import_lines(where.path, text.source, lambda at: text.line_col(at)[0]):
        if n not in lines:
            continue
        line = text.line(n)
        for found in imports.on_line(where.folder.project, where.path, text.line, n, seen=seen):
            token = CursorToken(line[found.start : found.end], found.start, found.end, False)
            target = resolve_token(where, token, found.path)
            if target is not None:
                yield n, found, target
