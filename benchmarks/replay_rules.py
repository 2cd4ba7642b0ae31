"""Replay `canon import` and `canon export` on real rule files (not part of the test suite).

    python benchmarks/replay_rules.py ../shared/corpus/agent-rules [NAME ...]

For each corpus repository (layout: its README) it rebuilds the tree in a temporary git repo
(real rule files, empty placeholders for every other file, the symbolic links), then reports:
- host-read files unlisted: files an agent reads that `canon import` neither imports nor names;
- reach: of the (file, rule) pairs the original host applied by path (Claude `paths:`, Cursor
  `globs`/`alwaysApply`, Copilot `applyTo`, Kiro `fileMatch`/`always`, a nested AGENTS.md /
  CLAUDE.md / GEMINI.md for its subtree, root ones and project-wide files always), the share
  canon delivers by path (the governing article plus the rules that apply to the file);
- round trip: each imported host rule exported back to its host, compared by text and scope.
The host semantics here are written independently of canon's own parser on purpose.
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

NESTED = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
EXPORT_HOSTS = {".claude/rules/": "claude-rules", ".cursor/rules/": "cursor"}
EXPORT_HOSTS[".github/instructions/"] = "copilot"
EXPORT_HOSTS[".kiro/steering/"] = "kiro"


def rebuild(corpus: Path, name: str, into: Path) -> list[str]:
    """The repository as files, placeholders and links; returns every regular file's path."""
    files: list[str] = []
    with gzip.open(corpus / name / "tree.tsv.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#") or not line.strip():
                continue
            kind, path, *rest = line.rstrip("\n").split("\t")
            target = into / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if kind == "file" and not target.exists():
                target.touch()
            elif kind == "link":
                os.symlink(rest[0], target)
            elif kind == "dir":
                target.mkdir(exist_ok=True)
    base = corpus / name / "files"
    for path in base.rglob("*"):
        if path.is_file():
            dest = into / path.relative_to(base)
            dest.parent.mkdir(parents=True, exist_ok=True)
            if dest.is_symlink():
                dest.unlink()
            dest.write_bytes(path.read_bytes())
    subprocess.run(["git", "init", "-q"], cwd=into, check=True)
    subprocess.run(["git", "add", "-A"], cwd=into, check=True)
    for root, dirs, names in os.walk(into):
        dirs[:] = [d for d in dirs if d not in (".git", ".canon")]
        for n in names:
            full = Path(root) / n
            if full.is_file() and not full.is_symlink():
                files.append(full.relative_to(into).as_posix())
    return sorted(files)


# ------------------------------------------------------------------ host semantics


_GLOB_TOKEN = re.compile(r"\*\*/|\*\*|\*|\?|\{|\}|,|\[[^\]]*\]|.", re.S)


def glob_re(glob: str) -> re.Pattern[str]:
    """A host glob as a regex, translated token by token (kept apart from canon's own matcher,
    so the replay checks canon rather than itself): `**` any depth, `*` within a name, `{a,b}`,
    `[…]`; a glob without '/' matches a name at any depth; a directory covers what is under it."""
    glob = glob.strip().removeprefix("./")
    if "/" not in glob.rstrip("/"):
        glob = "**/" + glob
    pieces: list[str] = []
    braces = 0
    for token in _GLOB_TOKEN.findall(glob):
        if token == "**/":
            pieces.append("(?:[^/]+/)*")
        elif token == "**":
            pieces.append(".*")
        elif token == "*":
            pieces.append("[^/]*")
        elif token == "?":
            pieces.append("[^/]")
        elif token == "{":
            braces += 1
            pieces.append("(?:")
        elif token == "}" and braces:
            braces -= 1
            pieces.append(")")
        elif token == "," and braces:
            pieces.append("|")
        elif token.startswith("[") and len(token) > 1:
            pieces.append("[" + token[1:-1].replace("!", "^", 1) + "]")
        else:
            pieces.append(re.escape(token))
    return re.compile("".join(pieces).rstrip("/") + "(?:/.*)?\\Z")


def front(text: str) -> dict[str, object]:
    """Front matter as the hosts read it: `key: value` and `- item` lines."""
    meta: dict[str, object] = {}
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0].strip() != "---":
        return meta
    key = ""
    for line in lines[1:]:
        if line.strip() == "---":
            break
        item = re.match(r"\s*-\s+(.*)", line)
        pair = re.match(r"([A-Za-z_][\w-]*):\s*(.*)", line)
        if item and key:
            meta.setdefault(key, [])
            if isinstance(meta[key], list):
                meta[key].append(item.group(1).strip().strip("\"'"))  # type: ignore[union-attr]
        elif pair:
            key, value = pair.group(1), pair.group(2).strip()
            if value.startswith("[") and value.endswith("]"):
                meta[key] = [v.strip().strip("\"'") for v in value[1:-1].split(",") if v.strip()]
            else:
                meta[key] = value.strip("\"'") if value else []
    return meta


