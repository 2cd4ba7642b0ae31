"""Other agents' path-scoped instruction files, as `canon import` and `canon export` share them:
where each host keeps them, their globs key, globs <-> address, and canon's export marker."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from canon_ls.core import reach
from canon_ls.core.storage import article as art
from canon_ls.core.storage import walk
from canon_ls.core.storage.address import clean, within


@dataclass(frozen=True)
class Host:
    """One host's rule folder: where its files live and how they are named."""

    name: str
    label: str  # how a person calls one of its files
    folder: str  # project-relative
    suffix: str


HOSTS: dict[str, Host] = {
    h.name: h
    for h in (
        Host("claude-rules", "Claude Code rule", ".claude/rules", ".md"),
        Host("cursor", "Cursor rule", ".cursor/rules", ".mdc"),
        Host("copilot", "Copilot instructions", ".github/instructions", ".instructions.md"),
        Host("kiro", "Kiro steering file", ".kiro/steering", ".md"),
    )
}
NESTED_NAMES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")  # one directory's instructions
# one file for the whole project: Copilot's repository-wide file, Cursor's legacy rules file
PROJECT_FILES = {".github/copilot-instructions.md": "copilot", ".cursorrules": "cursorrules"}

_WILD = re.compile(r"(?<!\\)[*?\[\]{}!]")  # a glob character not escaped with '\'
_ESCAPE = re.compile(r"[*?\[\]{}!\\]")
_MARKER = re.compile(r"<!-- canon export: article (\"(?:[^\"\\]|\\.)*\"), digest ([0-9a-f]{12})\b")


@dataclass(frozen=True)
class Source:
    """One instruction file read from disk, in host-neutral terms."""

    path: str  # project-relative, '/'-separated
    name: str  # a rule name derived from the file name ('testing', 'frontend/react')
    globs: tuple[str, ...]  # the files it applies to; () when it applies everywhere or on request
    when: str  # 'files' (globs), 'always', 'request' (description or manual)
    description: str
    body: str  # the text after the front matter
    facts: str  # its activation as the host wrote it, for the journal entry
    exported_from: str | None = None  # the article named by a canon export marker
    body_line: int = 0  # the body's first line, counted from 0


def split_globs(value: object) -> list[str]:
    """A glob value as written: a YAML list, or one string of comma-separated globs (commas
    inside `{a,b}` braces belong to the glob). Quotes and blanks around each are dropped."""
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            continue
        depth, start = 0, 0
        for i, ch in enumerate(item + ","):
            depth += (ch == "{") - (ch == "}")
            if ch == "," and depth <= 0:
                glob = item[start:i].strip().strip("\"'").strip()
                if glob:
                    out.append(glob)
                start = i + 1
    return out


def whole_directory(globs: list[str] | tuple[str, ...], project: Path) -> str:
    """The address of the one directory these globs cover whole (`dir/**`, `dir/**/*`, `dir/`;
    glob characters in its name escaped), else '': `src/api/**/*.ts` covers only some files."""
    bases = {re.sub(r"/(\*\*(/\*)?)?$", "", g.removeprefix("./")) for g in globs}
    base = bases.pop() if len(bases) == 1 else "*"
    path = re.sub(r"\\(.)", r"\1", base)
    try:
        if _WILD.search(base) or ".." in path.split("/") or not (project / path).is_dir():
            return ""
    except (OSError, ValueError):  # a name no file system takes (a 10,000-character glob)
        return ""
    return clean(path)


def globs_of(asset_paths: list[str]) -> list[str]:
    """The globs an address covers, from its asset set (Assets.of): `dir/` covers `dir/**`, a file
    itself; glob characters are escaped (`app/[slug]/` covers `app/\\[slug\\]/**`)."""
    escaped = [_ESCAPE.sub(r"\\\g<0>", p) for p in asset_paths]
    return [p + "**" if p.endswith("/") else p for p in escaped]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def marker(address: str, rest: str) -> str:
    """The line an exported file carries: the article it came from and the digest of the
    file without this line (a different digest means a person edited the file)."""
    return (
        f"<!-- canon export: article {json.dumps(address, ensure_ascii=False)}, digest "
        f"{digest(rest)}. Generated: edit the article, then run canon export. -->\n"
    )


def read_marker(text: str) -> tuple[str, bool] | None:
    """(article address, edited by hand?) for a file canon exported; None for any other."""
    for line in text.splitlines(keepends=True)[:40]:
        m = _MARKER.search(line)
        if m:
            try:
                address = json.loads(m.group(1))
            except ValueError:
                return None
            return str(address), digest(text.replace(line, "", 1)) != m.group(2)
    return None


def _front(text: str) -> tuple[dict[str, Any], str, int]:
    """(front matter, body); ValueError names what is wrong with a malformed front matter."""
    front, body, body_line = art.split_front(text)
    if front is None:
        return {}, body, body_line
    block, close = front
    if not close:
        raise ValueError("its front matter has no closing '---' line")
    try:
        return art.parse_front_matter(block), body, body_line
    except ValueError as exc:
        return _plain(block, exc), body, body_line


