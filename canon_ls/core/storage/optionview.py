"""How the six options are shown (SPEC §13): one line per option with its source, the JSON form for
tools, and the line of a file a problem is on."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from canon_ls.core.storage.layout import (
    DEFAULT_SOURCE,
    OPTION_KEYS,
    Options,
    Problem,
    project_file,
    settings_file,
    show,
)


def source_kind(options: Options, key: str) -> str:
    """default | user | project | the explicit layer's name (flag, editor)."""
    source = options.sources[key]
    if source == DEFAULT_SOURCE:
        return DEFAULT_SOURCE
    if source == str(project_file(options.project)):
        return "project"
    if source == str(settings_file()):
        return "user"
    return source


def home(path: str | Path) -> str:
    text = str(path)
    home = os.path.expanduser("~")
    if home not in ("", "/", "~") and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home) :]
    return text


def describe(options: Options) -> list[str]:
    """One line per option: `KEY = VALUE  SOURCE`, the sources aligned."""
    labels = {
        DEFAULT_SOURCE: "default",
        "flag": "command-line flag",
        "editor": "editor settings",
        "user": f"user settings {home(settings_file())}",
        "project": f"project file {home(project_file(options.project))}",
    }
    pairs = [(f"{key} = {show(options[key])}", source_kind(options, key)) for key in OPTION_KEYS]
    width = max(len(left) for left, _ in pairs)
    return [f"{left.ljust(width)}  {labels.get(kind, kind)}" for left, kind in pairs]


def to_json(options: Options) -> dict[str, Any]:
    """The same, for tools: every option's value, source and file, the files, the problems."""
    files = {"user": str(settings_file()), "project": str(project_file(options.project))}
    rows = {}
    for key in OPTION_KEYS:
        kind = source_kind(options, key)
        value = options[key]
        rows[key] = {
            "value": list(value) if isinstance(value, tuple) else value,
            "source": kind,
            "file": files.get(kind),
        }
    problems = [
        {"file": str(p.file), "key": p.key, "line": locate(p) + 1, "message": p.sentence}
        for p in options.issues
    ]
    return {"project": str(options.project), "options": rows, "files": files, "problems": problems}


def locate(problem: Problem) -> int:
    """A problem's 0-based line: the key's line, the line a syntax error names, else the first."""
    if problem.key is None:
        match = re.search(r"\bline (\d+)", problem.sentence)
        return max(int(match.group(1)) - 1, 0) if match else 0
    try:
        lines = problem.file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return 0
    key = re.escape(problem.key)
    pattern = re.compile(rf"""^\s*(?:{key}|"{key}"|'{key}')\s*[=.]|"{key}"\s*:|^\s*\[+\s*{key}\b""")
    return next((i for i, line in enumerate(lines) if pattern.search(line)), 0)


def dumps(options: Options) -> str:
    return json.dumps(to_json(options), ensure_ascii=False, indent=2)
