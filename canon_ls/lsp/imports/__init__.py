"""Imports in a language's own syntax -> the project file or folder they name (SPEC §10 hover)."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from canon_ls.core.storage.address import within

MAX_LINE = 2000  # characters: longer lines are no imports (never a slow scan)
Lines = Callable[[int], str]  # line n of the document ('' past the end)
Found = Iterator[tuple[int, int, Callable[[], Path | None]]]  # a name's columns, its resolution


class Import(NamedTuple):
    start: int  # code-point columns of the name as written
    end: int
    path: Path  # the file or folder it names, inside the project


def on_line(
    project: Path,
    doc: Path,
    lines: Lines,
    n: int,
    column: int | None = None,
    seen: Any = None,
    line: str | None = None,
) -> list[Import]:
    """The imports on line `n` of `doc` naming something inside `project`."""
    language = _LANGUAGES.get(doc.suffix)
    if line is None:  # `line`: line n when the caller holds it
        line = lines(n) if language is not None else ""
    if language is None or not line or len(line) > MAX_LINE:
        return []
    out = []
    for start, end, resolve in language.imports(
        Where(project, doc, {} if seen is None else seen), lines, n, line
    ):
        if column is None or start <= column <= end:
            target = resolve()
            if target is not None and within(path := os.path.normpath(target), project):
                out.append(Import(start, end, Path(path)))
    return out


Rules = tuple[tuple[re.Pattern[str], str, Callable[["Where", str], Path | None]], ...]


def by_rules(rules: Rules) -> Callable[[Where, Lines, int, str], Found]:
    """A language's table of rules: (line pattern, its group, how that group resolves)."""

    def imports(where: Where, lines: Lines, n: int, line: str) -> Found:
        for pattern, group, resolve in rules:
            for m in pattern.finditer(line):
                yield m.start(group), m.end(group), partial(resolve, where, m.group(group))

    return imports


def import_lines(doc: Path, source: str, line_of: Callable[[int], int]) -> list[int]:
    """The lines of a whole document that may hold an import."""
    language = _LANGUAGES.get(doc.suffix)
    found: set[int] = set()
    for m in language.CANDIDATES.finditer(source) if language else ():
        found.update(range(line_of(m.start()), line_of(m.end()) + 1))
    return sorted(found)


class Where(NamedTuple):
    project: Path
    doc: Path
    seen: dict[Any, Any]  # what one request found on disk: path -> stat mode (0: missing)

    def first(self, candidates: Iterable[Path], folders: bool = True) -> Path | None:
        """The first candidate that is a file (or, with `folders`, a folder)."""
        for path in candidates:
            mode = self.seen.get(path)
            if mode is None:
                try:
                    mode = os.stat(path).st_mode
                except (OSError, ValueError):
                    mode = 0
                self.seen[path] = mode
            if stat.S_ISREG(mode) or (folders and stat.S_ISDIR(mode)):
                return path
        return None

    def nearest(self, *names: str) -> Path | None:
        """The nearest `names` file from the document's folder up to the project."""
        if names not in self.seen:
            folder, found = self.doc.parent, None
            while found is None and within(folder, self.project):
                found = self.first([folder / name for name in names], folders=False)
                folder = folder.parent
            self.seen[names] = found
        return self.seen[names]


_FACTS: dict[tuple[str, Callable[[str, Path], Any]], tuple[tuple[int, int], Any]] = {}


def facts(path: Path, parse: Callable[[str, Path], Any]) -> Any:
    """`parse(text, path)`, cached while the file's mtime and size stay; None if unreadable."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    key, stamp = (str(path), parse), (st.st_mtime_ns, st.st_size)
    cached = _FACTS.get(key)
    if cached is None or cached[0] != stamp:
        try:
            value = parse(path.read_text(encoding="utf-8", errors="replace"), path)
        except (OSError, ValueError, TypeError, AttributeError):
            value = None
        cached = _FACTS[key] = (stamp, value)
    return cached[1]


from canon_ls.lsp.imports import go, javascript, python, rust  # noqa: E402  (they import the helpers above)

_LANGUAGES = {suffix: m for m in (python, javascript, go, rust) for suffix in m.EXTENSIONS}
