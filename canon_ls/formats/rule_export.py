"""`canon export HOST`: one rule file per article that governs files or is a rule, for a host
without hooks; a file without canon's marker, or edited by hand since, is never overwritten."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from canon_ls.core import reach
from canon_ls.core.checking.assets import Assets
from canon_ls.core.storage import fsio, walk
from canon_ls.core.storage.address import OutsideStore
from canon_ls.core.storage.article import Article
from canon_ls.core.storage.store import Store
from canon_ls.core.storage.yaml_subset import format_scalar
from canon_ls.formats import hosts as rules_formats
from canon_ls.formats.hosts import HOSTS, Host

MAX_BYTES = 1_000_000
STATES = {
    "missing": "not exported yet",
    "outdated": "out of date",
    "orphaned": "left over: its article no longer governs files",
    "edited": "edited by hand, so canon leaves it alone; move the change into the article, "
    "delete the file, then export again",
    "foreign": "not written by canon, so canon will not replace it; rename or remove it",
    "inexpressible": "not exported: this host has no form for a rule loaded on request",
}


@dataclass(frozen=True)
class Generated:
    """One host file: where it goes, the article it comes from, and what it should hold."""

    path: str  # project-relative
    address: str
    text: str  # '' for a file that should not exist (orphaned)
    state: str  # 'current' or a key of STATES


def _front(host: Host, capsule: str, globs: list[str], every: bool) -> str | None:
    """The front matter that makes the host load the file for these globs, always (`every`),
    or on request (neither); None where the host has no such form."""
    quoted = [json.dumps(g, ensure_ascii=False) for g in globs]
    if host.name == "claude-rules":  # a rule without `paths` loads always
        lines = ["paths:", *(f"  - {q}" for q in quoted)] if globs else [] if every else None
    elif host.name == "cursor":  # the globs line as Cursor writes it: plain, comma-separated
        lines = [f"description: {format_scalar(capsule)}"] if capsule else []
        lines += [f"globs: {','.join(globs)}"] if globs else []
        lines += [f"alwaysApply: {'true' if every else 'false'}"]
    elif host.name == "copilot":
        pattern = ",".join(globs) or ("**" if every else "")
        lines = [f"applyTo: {json.dumps(pattern, ensure_ascii=False)}"] if pattern else []
    else:
        pattern = quoted[0] if len(quoted) == 1 else "[" + ", ".join(quoted) + "]"
        kind = "fileMatch" if globs else "always" if every else "manual"
        lines = [f"inclusion: {kind}"] + ([f"fileMatchPattern: {pattern}"] if globs else [])
    if lines is None:
        return None
    return "---\n" + "\n".join(lines) + "\n---\n" if lines else ""


def render(host: Host, article: Article, globs: list[str], every: bool) -> str | None:
    """The whole generated file, marker included: the article's text, its capsule first when
    the text does not hold it. None where the host cannot express the article's scope."""
    front = _front(host, article.capsule, globs, every)
    if front is None:
        return None
    body, capsule = article.body.strip(), article.capsule
    keep = (
        capsule
        and host.name != "cursor"
        and " ".join(capsule.split()) not in " ".join(body.split())
    )
    rest = "\n\n".join(p for p in (capsule if keep else "", body) if p) + "\n"
    return front + rules_formats.marker(article.address, front + rest) + rest


def _name(address: str, host: Host, taken: set[str]) -> str:
    stem = "canon-" + address.replace("/", "-")
    name, n = stem + host.suffix, 2
    while name in taken:
        name, n = f"{stem}-{n}{host.suffix}", n + 1
    taken.add(name)
    return f"{host.folder}/{name}"


def wanted(store: Store, host: Host, assets: Assets) -> dict[str, tuple[str, str | None]]:
    """path -> (address, text) of every file to export, by address; text None where the host cannot
    express the scope (`applies`/`always`, else the address's files, else a rule on request)."""
    taken: set[str] = set()
    out: dict[str, tuple[str, str | None]] = {}
    for article in store.articles():
        if ":" in article.address:  # a mount's article governs files outside this project
            continue
        globs, every = reach.applies(article.meta), reach.always(article.meta)
        globs = globs or ([] if every else rules_formats.globs_of(assets.of(article.address)))
        if globs or every or article.scope == "rule":
            text = render(host, article, globs, every)
            out[_name(article.address, host, taken)] = (article.address, text)
    return out


def _read(project: Path, relpath: str) -> str | None:
    try:
        data, _ = fsio.read_regular(project / relpath, MAX_BYTES, inside=os.path.realpath(project))
    except FileNotFoundError:
        return None
    except (OSError, OutsideStore):
        return "\0"  # something canon must not replace (a FIFO, a link leading out)
    return data.decode("utf-8", errors="replace")


def _on_disk(project: Path, host: Host) -> dict[str, str]:
    """path -> text of every file in the host's folder that carries canon's marker."""
    found: dict[str, str] = {}
    folder = project / host.folder
    if not folder.is_dir() or folder.is_symlink():
        return found
    for rel in walk.files(str(folder), host.suffix):
        relpath = f"{host.folder}/{rel}"
        text = _read(project, relpath)
        if text and rules_formats.read_marker(text):
            found[relpath] = text
    return found


def survey(store: Store, host_name: str, assets: Assets | None = None) -> list[Generated]:
    """Every file the export writes or removes, with its state, by path."""
    host = HOSTS[host_name]
    project = store.project
    assets = assets or Assets(project, store.root)
    want = wanted(store, host, assets) if store.exists() else {}
    disk = _on_disk(project, host)
    result: list[Generated] = []
    for path in sorted(set(want) | set(disk)):
        address, text = want.get(path, ("", ""))
        current = disk.get(path)
        if text is None:
            result.append(Generated(path, address, "", "inexpressible"))
            continue
        if current is None:
            current = _read(project, path) if path in want else None
            state = "missing" if current is None else "foreign"
        else:
            marked = rules_formats.read_marker(current)
            assert marked is not None
            address = address or marked[0]
            if marked[1]:
                state = "edited"
            elif path not in want:
                state = "orphaned"
            else:
                state = "current" if current == text else "outdated"
        result.append(Generated(path, address, text, state))
    return result


def used_hosts(project: Path) -> list[str]:
    """Hosts whose folder already holds a file canon exported (the ones `canon check` watches)."""
    return [name for name, host in HOSTS.items() if _on_disk(project, host)]


def apply(store: Store, files: list[Generated]) -> dict[str, str]:
    """Write what is missing or out of date, remove leftovers; edited and foreign files stay."""
    failed: dict[str, str] = {}
    for item in files:
        path = store.project / item.path
        try:
            if item.state in ("missing", "outdated"):
                data = item.text.encode("utf-8")
                fsio.atomic_write(path, data, anchor=store.project, follow=False)
            elif item.state == "orphaned":
                os.unlink(path)
        except (OSError, OutsideStore) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            failed[item.path] = f"not written ({why}); nothing was written through it"
    return failed