def split(value: object) -> list[str]:
    items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    out: list[str] = []
    for item in items:
        depth, cur = 0, ""
        for ch in item + ",":
            depth += (ch == "{") - (ch == "}")
            if ch == "," and depth <= 0:
                if cur.strip().strip("\"'"):
                    out.append(cur.strip().strip("\"'"))
                cur = ""
            else:
                cur += ch
    return out


def host_rule(rel: str, text: str) -> tuple[str, list[str]] | None:
    """('always'|'globs', globs) for a host-read file applied by path; None: not by path."""
    meta = front(text)
    base = rel.rsplit("/", 1)[-1]
    if rel in (".github/copilot-instructions.md", ".cursorrules", ".claude/CLAUDE.md"):
        return "always", []
    if rel.startswith(".claude/rules/"):
        globs = split(meta.get("paths") or meta.get("globs"))
        return ("globs", globs) if globs else ("always", [])
    if "/.cursor/rules/" in "/" + rel:
        where = ("/" + rel).split("/.cursor/rules/")[0].strip("/")
        prefix = where + "/" if where else ""
        if str(meta.get("alwaysApply", "")).lower() == "true":
            return ("globs", [prefix + "**"]) if prefix else ("always", [])
        globs = split(meta.get("globs"))
        neg = [g for g in globs if g.startswith("!")]
        pos = [prefix + g for g in globs if not g.startswith("!")]
        return ("globs", pos + ["!" + prefix + g[1:] for g in neg]) if pos else None
    if rel.startswith(".github/instructions/"):
        globs = split(meta.get("applyTo"))
        return ("globs", globs) if globs else None
    if rel.startswith(".kiro/steering/"):
        inclusion = str(meta.get("inclusion") or "always")
        if inclusion == "always":
            return "always", []
        globs = split(meta.get("fileMatchPattern"))
        return ("globs", globs) if inclusion == "fileMatch" and globs else None
    if base in NESTED:
        directory = rel[: -len(base)].rstrip("/")
        return ("globs", [directory + "/**"]) if directory else ("always", [])
    return None


def host_read(project: Path) -> list[str]:
    """Every file an agent reads, symbolic links inside the project followed."""
    found: list[str] = []
    real = os.path.realpath(project)
    for root, dirs, names in os.walk(project, followlinks=True):
        rel_root = Path(root).relative_to(project).as_posix()
        if not os.path.realpath(root).startswith(real):
            dirs[:] = []
            continue
        dirs[:] = [d for d in dirs if d not in (".git", ".canon", "node_modules")]
        for n in names:
            rel = n if rel_root == "." else f"{rel_root}/{n}"
            if not os.path.isfile(project / rel):
                continue
            if (
                (rel.startswith(".claude/rules/") and n.endswith(".md"))
                or ("/.cursor/rules/" in "/" + rel and n.endswith(".mdc"))
                or (rel.startswith(".github/instructions/") and n.endswith(".instructions.md"))
                or (rel.startswith(".kiro/steering/") and n.endswith(".md"))
                or rel in (".github/copilot-instructions.md", ".cursorrules")
                or n in NESTED
            ):
                found.append(rel)
    return sorted(found)


# ------------------------------------------------------------------ canon side


def canon(project: Path, *args: str) -> str:
    env = dict(os.environ, CANON_NO_CACHE="1")
    cmd = [sys.executable, "-m", "canon_ls.agent.cli", *args]
    done = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True)
    return done.stdout + done.stderr


def placed(output: str) -> tuple[dict[str, str], set[str]]:
    """From an import's lines: file -> the address holding its text, and every file named."""
    where: dict[str, str] = {}
    named: set[str] = set()
    later: dict[str, str] = {}
    for line in output.splitlines():
        m = re.match(r"(\S.*?) -> (\S+?): ", line)
        if m:
            where[m.group(1)] = m.group(2)
            named.add(m.group(1))
            continue
        m = re.match(r"(\S.*?): skipped, (.*)", line)
        if m:
            named.add(m.group(1))
            other = re.search(r"`?([\w./@-]+\.(?:md|mdc))`?", m.group(2))
            if other:
                later[m.group(1)] = other.group(1)
    for path, other in later.items():
        if other in where:
            where[path] = where[other]
    return where, named


def delivered(project: Path, files: list[str]) -> dict[str, set[str]]:
    from canon_ls.core.storage.store import Store

    store = Store(project)
    rules_for = getattr(store, "rules_for", None)
    out: dict[str, set[str]] = {}
    for f in files:
        got = {store.governing(store.address_of(f, as_path=True)) or ""}
        if rules_for is not None:
            got.update(rules_for(f))
        out[f] = got
    return out


