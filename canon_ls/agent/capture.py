"""Quick capture (SPEC §11.5): a prompt starting `remember:` becomes a journal entry."""

from __future__ import annotations

import os
import re
import time
from typing import Any

from canon_ls.agent.surfacing import Resolver
from canon_ls.agent.tokens import Token, tokens

PREFIX = re.compile(r"\A\s*(?:remember|note|记住|记一下|请记住)\s*[:：]", re.IGNORECASE)
# Punctuation of Chinese and Japanese prose that may touch a path with no space between.
_CJK_PUNCT = re.compile(r"[，。；：！？（）【】「」『』、“”‘’《》〈〉]")
# The path at the end of a word that starts in prose with no space between (`改动src/a.py`).
_ASCII_TAIL = re.compile(r"[A-Za-z0-9_./~-]+\Z")
MAX_SUBJECTS = 16
REPEAT_SECONDS = 120  # the same note twice in a session this soon is one note (two hooks)


def note_of(prompt: object) -> str | None:
    """The note a prompt asks to record."""
    if not isinstance(prompt, str) or (match := PREFIX.match(prompt)) is None:
        return None
    return prompt[match.end() :].strip() or None


def subjects(resolver: Resolver, body: str) -> list[str]:
    """Project paths (or article addresses) the note names, in order."""
    words = _CJK_PUNCT.sub(" ", body)
    found: list[str] = []
    for token in tokens("", {"note": words}):
        hit = resolver.resolve(Token(token.text, False))
        tail = _ASCII_TAIL.search(token.text)
        if hit is None and tail is not None and tail.start() > 0:  # `改动src/a.py`
            hit = resolver.resolve(Token(tail.group(), False))
        if hit is not None and hit.address not in found:
            found.append(hit.address)
    return found[:MAX_SUBJECTS]


def capture(hook: Any, prompt: object) -> tuple[str, dict[str, Any] | None]:
    """Journal a capture prompt: (line for the model, trace decision), or ('', None)."""
    body = note_of(prompt)
    if body is None:
        return "", None
    import hashlib

    options = hook.options
    journal = os.path.realpath(options.journal_dir)  # one store's guard: never another's
    digest = hashlib.sha256(f"{journal}\0{body}".encode("utf-8", "replace")).hexdigest()[:16]
    stats = hook.state.stats
    last = stats.get("last_capture")
    if isinstance(last, dict) and last.get("hash") == digest:
        stamp, entry = last.get("at"), last.get("path")
        recent = isinstance(stamp, (int, float)) and time.time() - stamp < REPEAT_SECONDS
        if recent and isinstance(entry, str) and os.path.isfile(entry):  # said only if there
            name = str(last.get("file") or "")
            return _said(name), {"decision": "captured", "file": name, "repeat": True}
    named = subjects(hook.resolver, body)
    from canon_ls.core.storage.store import Store

    try:
        store = Store(options.project, root=options["root"], mounts=options["mounts"] or ())
        path = store.journal(body, named or None, None, source=hook.agent, session=hook.session)
    except Exception as exc:  # noqa: BLE001 - a capture never breaks the turn
        problem = " ".join(str(exc).split())[:300].rstrip(".") or type(exc).__name__
        line = (
            f"canon: the user's note could not be journaled ({problem}); record it with the "
            'canon tool (action "journal") if it matters.'
        )
        return line, {"decision": "capture-failed", "problem": problem, "chars": len(line)}
    name = f"{path.parent.name}/{path.name}"
    stats["last_capture"] = {"hash": digest, "at": time.time(), "file": name, "path": str(path)}
    line = _said(name)
    return line, {"decision": "captured", "file": name, "subject": named, "chars": len(line)}


def _said(name: str) -> str:
    return (
        f"canon: the user's note above was journaled verbatim as {name}; it is recorded, "
        "do not record it again."
    )
