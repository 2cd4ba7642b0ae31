"""Imports written in a language's own syntax -> the project file or folder they name (SPEC
§10 hover). One module per language, each a table of line rules; this one picks the module
by the document's extension and holds what they share: project facts (pyproject.toml,
tsconfig.json, go.mod, ...) parsed once and re-parsed when their stat changes, and existence
checks (a few stats). Nothing outside the project resolves: the standard library and
third-party packages answer None after a handful of stats at most.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_LINE = 2000  # characters: longer lines are no imports (never a slow scan)
Lines = Callable[[int], str]  # line n of the document ('' past the end)
Found = Iterator[tuple[int, int, Callable[[], Path | None]]]  # a name's columns, its resolution


@dataclass(frozen=True)
class Import:
    start: int  # code-point columns on the line of the name the import is written with
    end: int
    path: Path  # the file or folder it names, inside the project


def on_line(
    project: Path, doc: Path, lines: Lines, n: int, column: int | None = None
) -> list[Import]:
    """The imports written on line `n` of `doc` that name something inside `project` (only
    the one under `column` when given: a hover resolves no other name)."""
    from . import go, javascript, python, rust

    language = {".py": python, ".pyi": python, ".go": go, ".rs": rust}.get(doc.suffix)
    if language is None and doc.suffix in javascript.EXTENSIONS:
        language = javascript
    if language is None or len(lines(n)) > MAX_LINE:
        return []
    out = []
    for start, end, resolve in language.imports(Where(project, doc), lines, n):
        if column is not None and not start <= column <= end:
            continue
        target = resolve()
        if target is not None and within(target, project):
            out.append(Import(start, end, Path(os.path.normpath(target))))
    return out


def at(project: Path, doc: Path, lines: Lines, n: int, column: int) -> Import | None:
    return next(iter(on_line(project, doc, lines, n, column)), None)


@dataclass(frozen=True)
class Where:
    project: Path
    doc: Path

    def nearest(self, *names: str) -> Path | None:
        """The nearest `names` file from the document's folder up to the project (stats)."""
        folder = self.doc.parent
        while within(folder, self.project):
            for name in names:
                if (folder / name).is_file():
                    return folder / name
            folder = folder.parent
        return None


_FACTS: dict[tuple[str, Callable[[str, Path], Any]], tuple[tuple[int, int], Any]] = {}


def facts(path: Path, parse: Callable[[str, Path], Any]) -> Any:
    """`parse(text, path)` of a project file, cached while its mtime and size stay the same;
    None when it cannot be read or parsed."""
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
        if len(_FACTS) > 1000:
            _FACTS.clear()
        cached = _FACTS[key] = (stamp, value)
    return cached[1]


def first(candidates: Iterable[Path], folders: bool = True) -> Path | None:
    """The first candidate that is a file (or, with `folders`, a folder)."""
    for path in candidates:
        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(mode) or (folders and stat.S_ISDIR(mode)):
            return path
    return None


def within(path: Path, project: Path) -> bool:
    try:
        return os.path.commonpath([os.path.normpath(path), project]) == str(project)
    except ValueError:
        return False
