"""Addresses (SPEC §3) and containment (§12): the one place that decides a path is inside a
store."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Container, Iterator, Mapping
from pathlib import Path
from urllib.parse import unquote, urlsplit

_MOUNT_PREFIX = re.compile(r"([^/:\\]+):(.*)", re.DOTALL)  # `name:rest`, the one mount rule
SURROGATE = re.compile("[\ud800-\udfff]")


class OutsideStore(ValueError):
    """A path that would leave the store or the project (or cannot name a file at all)."""


def _segments(text: str) -> list[str]:
    """Split on '/', drop empty and '.' segments, let '..' pop but never above the root."""
    out: list[str] = []
    for seg in text.split("/"):
        if seg == "..":
            del out[-1:]  # nothing to pop at the root
        elif seg not in ("", "."):
            out.append(seg)
    return out


def _strip_ext(segs: list[str], strip: bool = True) -> str:
    if not segs or not strip:
        return "/".join(segs)
    last = segs[-1]
    dot = last.rfind(".")
    if dot > 0:
        segs = [*segs[:-1], last[:dot]]
    return "/".join(segs)


def _prepare(raw: str) -> str:
    if not isinstance(raw, str):
        raise OutsideStore("a path must be a string")
    if "\x00" in raw:
        raise OutsideStore("the path contains a NUL byte")
    if SURROGATE.search(raw):
        raise OutsideStore("the path is not valid Unicode (lone surrogate)")
    text = raw.strip()
    if text[:7].lower() == "file://" or text[:6].lower() == "file:/":
        text = unquote(urlsplit(text).path)
        if "\x00" in text:
            raise OutsideStore("the path contains a NUL byte")
    return text.replace("\\", "/")


def clean(raw: str) -> str:
    """Segment normalisation only (no extension stripping): for strings that already are
    addresses, such as wikilink targets. A trailing '.md' goes, as Obsidian links allow it."""
    text = _prepare(raw)
    m = _MOUNT_PREFIX.fullmatch(text)
    prefix = ""
    if m and not text.startswith("/"):
        prefix, text = m.group(1) + ":", m.group(2)
    segs = _segments(text)
    if segs and segs[-1].endswith(".md") and len(segs[-1]) > 3:
        segs[-1] = segs[-1][:-3]
    joined = "/".join(segs)
    return prefix + joined if joined else ""


def normalise(
    raw: str,
    project: Path | None = None,
    mounts: Mapping[str, Path] | None = None,
    *,
    strip: bool = True,
) -> str:
    """SPEC §3: a path (relative, absolute, or file:// URI) -> address; '' for the project root."""
    address = _address(_prepare(raw), project, mounts, strip)
    if any(seg.lower() == ".git" for seg in re.split("[/:]", address)):
        raise OutsideStore(f"{raw} lies in a .git directory, which git never commits")
    return address


def _address(
    text: str, project: Path | None, mounts: Mapping[str, Path] | None, strip: bool
) -> str:
    name, rest = split_mount(text, mounts or ())
    if name:
        rest = _strip_ext(_segments(rest), strip)
        return f"{name}:{rest}" if rest else ""
    segs = _segments(text)
    if text.startswith("/"):
        for base_segs, prefix in _bases(project, mounts):
            n = len(base_segs)
            if segs[:n] == base_segs:
                rest = _strip_ext(segs[n:], strip)
                return "" if prefix and not rest else prefix + rest
        if project is not None:
            raise OutsideStore(f"{text} lies outside the project and its mounts")
    return _strip_ext(segs, strip)


def argument(
    raw: str,
    is_article: Callable[[str], bool],
    project: Path | None = None,
    mounts: Mapping[str, Path] | None = None,
) -> str:
    """SPEC §3: the address of an existing article names it (`src/core/config.test` is never
    `src/core/config`); otherwise it is a path with its one extension dropped, as pi-canon reads."""
    exact = normalise(raw, project, mounts, strip=False)
    return exact if exact and is_article(exact) else normalise(raw, project, mounts)


def link_target(target: str, is_article: Callable[[str], bool]) -> str:
    """The article a wikilink's (already clean) target names: the same rule as `argument`, so
    `[[src/x.ts]]` names `src/x` unless an article `src/x.ts` exists."""
    return target if not target or is_article(target) else link_stem(target)


def link_stem(target: str) -> str:
    """A link target with its one extension dropped (`src/x.ts` -> `src/x`), as for any path."""
    return _strip_ext(target.split("/"))


def _bases(project: Path | None, mounts: Mapping[str, Path] | None) -> list[tuple[list[str], str]]:
    """Candidate roots for absolute paths, longest first (a mount inside the project wins)."""
    bases: list[tuple[list[str], str]] = []

    def add(path: Path, prefix: str) -> None:
        for variant in {str(path), os.path.realpath(path)}:
            bases.append((_segments(variant.replace("\\", "/")), prefix))

    if project is not None:
        add(Path(project), "")
    for name, directory in (mounts or {}).items():
        add(Path(directory), name + ":")
    bases.sort(key=lambda b: len(b[0]), reverse=True)
    return bases


def ancestors(address: str) -> Iterator[str]:
    """'a/b/c' -> 'a/b/c', 'a/b', 'a' (the rfind walk; SPEC §4)."""
    while address:
        yield address
        cut = address.rfind("/")
        if cut < 0:
            return
        address = address[:cut]


def may_name(name: str, leaf: str) -> bool:
    """Whether a folder entry `name` may carry an address ending in `leaf`: itself or it plus
    extensions (a superset: the address strips one extension only, callers narrow it)."""
    return name == leaf or name.startswith(leaf + ".")


def parent(address: str) -> str:
    """The address one segment up; '' at top level."""
    cut = address.rfind("/")
    return address[:cut] if cut > 0 else ""


def asset_folder(project: Path, address: str) -> bool:
    """Whether an article at `address` stands where a file would (SPEC §6.1 item 5): its folder
    exists, or the first missing one is a typo of one beside it (`scr`: `src`); topic folders
    are no asset's."""
    here = str(project)  # strings, not Paths: a check asks this of every orphan
    for seg in parent(address).split("/"):
        there = os.path.join(here, seg)
        if not os.path.isdir(there):
            with contextlib.suppress(OSError):
                typo = [n for n in os.listdir(here) if n != seg and _dropped(seg) & _dropped(n)]
                return len(seg) > 2 and any(os.path.isdir(os.path.join(here, n)) for n in typo)
            return False
        here = there
    return True


def _dropped(word: str) -> set[str]:
    return {word, *(word[:i] + word[i + 1 :] for i in range(len(word)))}


def contained(path: Path, base: Path) -> Path:
    """Resolve `path` (following symlinks), require it under `base`; return it resolved."""
    real = Path(os.path.realpath(path))
    real_base = Path(os.path.realpath(base))
    if real != real_base and real_base not in real.parents:
        raise OutsideStore(f"{path} lies outside {base}")
    return real


def split_mount(address: str, mounts: Container[str]) -> tuple[str, str]:
    """('lake', 'prices') for 'lake:prices' when lake is a mount, else ('', address): a colon
    that names no mount is part of the address."""
    if ":" in address:
        m = _MOUNT_PREFIX.fullmatch(address)
        if m and m.group(1) in mounts:
            return m.group(1), m.group(2)
    return "", address


class StorePaths:
    """One store's path rule (SPEC §3, §8): an address's article file and back, and the `name:`
    prefix of its mounts. Lexical (no disk access) except `checked`."""

    def __init__(self, articles_dir: Path, mounts: Container[str] = ()) -> None:
        self.articles_dir = articles_dir
        self.mounts = mounts
        self._prefix = f"{articles_dir}{os.sep}"

    def file(self, address: str) -> str:
        """The article file of a normalised project address (one the index holds or a
        request already checked), as a string: hovers stat it on every request."""
        return f"{self._prefix}{address}.md"

    def files_up(self, address: str) -> list[tuple[str, str]] | None:
        """(address, article file) from a normalised project address up to its first segment
        (§4's order); None for any other address (a mount's, or one to check first)."""
        if ":" in address or not address or normalise(address) != address:
            return None
        return [(a, self.file(a)) for a in ancestors(address)]

    def checked(self, address: str, resolve: bool = True) -> Path:
        """The article file of any address: refused (OutsideStore) when it is empty, not
        normalised, or (`resolve`) resolves outside the articles directory."""
        if not address:
            raise OutsideStore("an empty address names no article")
        if "\x00" in address or any(seg in ("", ".", "..") for seg in address.split("/")):
            raise OutsideStore(f"{address!r} is not a normalised address")
        path = self.articles_dir / (address + ".md")
        if resolve:
            contained(path, self.articles_dir)
        return path

    def address(self, file: str | Path) -> str | None:
        """The inverse of `checked` (lexical); None when `file` is not an article file."""
        try:
            rel = Path(os.path.abspath(file)).relative_to(os.path.abspath(self.articles_dir))
        except ValueError:
            return None
        text = rel.as_posix()
        if not text.endswith(".md") or text.rsplit("/", 1)[-1] == ".md":
            return None
        if any(seg.startswith(".") and seg.endswith(".tmp") for seg in text.split("/")):
            return None
        return text[:-3]

    def split(self, address: str) -> tuple[str, str]:
        return split_mount(address, self.mounts)


def governing_in(address: str, articles: Container[str]) -> str | None:
    """SPEC §4 over any set of article addresses: the exact address, else the nearest ancestor
    in `articles`, else None. A str.rfind walk: about a microsecond, whatever the store's size."""
    while address:
        if address in articles:
            return address
        cut = address.rfind("/")
        if cut < 0:
            return None
        address = address[:cut]
    return None


def within(path: str | Path, base: str | Path) -> bool:
    """Whether `path` is `base` or lies under it, lexically (both absolute and normalised)."""
    path, base = str(path), str(base)
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def place(
    path: str | Path, project: Path, root: Path, mounts: Mapping[str, Path] | None = None
) -> tuple[str, str]:
    """What a file is to canon (SPEC §2, §3, §8): ('article'|'asset', address), ('journal', ''),
    ('store', '') or ('', '') outside them or under `.git`; `root` is the store; lexical."""
    from canon_ls.core.storage.layout import ARTICLES_DIR, JOURNAL_DIR, STORE_DIR

    mounts = mounts or {}
    full = os.path.abspath(path)
    store_dirs = [(str(root), "")] + [
        (os.path.join(d, STORE_DIR), f"{n}:") for n, d in mounts.items()
    ]
    for store_dir, prefix in store_dirs:
        articles = os.path.join(store_dir, ARTICLES_DIR)
        if within(full, articles):
            address = StorePaths(Path(articles)).address(full)
            return ("store", "") if address is None else ("article", prefix + address)
    if within(full, os.path.join(root, JOURNAL_DIR)):
        return "journal", ""
    if any(within(full, store_dir) for store_dir, _ in store_dirs):
        return "store", ""
    in_project = within(full, str(project)) and not within(full, os.path.join(project, ".git"))
    in_mount = any(
        within(full, str(d)) and not within(full, os.path.join(d, ".git")) for d in mounts.values()
    )
    if not in_project and not in_mount:
        return "", ""
    try:
        return "asset", normalise(full, project, mounts)
    except ValueError:
        return "", ""


_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]")


def printable(name: str) -> str:
    """A name as printed on one line: as is, or double-quoted with JSON escapes when it holds a
    control character, so a name can never forge a line of its own (a finding, a hook's line)."""
    if not _UNPRINTABLE.search(name):
        return name
    text = json.dumps(name, ensure_ascii=False)  # escapes U+0000-U+001F, quotes, backslashes
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
