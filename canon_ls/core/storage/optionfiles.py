"""Changing one option in the user's settings.json or the project's canon.toml (SPEC §13)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from canon_ls.core.storage import fsio, layout
from canon_ls.core.storage.address import OutsideStore
from canon_ls.core.storage.layout import PROJECT_FILE, OptionError
from canon_ls.core.storage.optionview import home

_TABLE = re.compile(r"^\s*\[")


def parse_value(key: str, words: Sequence[str]) -> Any:
    """The value typed after `canon settings set KEY`: one word, or for `mounts` one word per
    directory (or one JSON list). JSON spellings are accepted too (`"lexical"`, `true`)."""
    known(key)
    if key == "mounts":
        if len(words) == 1 and words[0].strip().startswith("["):
            try:
                return json.loads(words[0])
            except ValueError:
                raise OptionError(
                    f"{words[0]} is not a list; give each directory as its own word."
                ) from None
        return list(words)
    if len(words) != 1:
        raise OptionError(f"Option {key!r} takes one value, got {len(words)}.")
    text = words[0]
    value = layout.parse_text(key, text)
    if value is text:  # not a boolean or number word: perhaps a JSON spelling ("lexical")
        try:
            decoded = json.loads(text)
        except ValueError:
            return text
        if isinstance(decoded, str | bool | int | float):
            return decoded
    return value


def known(key: str) -> None:
    if key not in layout.OPTION_KEYS:
        raise OptionError(
            f"Unknown canon option {key!r}; the options are {', '.join(layout.OPTION_KEYS)}."
        )


def validated(key: str, value: object, project: Path, where: Path) -> Any:
    """`layout.check`, with the file named in the sentence (nothing was written)."""
    try:
        return layout.check(key, value, project)
    except OptionError as exc:
        raise OptionError(f"{str(exc).rstrip('.')}; {home(where)} was left unchanged.") from None


def set_user(
    key: str, value: object, project: Path, env: Mapping[str, str] | None = None
) -> tuple[Path, bool]:
    """Validate and write one behaviour key into settings.json; (the file, whether it changed)."""
    path = layout.settings_file(env)
    known(key)
    if key in layout.TOPOLOGY_KEYS:
        raise OptionError(
            f"Option {key!r} describes the project, not your own preferences, so it lives in "
            f"{PROJECT_FILE}: run `canon settings set --project {key} …`."
        )
    checked = validated(key, value, project, path)
    with _user_lock(path):
        data = _load_json(path)
        if key in data and data[key] == _plain(checked):
            return path, False
        data[key] = _plain(checked)
        _write_user(path, data)
    return path, True


def unset_user(key: str, env: Mapping[str, str] | None = None) -> tuple[Path, bool]:
    path = layout.settings_file(env)
    known(key)
    with _user_lock(path):
        data = _load_json(path)
        if key not in data:
            return path, False
        del data[key]
        _write_user(path, data)
    return path, True


def _read(path: Path, project: Path) -> str | None:
    """An option file's text through layout's bounded reader (a FIFO or device is refused
    without blocking); None when missing."""
    try:
        return layout.read_option_file(path, project).decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise OptionError(f"{path} is not UTF-8 ({_why(exc)}); fix it first.") from None
    except ValueError as exc:  # not a regular file, too large, a link out of the project
        raise OptionError(f"{path} {exc}; nothing was written.") from None
    except OSError as exc:
        raise OptionError(f"{path} cannot be read ({_why(exc)}); fix or remove it first.") from None


def _load_json(path: Path) -> dict[str, Any]:
    text = _read(path, path.parent)
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise OptionError(
            f"{path} is not valid JSON ({_why(exc)}); fix its syntax first, nothing was written."
        ) from None
    if not isinstance(data, dict):
        raise OptionError(f"{path} must hold one JSON object; fix it first, nothing was written.")
    return data


@contextlib.contextmanager
def _user_lock(path: Path) -> Iterator[None]:
    """The user's canon directory (settings.json, trusted.json) held under the store's kind of
    lock for one read-modify-write, so concurrent commands never lose a change (SPEC §12)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise OptionError(f"{path} cannot be written ({_why(exc)}).") from None
    try:
        with fsio.locked(fd):
            yield
    finally:
        os.close(fd)


def _write_user(path: Path, data: dict[str, Any]) -> None:
    target = Path(os.path.realpath(path))  # a dotfile manager's link: write its target
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fsio.atomic_write(target, text.encode("utf-8"), anchor=target.parent)
    except OSError as exc:
        raise OptionError(f"{path} cannot be written ({_why(exc)}).") from None


