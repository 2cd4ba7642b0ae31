"""The canon tool (SPEC §6): one JSON action in, one text out; every adapter calls run()."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from canon_ls.core.checking import lint
from canon_ls.core.checking import schema as sch
from canon_ls.core.dialect import JSON, Dialect
from canon_ls.core.git.evidence import Evidence, plural
from canon_ls.core.storage import article as art
from canon_ls.core.storage.address import OutsideStore, printable
from canon_ls.core.storage.journal import subjects_of
from canon_ls.core.storage.store import BadInput, JournalEntry, Store, iter_addresses

ACTIONS = ("read", "write", "journal", "map", "search")
WINDOW = 10
_KEYS = {
    "read": {"path"},
    "write": {"path", "capsule", "body", "scope"},
    "journal": {"body", "subject", "slug"},
    "map": {"path"},
    "search": {"query", "journal"},
}


@dataclass
class ToolResult:
    text: str
    code: int  # 0 done, 1 refused by the schema, 2 bad input


class _Bad(Exception):
    pass


# How the tool presents itself to an agent (MCP server, Pi extension).
DESCRIPTION = (
    "Project memory (.canon/ in the repository): one article per file or folder, plus an "
    "append-only journal. Actions: "
    "read {path} - the article governing a path (read it before changing that code); "
    "write {path, capsule?, body?, scope?} - create or update that article (absent fields stay "
    "unchanged); "
    "journal {body, subject?, slug?} - record what happened and why; "
    "map {path?} - list articles as 'address: capsule'; "
    "search {query, journal?} - BM25 search over articles (and the journal)."
    " Journal what arrives (a request, a log, a decision) as it came, names and exact numbers "
    "included: articles distill, only the journal keeps the original. When a canon line names "
    "an article, read it before relying on it: the line is not the article."
)

# Where knowledge belongs depends on whether anything ranks it (SPEC §11.4): without the lane
# only the address spine delivers; with it, a rule over many files is best under its own name.
FILING_SPINE = (
    " File a constraint at the file or folder it governs: an article whose address no file "
    "has is never shown to an agent unless it asks."
)
FILING_LANE = (
    " File a constraint at the file or folder it governs. A rule that constrains many files "
    "and belongs to none goes at an address naming the "
    'rule itself, with scope "rule" (e.g. conventions/money-rounding): it is brought in when '
    "the work calls for it. Not in a root article, which is shown on every touch."
)


def description(lane: bool = False) -> str:
    """The tool's description, with the filing advice for the project's `retrieval` option."""
    return DESCRIPTION + (FILING_LANE if lane else FILING_SPINE)


GUIDELINE = (
    "Use the canon tool to read the article governing a file before changing it, and any "
    "article a canon line names (the line is not the article). Journal sources as they arrive, "
    "names and exact numbers included: articles distill, only the journal keeps the original. "
    "File a constraint at the file or folder it governs; update that article when the code changes."
)


def input_schema() -> dict[str, Any]:
    """JSON Schema of the §6 action object (the MCP tool's inputSchema)."""
    return {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": list(ACTIONS),
                "description": "read | write | journal | map | search",
            },
            "path": {
                "type": "string",
                "description": "read/write: a project file or directory path (or address); "
                "map: optional address prefix",
            },
            "capsule": {
                "type": "string",
                "description": "write: one dense line, the current truth about the asset",
            },
            "body": {
                "type": "string",
                "description": "write: the article body (Markdown); journal: what happened",
            },
            "scope": {
                "type": "string",
                "enum": ["rule", "asset"],
                "description": "write: declare (rule) or withdraw (asset) a rule article",
            },
            "subject": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}],
                "description": "journal: the paths/addresses the entry is about "
                "(one path may be given as a string)",
            },
            "slug": {"type": "string", "description": "journal: short file name slug"},
            "query": {"type": "string", "description": "search: words to look for"},
            "journal": {
                "type": "boolean",
                "description": "search: include journal entries as results",
            },
        },
        "required": ["action"],
        "additionalProperties": False,
    }


