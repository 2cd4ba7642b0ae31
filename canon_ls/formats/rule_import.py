"""`canon import`: other agents' path-scoped instruction files become articles, each keeping its
host's scope as front matter (`applies`, `always`: core/reach.py); a plan first, then `apply`
decides each file again under the store lock (docs/AGENTS.md "Rules for other agents")."""

from __future__ import annotations

import dataclasses
import functools
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from canon_ls.core import reach
from canon_ls.core.checking.assets import Assets
from canon_ls.core.storage import fsio, walk
from canon_ls.core.storage.address import OutsideStore, clean, within
from canon_ls.core.storage.article import unreadable
from canon_ls.core.storage.front_write import set_meta
from canon_ls.core.storage.journal import sanitise_slug
from canon_ls.core.storage.store import Store
from canon_ls.formats import hosts as rules_formats
from canon_ls.formats.hosts import Source

DIGEST_KEY = "canon-import digest"
_INCLUDE = re.compile(r"^@([\w./-]+)[ \t]*$", re.M)
MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class Step:
    """What one instruction file becomes."""

    path: str
    action: str  # 'create' | 'merge' | 'scope' (its keys only) | 'unchanged' | 'skip'
    address: str = ""
    why: str = ""  # the reason for the address, or why the file is skipped
    scope: str | None = None
    capsule: str = ""
    text: str = ""  # what the article receives (the file's text, its description first)
    journal: str = ""  # the entry that names the source
    applies: tuple[str, ...] = ()  # the article's `applies` globs after this step
    always: bool = False


def rule_prefix(raw: str) -> str:
    """The folder of cross-cutting rule articles, as an address; ValueError when empty."""
    prefix = clean(raw)
    if not prefix or ":" in prefix or ".." in raw.replace("\\", "/").split("/"):
        raise ValueError(f"{raw!r} is not a folder address for rule articles; give e.g. rules.")
    return prefix


def target(src: Source, project: Path, prefix: str) -> tuple[str, str | None, str]:
    """(address, scope, why) of one source: its directory's article, or a rule article."""
    if src.when == "files":
        address = rules_formats.whole_directory(src.globs, project)
        if address:
            return address, None, f"{src.facts}: under {address}"
        why = f"{src.facts}: the files its globs match"
    elif src.when == "always":
        why = f"{src.facts}: the whole project"
    else:
        why = f"{src.facts}: on request"
    name = "/".join(sanitise_slug(seg) or "rule" for seg in src.name.split("/"))
    return f"{prefix}/{name}", "rule", why


def capsule_of(src: Source) -> str:
    """The description when there is one, else the text's first line that is not a heading
    (the heading when there is nothing else), without its Markdown marks (`- `, `> `)."""
    if src.description:
        return src.description
    lines = [line.strip() for line in src.body.splitlines() if line.strip()]
    prose = [ln for ln in lines if ln[0] != "#" and ln[-1] != ":"] or lines  # not "Rules:"
    return " ".join(prose[0].lstrip("#>*-+ ").split()) if prose else ""


def _same(text: str) -> str:
    return " ".join(text.split())


def _holds(existing: str | None, text: str) -> bool:
    return existing is not None and _same(text) in _same(existing)


def _merged(existing: str | None, relpath: str, text: str) -> str:
    """The body once `text` is in: the file's text alone, or appended under a heading."""
    if existing is None:
        return text + "\n"
    return f"{existing.rstrip()}\n\n## From {relpath}\n\n{text}\n".lstrip("\n")


def _journaled(store: Store) -> set[tuple[str, str]]:
    """(address, digest) pairs earlier imports recorded in the journal."""
    found: set[tuple[str, str]] = set()
    for entry in store.journal_entries():
        if "-import-" not in entry.name:
            continue
        body = store.journal_body(entry)
        for line in body.splitlines():
            if line.startswith(DIGEST_KEY + ": "):
                found.update((address, line.split(": ", 1)[1].strip()) for address in entry.subject)
    return found


