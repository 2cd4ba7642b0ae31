"""How a tool result names the next step: in the JSON tool's words or the CLI's (SPEC §6, §11.1)."""

from __future__ import annotations

import json
import shlex

_EXAMPLES = {
    "read": '{"action": "read", "path": "src/app.ts"}',
    "write": '{"action": "write", "path": "src/app.ts", "capsule": "…", "body": "…"}',
    "journal": '{"action": "journal", "body": "What happened", "subject": ["src/app.ts"]}',
    "map": '{"action": "map", "path": "src"}',
    "search": '{"action": "search", "query": "config loading"}',
}


class Dialect:
    """The JSON tool's words (MCP, `canon tool`, the language server's commands)."""

    name = "json"
    first_article = "the write action"  # how to add a first article to an empty store
    with_journal = 'add "journal": true'  # how to include the journal in a search
    creates_store = "the first write or journal entry creates it"  # what creates a missing store

    def example(self, action: str) -> str:
        """One complete call of `action`."""
        return _EXAMPLES[action]

    def needs(self, action: str, key: str) -> str:
        """The sentence for a call missing a required argument."""
        return f'The {action} action needs "{key}", e.g. {self.example(action)}.'

    def write_one(self, address: str) -> str:
        """How to write the article for `address` (ends a sentence; no full stop)."""
        path = json.dumps(address, ensure_ascii=False)[1:-1]  # the inside of a JSON string
        return f'{{"action": "write", "path": "{path}", "capsule": "…", "body": "…"}}'

    def declare_rule(self, address: str) -> str:
        """How the orphan question names declaring `address` a rule (after "declare")."""
        return "it a rule (scope rule)"

    def move_article(self, address: str) -> str:
        """How the orphan question names moving `address` (after "the asset's new address")."""
        return ""


class CliDialect(Dialect):
    """The `canon` command line's words."""

    name = "cli"
    first_article = "`canon write PATH --capsule …`"
    with_journal = "add --journal"
    creates_store = "`canon init` creates it (so does the first `canon write` or `canon journal`)"

    _EXAMPLES = {
        "read": "canon read src/app.py",
        "write": 'canon write src/app.py --capsule "…" --body "…"',
        "journal": 'canon journal "What happened" --subject src/app.py',
        "map": "canon map src",
        "search": "canon search config loading",
    }
    _ARGUMENTS = {"path": "a PATH", "query": "a QUERY", "body": "the entry's text"}

    def example(self, action: str) -> str:
        return f"`{self._EXAMPLES[action]}`"

    def needs(self, action: str, key: str) -> str:
        what = self._ARGUMENTS.get(key, key)
        return f"canon {action} needs {what}, e.g. {self.example(action)}."

    def write_one(self, address: str) -> str:
        return f"`canon write {shlex.quote(address)} --capsule …`"

    def move_article(self, address: str) -> str:
        return f" (`canon mv {shlex.quote(address)} NEW_PATH`)"

    def declare_rule(self, address: str) -> str:
        return f"it a rule with `canon write {shlex.quote(address)} --scope rule`"


JSON = Dialect()
CLI = CliDialect()