def _opt_str(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None or isinstance(value, str):
        return value
    raise _Bad(f'"{key}" must be a string, not {type(value).__name__}.')


def _req_str(args: dict[str, Any], key: str, action: str, dialect: Dialect) -> str:
    value = _opt_str(args, key)
    if not value:
        raise _Bad(dialect.needs(action, key))
    return value


def run(
    store: Store,
    action: object,
    *,
    source: str = "cli",
    session: str | None = None,
    evidence: Callable[[str], Evidence | None] | None = None,
    dialect: Dialect = JSON,
) -> ToolResult:
    """Run one §6 action object (a dict, or its JSON text) against the store."""
    try:
        if isinstance(action, (str, bytes)):
            with contextlib.suppress(ValueError):  # text that is no JSON is refused below
                action = json.loads(action)
        if not isinstance(action, dict):
            raise _Bad(f"The canon tool takes a JSON object such as {JSON.example('read')}.")
        name = action.get("action")
        if not isinstance(name, str) or name not in ACTIONS:
            shown = "no action" if name is None else f"the action {name!r}"
            raise _Bad(f"canon does not know {shown}; use one of {', '.join(ACTIONS)}.")
        args = {k: v for k, v in action.items() if k != "action"}
        unknown = sorted(set(args) - _KEYS[name])
        if unknown:
            allowed = ", ".join(sorted(_KEYS[name]))
            raise _Bad(f"The {name} action does not take {', '.join(unknown)}; it takes {allowed}.")
        problem = store.layout_problem()  # §12: such a store is refused for reads and writes
        if problem:
            return ToolResult(problem, 2)
        if name == "read":
            known = _evidence if evidence is None else lambda _, a: _line(evidence(a))
            return _read(store, _req_str(args, "path", name, dialect), known, dialect)
        if name == "write":
            return _write(store, args, dialect)
        if name == "journal":
            return _journal(store, args, source, session)
        if name == "map":
            return _map(store, _opt_str(args, "path") or "", dialect)
        return _search(store, args, dialect)
    except _Bad as exc:
        return ToolResult(str(exc), 2)
    except (BadInput, OutsideStore) as exc:
        text = str(exc)
        if isinstance(exc, OutsideStore):
            text = f"Refused: {text}; canon only reads and writes inside its store."
        return ToolResult(text, 2)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        return ToolResult(f"canon could not complete the action: {exc.strerror}{where}.", 2)
    except Exception as exc:  # noqa: BLE001 - the tool never shows a traceback
        return ToolResult(f"canon hit an internal error ({type(exc).__name__}: {exc}).", 2)


def _read(
    store: Store, path: str, evidence_of: Callable[[Store, str], str | None], dialect: Dialect
) -> ToolResult:
    address = store.address_of(path)
    if not address:
        raise _Bad("The project root has no article; give a file or directory path to read.")
    governing, article = store.governing_article(address)
    if governing is None or article is None:
        write = dialect.write_one(address)
        return ToolResult(
            f"No article governs {address} yet; once your task is done, write one with {write}.", 0
        )
    shown, asked = printable(governing), printable(address)
    title = shown if governing == address else f"{shown} governs {asked}"
    heads = (("capsule", article.capsule), ("updated", article.updated))
    lines = [title] + [f"{key}: {value}" for key, value in heads if value]  # as pi-canon: no blanks
    if article.reviewed:
        lines.append(f"reviewed: {article.reviewed}")
    if article.scope == "rule":
        lines.append("scope: rule")
    evidence = evidence_of(store, governing)
    if evidence is not None:
        lines.append(evidence)
    lines += [f"problem: {p}" for p in article.problems]
    if store.is_orphan(governing):
        lines.append(" ".join(_orphan_question(governing, dialect)))
    schema = store.schema_for(governing)
    text = article.body  # read from the file once (the store keeps no bodies)
    values = {"capsule": article.capsule, "title": article.title, "body": text}
    lines += [f"schema: {v}" for v in sch.violations(schema, values)] + list(schema.notes)
    body = text.strip("\n")
    if any(p.startswith("binary") for p in article.problems):
        body = "(binary content not shown)"
    if body:
        lines += ["", body, ""]
    named = store.journal_names(governing)
    earlier = f" and {len(named) - 3} earlier" if len(named) > 3 else ""
    index = f"journal: {', '.join(map(printable, named[:3]))}{earlier}"
    lines.append(index if named else f"journal: none about {governing}")
    return ToolResult("\n".join(lines), 0)


def _line(evidence: Evidence | None) -> str | None:
    return evidence.line() if evidence is not None else None


def _evidence(store: Store, address: str) -> str | None:
    """SPEC §6 read, §9.1: a stale article's evidence in one line. Advisory: a project git
    cannot read, or any other failure here, leaves the read without it."""
    from canon_ls.core.git.evidence_cache import cached_line

    try:
        found, line = cached_line(store, address)
        if found:
            return line
        from canon_ls.core.git.staleness import measured_line

        return measured_line(store, address)
    except Exception:  # noqa: BLE001 - staleness never breaks a read
        return None


def _write(store: Store, args: dict[str, Any], dialect: Dialect) -> ToolResult:
    path = _req_str(args, "path", "write", dialect)
    capsule = _opt_str(args, "capsule")
    body = _opt_str(args, "body")
    scope = _opt_str(args, "scope")
    if scope not in (None, "", "rule", "asset"):
        raise _Bad(f'scope must be "rule" or "asset", not {scope!r}.')
    outcome = store.write(path, capsule=capsule, body=body, scope=scope)
    if outcome.status == "refused":
        reasons = " ".join(outcome.lines)
        return ToolResult(f"Refused to write {outcome.address}: {reasons} Nothing was written.", 1)
    head = f"Wrote {outcome.address}."
    if outcome.status == "unchanged":
        head = f"{outcome.address} is already up to date; nothing was written."
    lines = outcome.lines
    if dialect is not JSON:  # the orphan question in the caller's words
        asked = " ".join(lint.orphan_question(outcome.address))
        said = " ".join(_orphan_question(outcome.address, dialect))
        lines = [said if line == asked else line for line in lines]
    return ToolResult("\n".join([head, *lines]), 0)


def _orphan_question(address: str, dialect: Dialect) -> list[str]:
    """The orphan question in the caller's words (how to move it, how to declare a rule)."""
    return lint.orphan_question(
        address, dialect.declare_rule(address), dialect.move_article(address)
    )


def _journal(store: Store, args: dict[str, Any], source: str, session: str | None) -> ToolResult:
    body = _opt_str(args, "body")
    slug = _opt_str(args, "slug")
    subject = args.get("subject")
    if subject is not None and not isinstance(subject, (list, str)):
        raise _Bad('"subject" must be an array of paths (or one path as a string).')
    if isinstance(subject, list) and not all(isinstance(s, str) for s in subject):
        raise _Bad('"subject" must be an array of path strings.')
    pasted = art.without_pasted(body) if body else None
    if pasted is not None:
        body = pasted[0]
    if not body or not body.strip():
        return ToolResult(
            "The journal entry is empty; what happened? Give a body (decisions, findings, "
            "changes). Nothing was written.",
            2,
        )
    # A bare string subject is a one-element array (§6).
    path = store.journal(body, subject, slug, source=source, session=session)
    head = f"Journaled {path.parent.name}/{path.name}."
    missing = _values_missing(store, body, subjects_of(subject))
    noted = [f"{art.PASTED}."] if pasted is not None else []
    return ToolResult("\n".join([head, *noted, *missing]), 0)


def _values_missing(store: Store, body: str, subjects: list[str]) -> list[str]:
    """§6.1 item 8: the values this entry records that the articles it is about lack (the
    article is what a touch shows; the journal is read only when asked)."""
    named: list[str] = []
    for address in dict.fromkeys(store.address_of(s) for s in subjects):
        found, article = store.governing_article(address) if address else (None, None)
        if article is not None and found == address:
            text = f"{article.capsule} {article.body}"
            named += [f"{address} lacks {v}" for v in lint.unretained(body, text)]
    if not named:
        return []
    return [
        f"The entry records values its article does not carry: {'; '.join(named[:6])}. A "
        "touch shows the article, not the journal: if they still hold beyond this event, "
        "write them into the article as they are."
    ]


def _map(store: Store, raw: str, dialect: Dialect) -> ToolResult:
    if not store.exists() and not store.mounts:
        return ToolResult(
            f"There is no canon store here yet (.canon/ does not exist); {dialect.creates_store}.",
            0,
        )
    prefixes: set[str] = set()
    if raw.strip():
        from canon_ls.core.storage.address import clean

        prefixes = {p for p in (clean(raw), store.address_of(raw)) if p}
    found: list[str] = []
    mount = _mount_root(store, raw)
    if mount or not prefixes:
        store.refresh()
    if mount:
        found = [a for a in store.addresses() if a.startswith(mount + ":")]
        prefixes = {mount + ":"}
    else:  # one folder's articles are read alone (under): no whole-store load
        for prefix in prefixes or {""}:
            found += _under(store, prefix) if prefix else list(iter_addresses(store, ""))
    addresses = sorted(set(found))
    if not addresses:
        if prefixes:
            return ToolResult(f"No article lies at or under {min(prefixes, key=len)}.", 0)
        return ToolResult(
            f"The store has no articles yet; add one with {dialect.first_article}.", 0
        )
    lines = []
    for address in addresses:
        article = store.held_article(address)
        if article is None:
            continue
        name = printable(address)
        line = f"{name}: {article.capsule}" if article.capsule else name  # as pi-canon
        if article.problems:
            line += f" [problem: {article.problems[0]}]"
        lines.append(line)
    return ToolResult("\n".join(lines), 0)


def _under(store: Store, prefix: str) -> list[str]:
    """The articles at and under `prefix`; a store not loaded reads only those files."""
    if store.loaded or store.mounts or ":" in prefix:
        store.refresh()
        return list(iter_addresses(store, prefix))
    return [a for a in sorted(store.below(prefix)) if store.governing_article(a)[0] == a]


def _mount_root(store: Store, raw: str) -> str:
    """The mount name when `raw` names a mount itself ('lake', 'lake:' or its directory)."""
    text = raw.strip()
    if text.endswith(":") and text[:-1] in store.mounts:
        return text[:-1]
    for name, directory in store.mounts.items():
        if text.rstrip("/") == str(directory):
            return name
    return ""


def _entry_line(store: Store, entry: JournalEntry) -> str:
    scope = entry.date or "undated"
    if entry.subject:
        scope += "; subject: " + ", ".join(entry.subject)
    return f"journal/{printable(entry.name)} ({scope}): {_excerpt(store.journal_body(entry))}"


def _excerpt(text: str) -> str:
    """A body as one line of at most 160 characters (a search result's text)."""
    text = " ".join(text.split())
    return text if len(text) <= 160 else text[:159] + "…"


def _search(store: Store, args: dict[str, Any], dialect: Dialect) -> ToolResult:
    query = _req_str(args, "query", "search", dialect)
    with_journal = args.get("journal")
    if with_journal is not None and not isinstance(with_journal, bool):
        raise _Bad('"journal" must be true or false.')
    if not query.strip():
        raise _Bad(dialect.needs("search", "query"))
    if not store.exists() and not store.mounts:
        return ToolResult(
            "There is no canon store here yet (.canon/ does not exist), so nothing matches; "
            f"{dialect.creates_store}.",
            0,
        )
    store.refresh()
    a_hits, a_total = store.search_articles(query, WINDOW)
    lines: list[str] = []
    if with_journal:
        j_hits, j_total = store.search_journal(query, WINDOW)
        na, nj = min(len(a_hits), WINDOW // 2), min(len(j_hits), WINDOW - WINDOW // 2)
        spare = WINDOW - na - nj
        extra = min(spare, len(a_hits) - na)
        na, spare = na + extra, spare - extra
        nj += min(spare, len(j_hits) - nj)
        shown = na + nj
        total = a_total + j_total
        if total == 0:
            return ToolResult(f'Nothing in the articles or the journal matches "{query}".', 0)
        lines.append(_head(query, shown, total, ("result", "results"), " (articles and journal)"))
        lines += [_article_line(store, a) for a, _ in a_hits[:na]]
        lines += [_entry_line(store, e) for e, _ in j_hits[:nj]]
        return ToolResult("\n".join(lines), 0)
    if a_total == 0:
        lines.append(f'No article matches "{query}".')
    else:
        lines.append(_head(query, len(a_hits), a_total, ("article", "articles")))
        lines += [_article_line(store, a) for a, _ in a_hits]
    entries = store.journal_count()
    if entries:
        them = "it" if entries == 1 else "them"
        lines.append(
            f"The journal has {plural(entries, 'entry', 'entries')} (not searched); "
            f"{dialect.with_journal} to include {them}."
        )
    return ToolResult("\n".join(lines), 0)


def _head(query: str, shown: int, total: int, noun: tuple[str, str], note: str = "") -> str:
    """`1 article matches "q":`, `12 results (articles and journal) match "q"; …`."""
    counted = plural(total, *noun) + note
    verb = "matches" if total == 1 else "match"
    if total > shown:
        return (
            f'{counted} {verb} "{query}"; showing the best {shown}, the cap dropped '
            f"{total - shown} (refine the query to see them):"
        )
    return f'{counted} {verb} "{query}":'


def _article_line(store: Store, address: str) -> str:
    """`address: capsule`, or the body's opening words without a capsule (as pi-canon)."""
    article = store.article(address)
    capsule = (article.capsule or _excerpt(article.body)) if article else ""
    tags = article.tags if article is not None else ()
    return f"{printable(address)}: {capsule}" + (f" (tags: {', '.join(tags)})" if tags else "")