def _bytes(project: Path, relpath: str) -> bytes:
    """A file inside the project, links followed only inside it; ValueError: a sentence."""
    inside = os.path.realpath(project)
    if not within(os.path.realpath(project / relpath), inside):
        raise ValueError("it is a link leading outside the project; canon never follows one")
    try:
        data, truncated = fsio.read_regular(project / relpath, MAX_BYTES, inside=inside)
    except (OSError, OutsideStore) as exc:
        raise ValueError(f"cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    if truncated:
        raise ValueError(f"is over {MAX_BYTES} bytes")
    return data


def _include(project: Path, relpath: str, line: re.Match[str]) -> str:
    """The text of the file a line `@path` names, relative to the including file."""
    target = posixpath.normpath(posixpath.join(posixpath.dirname(relpath), line.group(1)))
    try:
        return _bytes(project, target).decode("utf-8").replace("\r\n", "\n").strip()
    except (ValueError, UnicodeDecodeError):
        return line.group(0)  # not a file of the project: the line stays as written


def _read(project: Path, relpath: str) -> tuple[Source | None, str]:
    """The file as a Source, includes resolved, or a sentence saying why it cannot be read."""
    if relpath.endswith("/"):  # source_paths: a folder too deep to walk
        return None, f"is a folder over {walk.MAX_DEPTH} levels deep; nothing in it is read"
    try:
        data = _bytes(project, relpath)
    except ValueError as exc:
        return None, str(exc)
    try:
        src = rules_formats.read_source(relpath, data)
    except ValueError as exc:
        return None, f"cannot be read ({exc})"
    body = _INCLUDE.sub(lambda m: _include(project, relpath, m), src.body)
    return dataclasses.replace(src, body=body), ""


def _unwritable(store: Store, address: str) -> str:
    """Why no article can be written at `address` ('' when one can): decided in the plan, so
    the dry run and --write agree and one bad rule file never stops the others."""
    shown = address if len(address) <= 80 else address[:80] + "…"
    try:
        path = store.path_of(store.address_of(address))
    except (OSError, ValueError) as exc:  # OutsideStore among them: `.git/hooks/**`
        return f"no article can be written at {shown} ({str(exc).replace(address, 'it')})"
    if len(os.fsencode(path)) > 4000 or any(len(os.fsencode(p)) > 255 for p in path.parts):
        return f"no article can be written at {shown}: its file name would be too long"
    return ""


def plan(store: Store, prefix: str = "rules") -> list[Step]:
    """What `canon import` would do, in order; writes nothing."""
    project = store.project
    listed = Assets(project, store.root).files()
    done = _journaled(store) if store.exists() else set()
    bodies: dict[str, str] = {}  # the body each address has after the steps so far
    scopes: dict[str, tuple[tuple[str, ...], bool]] = {}  # and its `applies` and `always`
    seen: dict[str, tuple[str, str]] = {}  # digest -> the first file with it, its address
    steps: list[Step] = []

    def widen(address: str, src: Source, meta: dict[str, Any]) -> None:
        globs, always = scopes.get(address, (tuple(reach.applies(meta)), reach.always(meta)))
        globs += tuple(g for g in src.globs if g not in globs)
        scopes[address] = globs, always or src.when == "always"

    for relpath in rules_formats.source_paths(project, listed):
        src, problem = _read(project, relpath)
        if src is None:
            steps.append(Step(relpath, "skip", why=problem))
            continue
        if src.exported_from is not None:
            why = f"canon export wrote it from {src.exported_from}"
            steps.append(Step(relpath, "skip", why=why))
            continue
        text = src.body.strip()
        if not text:
            steps.append(Step(relpath, "skip", why="it holds no text"))
            continue
        token = rules_formats.digest(text)
        if token in seen:  # the same rule for another host: one article, both scopes
            first, address = seen[token]
            widen(address, src, {})
            steps.append(Step(relpath, "skip", why=f"it holds the same text as {first}"))
            continue
        address, scope, why = target(src, project, prefix)
        unwritable = _unwritable(store, address)
        if unwritable:
            steps.append(Step(relpath, "skip", why=unwritable))
            continue
        seen[token] = relpath, address
        stored = store.article(address)
        existing = bodies.get(address, stored.body if stored is not None else None)
        journal = f"Imported `{relpath}` ({src.facts}) into {address}.\n\n{DIGEST_KEY}: {token}\n"
        meta = stored.meta if stored is not None else {}
        widen(address, src, meta)
        if existing is not None and (_holds(existing, text) or (address, token) in done):
            had = (tuple(reach.applies(meta)), reach.always(meta))  # imported before the keys?
            action = "scope" if stored is not None and had != scopes[address] else "unchanged"
            steps.append(Step(relpath, action, address, why))
            continue
        action, scope = ("create", scope) if existing is None else ("merge", None)
        note = f"{src.description}\n\n" if existing and src.description not in text else ""
        bodies[address] = _merged(existing, relpath, note + text)
        steps.append(
            Step(relpath, action, address, why, scope, capsule_of(src), note + text, journal)
        )
    return [  # each written article carries the scopes of every file it took
        dataclasses.replace(s, applies=scopes[s.address][0], always=scopes[s.address][1])
        if s.action in ("create", "merge", "scope")
        else s
        for s in steps
    ]


def apply(store: Store, steps: list[Step], source: str = "cli") -> list[str]:
    """Write the planned articles, scope keys and one journal entry per file; a sentence per refused
    write. Each file is decided again under the store lock (SPEC §12): newer edits are kept."""
    refused: list[str] = []
    for step in steps:
        if step.action not in ("create", "merge", "scope"):
            continue
        token = rules_formats.digest(step.text) if step.text else ""
        with store.locked():
            store.reload_file(store.path_of(step.address))
            current = store.article(step.address)
            body = current.body if current is not None else None
            fresh = step.action != "scope" and not (
                _holds(body, step.text) or (step.address, token) in _journaled(store)
            )
            if fresh:
                held = current is not None and (current.capsule or unreadable(current, "capsule"))
                merged = _merged(body, step.path, step.text)
                scope = step.scope if current is None else None
                capsule = None if held else step.capsule
                outcome = store.write(step.address, capsule=capsule, body=merged, scope=scope)
                if outcome.status == "refused":
                    refused.append(
                        f"{step.path} -> {step.address}: refused; {' '.join(outcome.lines)}"
                    )
                    continue
            keys: dict[str, bool | list[str]] = {
                "applies": list(step.applies),
                "always": step.always,
            }
            for key, value in keys.items():
                if value and (fresh or step.action == "scope"):  # the host's scope (reach.py)
                    store.edit(step.address, functools.partial(set_meta, key=key, value=value))
            if fresh:
                slug = "import-" + (sanitise_slug(step.path) or "rule")
                store.journal(step.journal, subject=[step.address], slug=slug, source=source)
    return refused


def relation(project: Path, relpath: str, text: str, line: int) -> tuple[str, str] | None:
    """What an instruction file's head is to the store, for hover: ('exported', its article) or
    ('imported', the article import files it into); None on any other file or line."""
    if not rules_formats.is_source(relpath):
        return None
    try:
        src = rules_formats.read_source(relpath, text.encode("utf-8"))
    except ValueError:
        return None
    last = src.body_line if src.exported_from is not None else src.body_line - 1  # the marker
    if line > max(last, 0):
        return None
    if src.exported_from is not None:
        return "exported", src.exported_from
    return "imported", target(src, project, "rules")[0]
