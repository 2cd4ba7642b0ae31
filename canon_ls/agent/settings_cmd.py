"""`canon settings`: the six options, their values and sources, and `set` / `unset` (SPEC §13)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from canon_ls.core.storage.layout import BAD_OPTION, DEFAULT_SOURCE, UNTRUSTED_OPTION, Options, show
from canon_ls.core.storage.optionview import describe, dumps, home, locate, source_kind

__all__ = ["change", "describe", "dumps", "finding_lines", "findings", "trust"]


def findings(options: Options, project: Path) -> list[dict[str, Any]]:
    """Each bad option file, key or value as an error finding."""
    rows = []
    for problem in options.issues:
        try:
            shown = problem.file.relative_to(project).as_posix()
        except ValueError:
            shown = home(problem.file)
        rows.append(
            {
                "file": shown,
                "address": "",
                "code": problem.code,
                "severity": "error" if problem.code == BAD_OPTION else "warning",
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
        f"{r['file']}:{r['line'] + 1}:{r['start'] + 1}: {r['severity']}: {r['message']} "
        f"[{r['code']}]"
        for r in rows
    ]


def change(project: Path, key: str, words: list[str] | None, in_project: bool) -> str:
    """`set` (words given) or `unset` (None) one option; the sentence saying what happened."""
    from canon_ls.core.storage import optionfiles
    from canon_ls.core.storage.layout import check, resolve

    if words is None:
        where, changed = (
            optionfiles.unset_project(key, project) if in_project else optionfiles.unset_user(key)
        )
        verb = f"Removed {key} from" if changed else f"{key} was not set in"
    else:
        value = optionfiles.parse_value(key, words)
        setter = optionfiles.set_project if in_project else optionfiles.set_user
        where, changed = setter(key, value, project)
        written = f"{key} = {show(check(key, value, project))}"
        verb = f"Set {written} in" if changed else f"{written} was already set in"
    options = resolve(project)
    now = f"{key} = {show(options[key])}"
    sentence = f"{verb} {home(where)}"
    kind = source_kind(options, key)
    if words is not None and options.sources[key] != str(where):
        if any(p.code == UNTRUSTED_OPTION and p.key == key for p in options.issues):
            sentence += "; it applies once you run `canon trust` here"
        elif kind == DEFAULT_SOURCE:
            sentence += f"; the default {show(options[key])} still applies"
        else:
            sentence += f"; {_layer(kind)} sets {show(options[key])}, which wins"
    elif words is None:
        sentence += f"; now {now} ({_layer(kind)})"
    return sentence + "."


def _layer(kind: str) -> str:
    return {
        "user": "your settings.json",
        "project": "the project's canon.toml",
        DEFAULT_SOURCE: "the default",
    }.get(kind, kind)


def trust(project: Path, action: str) -> str:
    """`canon trust` (action 'trust'), `--revoke` or `--list`: what is trusted, in words."""
    from canon_ls.core.storage import optionfiles
    from canon_ls.core.storage.layout import leading_out, project_file, resolve, trusted

    shown = home(project_file(project))
    if action == "list":
        rows = [f"{home(p)}  sha256 {sha[:12]}" for p, sha in sorted(trusted().items())]
        return "\n".join(rows) or "No project's canon.toml is trusted."
    if action == "revoke":
        if not optionfiles.revoke(project):
            return f"{shown} was not trusted; nothing changed."
        return (
            f"No longer trusting {shown}: its root outside the project and its mounts are ignored."
        )
    _, sha = optionfiles.trust(project)
    options = resolve(project)
    held = leading_out(project, {k: options[k] for k in ("root", "mounts")})
    kept = [f"{k} = {show(options[k])}" for k in held if source_kind(options, k) == "project"]
    verb = "applies" if len(kept) == 1 else "apply"
    now = f"{', '.join(kept)} now {verb}" if kept else "nothing in it leads outside the project yet"
    again = "Any change to the file needs `canon trust` again."
    return f"Trusted {shown} (sha256 {sha[:12]}): {now}. {again}"