def _plain(block: str, problem: ValueError) -> dict[str, Any]:
    """`key: value` lines and `- item` lists, as hosts read them; else the YAML problem."""
    meta: dict[str, Any] = {}
    key = ""
    for line in block.splitlines():
        item = re.fullmatch(r"\s*-\s+(.*)", line)
        pair = re.fullmatch(r"([A-Za-z_][\w-]*):\s*(.*)", line)
        if item and isinstance(meta.get(key), list):
            meta[key].append(item.group(1).strip().strip("\"'"))
        elif pair and not pair.group(2).strip().startswith(("[", "{")):
            key, value = pair.group(1), pair.group(2).strip()
            meta[key] = value if value else []
        elif line.strip() and not line.lstrip().startswith("#"):
            raise ValueError(f"its front matter is not valid YAML ({problem})".split("\n")[0])
    return meta


def _text(meta: dict[str, Any], key: str) -> str:
    value = meta.get(key)
    return " ".join(value.split()) if isinstance(value, str) else ""


def _activation(kind: str, meta: dict[str, Any]) -> tuple[tuple[str, ...], str, str]:
    """(globs, when, facts) of one host file from its front matter."""
    key = {"claude-rules": "paths", "cursor": "globs", "copilot": "applyTo"}.get(kind, "")
    if kind == "kiro":
        inclusion = _text(meta, "inclusion") or "always"  # `always` when absent
        if inclusion != "fileMatch":
            return (), "always" if inclusion == "always" else "request", f"inclusion: {inclusion}"
        key = "fileMatchPattern"
    if kind == "cursor" and reach.always(meta, "alwaysApply"):
        return (), "always", "alwaysApply: true"
    value = meta.get(key) or (meta.get("globs") if kind == "claude-rules" else None)
    globs = tuple(split_globs(value))  # Claude Code reads `globs` too (claude-code#17204)
    when = "files" if globs else "always" if kind == "claude-rules" else "request"
    return globs, when, f"{key} {', '.join(globs) or 'none'}"


def host_of(relpath: str) -> Host | None:
    """The host whose rule folder holds this file; Cursor's may sit in any directory."""
    nested = HOSTS["cursor"] if "/.cursor/rules/" in relpath else None
    return next((h for h in HOSTS.values() if relpath.startswith(h.folder + "/")), nested)


def is_source(relpath: str) -> bool:
    """Whether `canon import` reads this project-relative file."""
    host = host_of(relpath)
    if host is not None:
        return relpath.endswith(host.suffix)
    return relpath in PROJECT_FILES or relpath.rsplit("/", 1)[-1] in NESTED_NAMES


def read_source(relpath: str, data: bytes) -> Source:
    """One instruction file as a Source; ValueError with a sentence when it cannot be read."""
    text, problems = art.decode(data)
    if problems:
        raise ValueError(problems[0])
    text = text.replace("\r\n", "\n")
    meta, body, body_line = _front(text)
    found = read_marker(text)
    exported_from = found[0] if found else None
    host = host_of(relpath)
    description = _text(meta, "description")
    globs: tuple[str, ...]
    if relpath in PROJECT_FILES:
        name, globs, when, description = PROJECT_FILES[relpath], (), "always", ""
        facts = f"{relpath}, for the whole project"
    elif host is None:  # AGENTS.md, CLAUDE.md, GEMINI.md; `.claude/CLAUDE.md` is the project's
        base = relpath.rsplit("/", 1)[-1]
        directory = relpath[: -len(base)].rstrip("/").removesuffix(".claude").rstrip("/")
        name, facts = base[: -len(".md")].lower(), f"{base} of {directory or 'the project root'}"
        globs, when = ((directory + "/**",), "files") if directory else ((), "always")
    else:
        globs, when, facts = _activation(host.name, meta)
        where = relpath[: relpath.index(host.folder)]  # a nested Cursor folder's globs start there
        globs = tuple("!" * (g[0] == "!") + where + g.lstrip("!") for g in globs)
        if where and when == "always":
            globs, when = (where + "**",), "files"
        name = where + relpath[len(where) + len(host.folder) + 1 : -len(host.suffix)]
        facts = f"{host.label}, {facts}"
    return Source(relpath, name, globs, when, description, body, facts, exported_from, body_line)


def source_paths(project: Path, listed: list[str]) -> list[str]:
    """A project's instruction files, in stable order: each host's folder (walked, links followed),
    the project-wide files, then nested ones among the listed files; outside links listed too."""
    found: list[str] = []
    inside = os.path.realpath(project)
    for host in HOSTS.values():
        seen: set[str] = set()  # a link back up the tree is walked once
        top = str(project / host.folder).count(os.sep)
        for root, dirs, names in os.walk(project / host.folder, followlinks=True):
            real = os.path.realpath(root)
            rel = Path(root).relative_to(project).as_posix()
            dirs.sort()
            deep = root.count(os.sep) - top >= walk.MAX_DEPTH  # no one's rules: named, skipped
            if real in seen or not within(real, inside) or deep:
                found += [] if real in seen else [rel + "/" if deep else rel]
                dirs[:] = []
                continue
            seen.add(real)
            found += [f"{rel}/{n}" for n in sorted(names) if n.endswith(host.suffix)]
    found += [p for p in PROJECT_FILES if (project / p).is_file()]
    return found + [p for p in listed if p not in found and is_source(p)]