def set_project(key: str, value: object, project: Path) -> tuple[Path, bool]:
    """Validate and write one key into canon.toml at the project root, keeping every other
    line; (the file, whether it changed)."""
    path = layout.project_file(project)
    known(key)
    checked = validated(key, value, project, path)
    text, before = _load_toml(path)
    if key in before and before[key] == _plain(checked):
        return path, False
    line = f"{key} = {layout.show(checked)}\n"  # (show: as TOML and JSON both write it)
    after = dict(before, **{key: _plain(checked)})
    _write_toml(path, project, _edit(text, key, line), after, key)
    return path, True


def unset_project(key: str, project: Path) -> tuple[Path, bool]:
    path = layout.project_file(project)
    known(key)
    text, before = _load_toml(path)
    if key not in before:
        return path, False
    after = {k: v for k, v in before.items() if k != key}
    _write_toml(path, project, _edit(text, key, None), after, key)
    return path, True


def _load_toml(path: Path) -> tuple[str, dict[str, Any]]:
    text = _read(path, path.parent)
    if text is None:
        return "", {}
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise OptionError(
            f"{path} is not valid TOML ({_why(exc)}); fix its syntax first, nothing was written."
        ) from None


def _edit(text: str, key: str, line: str | None) -> str:
    """Replace (None: remove) the top-level `key = …` line, or add it before the first table."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    assignment = re.compile(
        rf"""^\s*(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')\s*="""
    )
    top = next((i for i, raw in enumerate(lines) if _TABLE.match(raw)), len(lines))
    for i in range(top):
        if assignment.match(lines[i]):
            lines[i : i + 1] = [line[:-1] + _comment(lines[i]) + "\n"] if line is not None else []
            return "".join(lines)
    if line is None:
        return "".join(lines)
    at = top
    while at > 0 and not lines[at - 1].strip():
        at -= 1  # after the last top-level line, before the blank lines above a table
    gap = ["\n"] if top < len(lines) and at == top else []
    lines[at:at] = [line, *gap]
    return "".join(lines)


def _comment(line: str) -> str:
    """The trailing `# comment` of a one-line assignment ('' when none), kept on rewrite."""
    text = line.rstrip("\n")
    for at in (i for i, ch in enumerate(text) if ch == "#"):
        try:
            if tomllib.loads(text[:at]) == tomllib.loads(text):
                return "  " + text[at:].rstrip()
        except tomllib.TOMLDecodeError:
            continue
    return ""


def _write_toml(path: Path, project: Path, text: str, expected: dict[str, Any], key: str) -> None:
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        parsed = None
    if parsed != expected:
        raise OptionError(
            f"{path} writes {key!r} in a way canon cannot rewrite safely (over several lines "
            "or inside a table); edit it by hand, nothing was written."
        )
    try:
        fsio.atomic_write(path, text.encode("utf-8"), anchor=project, follow=False)
    except OutsideStore:
        raise OptionError(
            f"{path} is a symbolic link; canon writes only a real {PROJECT_FILE} inside the "
            "project: replace the link with a file, or edit its target by hand."
        ) from None
    except OSError as exc:
        raise OptionError(f"{path} cannot be written ({_why(exc)}).") from None


def trust(project: Path, env: Mapping[str, str] | None = None) -> tuple[Path, str]:
    """Record the project's canon.toml, as it is now, as trusted: its `root` leading outside
    the project and its `mounts` then apply (layout.resolve). (The trust file, the SHA-256.)"""
    path = layout.project_file(project)
    try:
        data = layout.read_option_file(path, project)
    except FileNotFoundError:
        raise OptionError(f"There is no {PROJECT_FILE} in {project}; nothing to trust.") from None
    except (OSError, ValueError) as exc:
        raise OptionError(f"{path} cannot be trusted: {_why(exc)}.") from None
    sha = layout.trust_digest(project, layout.resolve(project, env=env, trust=True).values, data)
    _record(project, sha, env)
    return layout.trust_file(env), sha


def revoke(project: Path, env: Mapping[str, str] | None = None) -> bool:
    """Forget the project's trust; whether it was trusted."""
    return _record(project, None, env)


def _record(project: Path, sha: str | None, env: Mapping[str, str] | None) -> bool:
    """Trust the project's canon.toml of this digest (None: no longer); whether it was."""
    path, key = layout.trust_file(env), os.path.realpath(project)
    with _user_lock(path):
        record = _load_json(path)
        was = record.pop(key, None) is not None
        if sha is not None or was:
            _write_user(path, record if sha is None else {**record, key: sha})
    return was


def _plain(value: object) -> Any:
    """The value as TOML and JSON load it back (a tuple of mounts is a list)."""
    return list(value) if isinstance(value, tuple) else value


def _why(exc: BaseException) -> str:
    return " ".join(str(getattr(exc, "strerror", None) or exc).split())[:160]
