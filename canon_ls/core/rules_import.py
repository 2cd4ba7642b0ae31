"""`canon import`: other agents' path-scoped instruction files become articles."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from canon_ls.core import fsio, rules_formats, walk
from canon_ls.core.address import OutsideStore, clean
from canon_ls.core.article import unreadable
from canon_ls.core.assets import Assets
from canon_ls.core.journal import sanitise_slug
from canon_ls.core.rules_formats import Source
from canon_ls.core.store import Store

DIGEST_KEY = "canon-import digest"
MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class Step:
    """What one instruction file becomes."""

    path: str
    action: str  # 'create' | 'merge' | 'unchanged' | 'skip'
    address: str = ""
    why: str = ""  # the reason for the address, or why the file is skipped
    scope: str | None = None
    capsule: str = ""
    text: str = ""  # the file's text, which the article receives
    journal: str = ""  # the entry that names the source


def rule_prefix(raw: str) -> str:
    """The folder of cross-cutting rule articles, as an address; ValueError when empty."""
    prefix = clean(raw)
    if not prefix or ":" in prefix or ".." in raw.replace("\\", "/").split("/"):
        raise ValueError(f"{raw!r} is not a folder address for rule articles; give e.g. rules.")
    return prefix


def target(src: Source, project: Path, prefix: str) -> tuple[str, str | None, str]:
    """(address, scope, why) of one source: its directory's article, or a rule article."""
    if src.when == "files":
        address = rules_formats.address_of_globs(src.globs, project)
        if address:
            return address, None, f"{src.facts}: under {address}"
        why = f"{src.facts}: across directories"
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
    prose = [line for line in lines if not line.startswith("#")] or lines
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


def _read(project: Path, relpath: str) -> tuple[Source | None, str]:
    """The file as a Source, or a sentence saying why it cannot be read."""
    if relpath.endswith("/"):  # walk.files: a folder too deep to walk
        return None, f"is a folder over {walk.MAX_DEPTH} levels deep; nothing in it is read"
    try:
        data, truncated = fsio.read_regular(
            project / relpath, MAX_BYTES, inside=os.path.realpath(project)
        )
    except (OSError, OutsideStore) as exc:
        return None, f"cannot be read ({getattr(exc, 'strerror', None) or exc})"
    if truncated:
        return None, f"is over {MAX_BYTES} bytes"
    try:
        return rules_formats.read_source(relpath, data), ""
    except ValueError as exc:
        return None, f"cannot be read ({exc})"


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
    seen: dict[str, str] = {}  # digest -> the first file with this text (CLAUDE.md, AGENTS.md)
    steps: list[Step] = []
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
        if token in seen:
            steps.append(Step(relpath, "skip", why=f"it holds the same text as {seen[token]}"))
            continue
        seen[token] = relpath
        address, scope, why = target(src, project, prefix)
        unwritable = _unwritable(store, address)
        if unwritable:
            steps.append(Step(relpath, "skip", why=unwritable))
            continue
        stored = store.article(address)
        existing = bodies.get(address, stored.body if stored is not None else None)
        journal = f"Imported `{relpath}` ({src.facts}) into {address}.\n\n{DIGEST_KEY}: {token}\n"
        if existing is not None and (_holds(existing, text) or (address, token) in done):
            steps.append(Step(relpath, "unchanged", address, why))
            continue
        action, scope = ("create", scope) if existing is None else ("merge", None)
        bodies[address] = _merged(existing, relpath, text)
        steps.append(Step(relpath, action, address, why, scope, capsule_of(src), text, journal))
    return steps


def apply(store: Store, steps: list[Step], source: str = "cli") -> list[str]:
    """Write the planned articles (a merge keeps the article's capsule when it has one) and
    one journal entry per imported file; returns a sentence for each write the schema refused
    (that file is not journaled, so the next import tries it again). Each file is decided
    again under the store lock (SPEC §12): an edit made since the plan is kept, and a file
    another import journaled meanwhile is left alone."""
    refused: list[str] = []
    for step in steps:
        if step.action not in ("create", "merge"):
            continue
        token = rules_formats.digest(step.text)
        with store.locked():
            store.reload_file(store.path_of(step.address))
            current = store.article(step.address)
            body = current.body if current is not None else None
            if _holds(body, step.text) or (step.address, token) in _journaled(store):
                continue
            held = current is not None and (current.capsule or unreadable(current, "capsule"))
            capsule = None if held else step.capsule
            merged = _merged(body, step.path, step.text)
            scope = step.scope if current is None else None
            outcome = store.write(step.address, capsule=capsule, body=merged, scope=scope)
            if outcome.status == "refused":
                refused.append(f"{step.path} -> {step.address}: refused; {' '.join(outcome.lines)}")
                continue
            slug = "import-" + (sanitise_slug(step.path) or "rule")
            store.journal(step.journal, subject=[step.address], slug=slug, source=source)
    return refused


def relation(project: Path, relpath: str, text: str, line: int) -> tuple[str, str] | None:
    """What the head of an instruction file (its front matter, the line after it, or its first
    line) is to the store, for the editor's hover: ('exported', the article canon export wrote
    it from) or ('imported', the article canon import files it into, with the default rule
    folder). None on any other file or line."""
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
