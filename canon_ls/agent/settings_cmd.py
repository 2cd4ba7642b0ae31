"""`canon settings`: the six options, each with its effective value and where it came from,
and `set` / `unset` in the user's settings.json or (`--project`) the project's canon.toml
(SPEC §13). Also the findings `canon check` makes of a bad option file.

The text form is one line per option, `KEY = VALUE  SOURCE` (the value as the files spell it,
two spaces before the source): the Pi extension's /canon-settings lists these lines, takes the
first word as the key and the text between `=` and the two spaces as the value. Problems of
the files go to stderr, so stdout is always exactly the six lines.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from canon_ls.core.layout import (
    DEFAULT_SOURCE,
    OPTION_KEYS,
    Options,
    Problem,
    project_file,
    settings_file,
    show,
)

FINDING_CODE = "bad-option"


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


def _home(path: str | Path) -> str:
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
        "user": f"user settings {_home(settings_file())}",
        "project": f"project file {_home(project_file(options.project))}",
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


# --------------------------------------------------------------------------- canon check


def locate(problem: Problem) -> int:
    """The 0-based line of a problem in its file: the key's line, the line a syntax error
    names, else the first."""
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


def findings(options: Options, project: Path) -> list[dict[str, Any]]:
    """Each bad option file, key or value as an error finding (the default applies meanwhile),
    shaped like `canon check`'s other findings."""
    rows = []
    for problem in options.issues:
        try:
            shown = problem.file.relative_to(project).as_posix()
        except ValueError:
            shown = _home(problem.file)
        rows.append(
            {
                "file": shown,
                "address": "",
                "code": FINDING_CODE,
                "severity": "error",
                "message": problem.sentence,
                "line": locate(problem),
                "start": 0,
                "end": 0,
                "evidence": None,
            }
        )
    return rows


def finding_lines(rows: list[dict[str, Any]]) -> list[str]:
    return [
        f"{r['file']}:{r['line'] + 1}:{r['start'] + 1}: error: {r['message']} [{r['code']}]"
        for r in rows
    ]


# --------------------------------------------------------------------------- set / unset


def change(project: Path, key: str, words: list[str] | None, in_project: bool) -> str:
    """`set` (words given) or `unset` (None) one option; the sentence saying what happened.
    Raises OptionError (one sentence) for a bad key or value; nothing is written then."""
    from canon_ls.core import optionfiles
    from canon_ls.core.layout import check, resolve

    if words is None:
        where, changed = (
            optionfiles.unset_project(key, project) if in_project else optionfiles.unset_user(key)
        )
        verb = f"Removed {key} from" if changed else f"{key} was not set in"
    else:
        value = optionfiles.parse_value(key, words)
        if in_project:
            where, changed = optionfiles.set_project(key, value, project)
        else:
            where, changed = optionfiles.set_user(key, value, project)
        written = f"{key} = {show(check(key, value, project))}"
        verb = f"Set {written} in" if changed else f"{written} was already set in"
    options = resolve(project)
    now = f"{key} = {show(options[key])}"
    sentence = f"{verb} {_home(where)}"
    kind = source_kind(options, key)
    if words is not None and options.sources[key] != str(where):
        sentence += f"; your {_layer(kind)} sets {show(options[key])}, which wins"
    elif words is None:
        sentence += f"; now {now} ({_layer(kind)})"
    return sentence + "."


def _layer(kind: str) -> str:
    return {
        "user": "settings.json",
        "project": "canon.toml",
        DEFAULT_SOURCE: "the default",
    }.get(kind, kind)


def dumps(options: Options) -> str:
    return json.dumps(to_json(options), ensure_ascii=False, indent=2)