def matched(globs: tuple[str, ...], universe: list[str]) -> frozenset[str]:
    inc = [glob_re(g) for g in globs if not g.startswith("!")]
    exc = [glob_re(g[1:]) for g in globs if g.startswith("!")]
    return frozenset(
        f for f in universe if any(r.match(f) for r in inc) and not any(r.match(f) for r in exc)
    )


def round_trip(
    project: Path, where: dict[str, str], read: list[str], universe: list[str]
) -> tuple[int, list[str]]:
    """(host rules compared, differences) after exporting each host back; the scope is the
    same when both name the same files of the tree."""
    from canon_ls.formats import hosts as rules_formats

    diffs: list[str] = []
    compared = 0
    for folder, host in EXPORT_HOSTS.items():
        sources = [p for p in read if p.startswith(folder) and p in where]
        if not sources:
            continue
        canon(project, "export", host)
        exported: dict[str, Any] = {}
        for path in (project / folder).rglob("canon-*"):
            rel = path.relative_to(project).as_posix()
            src = rules_formats.read_source(rel, path.read_bytes())
            if src.exported_from:
                exported[src.exported_from] = src
        for rel in sources:
            compared += 1
            orig = rules_formats.read_source(rel, (project / rel).read_bytes())
            back = exported.get(where[rel])
            if back is None:
                diffs.append(f"{rel}: not exported to {host}")
                continue
            same_text = " ".join(orig.body.split()) in " ".join(back.body.split())
            same_scope = orig.when == back.when and matched(orig.globs, universe) == matched(
                back.globs, universe
            )
            if not same_text or not same_scope:
                what = [w for w, ok in (("text", same_text), ("scope", same_scope)) if not ok]
                was = f" ({orig.when} {list(orig.globs)} -> {back.when} {list(back.globs)})"
                diffs.append(f"{rel}: {' and '.join(what)} differ" + ("" if same_scope else was))
    return compared, diffs


def replay(corpus: Path, name: str, verbose: bool) -> tuple[int, int, int, int, int, int]:
    with tempfile.TemporaryDirectory(prefix=f"replay-{name}-") as tmp:
        project = Path(tmp)
        files = rebuild(corpus, name, project)
        read = host_read(project)
        dry = canon(project, "import")
        _, named = placed(dry)
        unlisted = [p for p in read if p not in named]
        wrote = canon(project, "import", "--write")
        where, _ = placed(wrote)
        again = canon(project, "import")
        idempotent = all(" -> " not in ln or "nothing to do" in ln for ln in again.splitlines())
        universe = [f for f in files if f not in read]
        pairs = hit = 0
        misses: dict[str, int] = {}
        got = delivered(project, universe)
        for rel in read:
            rule = host_rule(rel, (project / rel).read_text(encoding="utf-8", errors="replace"))
            if rule is None:
                continue
            kind, globs = rule
            inc = [glob_re(g) for g in globs if not g.startswith("!")]
            exc = [glob_re(g[1:]) for g in globs if g.startswith("!")]
            for f in universe:
                if kind == "globs" and (
                    not any(r.match(f) for r in inc) or any(r.match(f) for r in exc)
                ):
                    continue
                pairs += 1
                if where.get(rel) in got[f]:
                    hit += 1
                else:
                    misses[rel] = misses.get(rel, 0) + 1
        compared, diffs = round_trip(project, where, read, universe)
        print(
            f"{name}: {len(read)} host-read files, {len(unlisted)} unlisted; reach "
            f"{hit}/{pairs} = {100 * hit / max(pairs, 1):.1f}%; round trip {compared - len(diffs)}"
            f"/{compared} same; import idempotent: {idempotent}"
        )
        if verbose:
            for p in unlisted:
                print(f"  unlisted: {p}")
            for rel, n in sorted(misses.items(), key=lambda kv: -kv[1])[:10]:
                print(f"  missed {n} pairs: {rel} -> {where.get(rel)}")
            for d in diffs[:15]:
                print(f"  round trip: {d}")
        return len(read), len(unlisted), hit, pairs, compared, len(diffs)


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "-v"]
    if not args:
        print(__doc__)
        return 2
    corpus = Path(args[0]).resolve()
    names = args[1:] or sorted(p.name for p in corpus.iterdir() if (p / "tree.tsv.gz").exists())
    totals = [0] * 6
    for name in names:
        for i, v in enumerate(replay(corpus, name, "-v" in sys.argv)):
            totals[i] += v
    read, unlisted, hit, pairs, compared, diffs = totals
    print(
        f"ALL: {read} host-read files, {unlisted} unlisted; reach {hit}/{pairs} = "
        f"{100 * hit / max(pairs, 1):.1f}%; round trip {compared - diffs}/{compared} same"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
