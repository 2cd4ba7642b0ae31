"""SPEC §10 code actions and §12: titles, edits computed at apply time, undoable WorkspaceEdits."""

from __future__ import annotations

import ast
import gc
import random

from lsp_harness import TODAY, Session, article, write
from lsprotocol import types

WIDGET = ".canon/articles/lib/widget.md"
CONFIG = ".canon/articles/src/core/config.md"


async def actions(s: Session, rel: str, line: int = 0) -> list[types.CodeAction]:
    result = await s.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=s.uri(rel)),
            range=types.Range(
                start=types.Position(line=line, character=0),
                end=types.Position(line=line, character=0),
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return [_as_action(a) for a in result or []]


def _as_action(item: types.Command | types.CodeAction) -> types.CodeAction:
    """lsprotocol's client-side hook decodes any code action carrying a `command` as a
    Command (its `command` then holds the repr of the nested object); undo that here."""
    if isinstance(item, types.CodeAction):
        return item
    gc.disable()  # CPython < 3.11.8: a finalizer mid-parse can fail ast (see test_layering)
    try:
        nested = ast.literal_eval(item.command)
    finally:
        gc.enable()
    return types.CodeAction(title=item.title, command=types.Command(**nested))


async def edit_of(s: Session, action: types.CodeAction) -> types.WorkspaceEdit:
    """The edit as the client would get it: resolved lazily, or applied by the command."""
    if action.command is not None and action.command.command == "canon.applyAction":
        before = len(s.client.applied_edits)  # type: ignore[attr-defined]
        assert await s.command("canon.applyAction", *(action.command.arguments or []))
        return s.client.applied_edits[before]  # type: ignore[attr-defined]
    resolved = await s.client.code_action_resolve_async(action)
    assert resolved.edit is not None, resolved.disabled
    return resolved.edit


def apply(s: Session, edit: types.WorkspaceEdit) -> None:
    """A minimal client: apply text edits to files on disk (enough for these tests)."""
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            path = s.root / change.text_document.uri[len(s.root.as_uri()) + 1 :]
            text = path.read_text(encoding="utf-8") if path.exists() else ""
            lines = text.splitlines(keepends=True) or [""]
            for e in sorted(
                change.edits,
                key=lambda e: (e.range.start.line, e.range.start.character),
                reverse=True,
            ):
                start = sum(len(x) for x in lines[: e.range.start.line]) + e.range.start.character
                end = sum(len(x) for x in lines[: e.range.end.line]) + e.range.end.character
                text = text[:start] + e.new_text + text[end:]
                lines = text.splitlines(keepends=True) or [""]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")


async def test_titles_on_a_governed_stale_file(s: Session):
    """SPEC §10: create (no exact article), update governing, journal, mark reviewed (stale);
    SPEC §9.2: show the changes since the article was updated (stale)."""
    await s.checked()
    s.open("src/core/util.py")
    titles = [a.title for a in await actions(s, "src/core/util.py")]
    assert titles == [
        "Create article for src/core/util",
        "Update governing article src",
        "Journal an entry about src",
    ]
    s.open("src/core/config.ts")
    titles = [a.title for a in await actions(s, "src/core/config.ts")]
    assert titles == [
        "Update governing article src/core/config",
        "Journal an entry about src/core/config",
        "Mark src/core/config reviewed",
        "Show changes since src/core/config was updated",
    ]


async def test_create_article_is_a_create_file_edit(s: Session):
    """SPEC §10: "Create article for <address>" is CreateFile + TextEdit, never an overwrite."""
    s.open("src/core/util.py")
    action = (await actions(s, "src/core/util.py"))[0]
    edit = await edit_of(s, action)
    changes = edit.document_changes or []
    create = changes[0]
    assert isinstance(create, types.CreateFile)
    assert create.uri == s.uri(".canon/articles/src/core/util.md")
    assert create.options is not None and create.options.overwrite is False
    text_edit = changes[1]
    assert isinstance(text_edit, types.TextDocumentEdit)
    assert "# src/core/util" in text_edit.edits[0].new_text
    assert f"updated: {TODAY}" in text_edit.edits[0].new_text


async def test_mark_reviewed_is_computed_from_disk_at_apply_time(s: Session):
    """SPEC §10 + §12: "Mark reviewed" reads the article when applied, so an agent's newer
    write (made after the menu was shown) is kept and only `reviewed:` is added."""
    await s.checked()
    s.open("src/core/config.ts")
    action = next(a for a in await actions(s, "src/core/config.ts") if a.title.startswith("Mark"))
    path = s.root / CONFIG
    path.write_text(path.read_text().replace("then env.", "then env. Agent note."))
    edit = await edit_of(s, action)
    apply(s, edit)
    text = path.read_text()
    assert "Agent note." in text
    assert f"reviewed: {TODAY}" in text
    assert "updated: 2026-01-01" in text  # reviewed never changes updated (SPEC §9)


async def test_orphan_actions_and_broken_link_create(s: Session):
    """SPEC §10: orphan -> move (likely renamed asset), merge into parent, declare scope: rule;
    a broken [[link]] -> "Create article <target>"."""
    await s.checked()
    s.open(WIDGET, "markdown")
    line = next(
        i for i, t in enumerate((s.root / WIDGET).read_text().split("\n")) if "[[missing" in t
    )
    titles = [a.title for a in await actions(s, WIDGET, line)]
    assert "Move article to lib/widgets/widget" in titles
    assert "Declare scope: rule" in titles
    assert "Create article missing/thing" in titles
    move = next(a for a in await actions(s, WIDGET, line) if a.title.startswith("Move article"))
    edit = await edit_of(s, move)
    renames = [c for c in edit.document_changes or [] if isinstance(c, types.RenameFile)]
    assert [(r.old_uri, r.new_uri) for r in renames] == [
        (s.uri(WIDGET), s.uri(".canon/articles/lib/widgets/widget.md"))
    ]
    # Declaring the rule last: once it is on disk the article is no orphan any more (§6.1
    # item 5), so the orphan actions may go as soon as the server sees the write.
    rule = next(a for a in await actions(s, WIDGET, line) if a.title == "Declare scope: rule")
    apply(s, await edit_of(s, rule))
    assert "scope: rule" in (s.root / WIDGET).read_text()


async def test_journal_with_body_writes_through_core(s: Session):
    """SPEC §10 journal action: the body is the command argument (source lsp); no default body."""
    text = await s.command(
        "canon.journalAbout", {"address": "src/core/config", "body": "Checked it."}
    )
    assert "journal" in text.lower() or "2026-11-29" in text
    entries = sorted((s.root / ".canon/journal").glob(f"{TODAY}-*.md"))
    assert len(entries) == 1
    content = entries[0].read_text()
    assert "harness: lsp" in content and "Checked it." in content and "src/core/config" in content


async def test_journal_without_body_opens_a_new_entry_file(s: Session):
    """SPEC §10 journal action without a body: a new entry file via WorkspaceEdit, then shown."""
    uri = await s.command("canon.journalAbout", {"address": "src/core/config"})
    edit = s.client.applied_edits[-1]  # type: ignore[attr-defined]
    create = (edit.document_changes or [])[0]
    assert isinstance(create, types.CreateFile) and create.uri == uri
    assert uri.startswith(s.uri(f".canon/journal/{TODAY}-src-core-config"))
    assert s.client.shown_documents[-1].uri == uri


async def test_merge_into_parent_points_links_at_the_new_section(s: Session):
    """SPEC §10 "Merge into parent" on an orphan: its text becomes a section of the parent and
    every `[[orphan]]` (in the parent too) now names that section; no broken link is left."""
    await s.checked()
    orphan_rel = ".canon/articles/src/old_thing.md"
    write(s.root, orphan_rel, article("Gone but remembered.", "2026-01-01", "# old\n\nNotes.\n"))
    src = s.root / ".canon/articles/src.md"
    src.write_text(src.read_text() + "Also [[src/old_thing]].\n")
    config = s.root / CONFIG
    config.write_text(config.read_text() + "See [[ src/old_thing | the old thing ]].\n")
    events = [(orphan_rel, types.FileChangeType.Created)] + [
        (rel, types.FileChangeType.Changed) for rel in (".canon/articles/src.md", CONFIG)
    ]
    s.client.workspace_did_change_watched_files(  # as an editor's watcher reports them
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=s.uri(rel), type=kind) for rel, kind in events]
        )
    )
    s.open(orphan_rel, "markdown")

    async def merge() -> types.CodeAction | None:
        found = [a for a in await actions(s, orphan_rel) if a.title == "Merge into parent"]
        return found[0] if found else None

    edit = await edit_of(s, await s.until(merge, what="the merge action on the new orphan"))
    apply(s, edit)
    deleted = [c.uri for c in edit.document_changes or [] if isinstance(c, types.DeleteFile)]
    assert deleted == [s.uri(orphan_rel)]
    merged = src.read_text()
    assert "## old_thing\n\nGone but remembered.\n\nNotes." in merged
    assert "Also [[src#old_thing]]." in merged and "[[src/old_thing" not in merged
    assert "See [[ src#old_thing | the old thing ]]." in config.read_text()


ORPHAN = ".canon/articles/src/old_thing.md"


async def new_orphan(s: Session, text: str) -> types.CodeAction:
    """An orphan article the server has seen, open in the editor; its merge action."""
    await s.checked()
    write(s.root, ORPHAN, text)
    s.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=s.uri(ORPHAN), type=types.FileChangeType.Created)]
        )
    )
    s.open(ORPHAN, "markdown")

    async def merge() -> types.CodeAction | None:
        found = [a for a in await actions(s, ORPHAN) if a.title == "Merge into parent"]
        return found[0] if found else None

    return await s.until(merge, what="the merge action on the new orphan")


async def merge_now(s: Session) -> types.WorkspaceEdit | str:
    """Resolve "Merge into parent" as a client does when the person picks it: the edit, or
    the reason it is disabled."""
    data = {"op": "merge", "folder": s.root.as_uri(), "address": "src/old_thing", "into": "src"}
    resolved = await s.client.code_action_resolve_async(
        types.CodeAction(title="Merge into parent", data=data)
    )
    if resolved.edit is None:
        assert resolved.disabled is not None
        return resolved.disabled.reason
    return resolved.edit


def merged_parent(s: Session, edit: types.WorkspaceEdit) -> str:
    """The parent's text once the edit is applied (in memory: the files stay as they are)."""
    parent = s.uri(".canon/articles/src.md")
    text = (s.root / ".canon/articles/src.md").read_text(encoding="utf-8")
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit) and change.text_document.uri == parent:
            for e in sorted(change.edits, key=lambda e: e.range.start.line, reverse=True):
                lines = text.splitlines(keepends=True)
                start = sum(len(x) for x in lines[: e.range.start.line]) + e.range.start.character
                end = sum(len(x) for x in lines[: e.range.end.line]) + e.range.end.character
                text = text[:start] + e.new_text + text[end:]
    return text


def deletes(edit: types.WorkspaceEdit) -> list[str]:
    return [c.uri for c in edit.document_changes or [] if isinstance(c, types.DeleteFile)]


async def test_merge_starts_from_the_unsaved_text(s: Session):
    """SPEC §12: "Merge into parent" carries the open orphan's unsaved text, not the file's."""
    disk = article("Gone but remembered.", "2026-01-01", "# old\n\nNotes.\n")
    await new_orphan(s, disk)
    s.change(ORPHAN, disk + "\nUnsaved decision: keep env first.\n")
    edit = await merge_now(s)
    assert isinstance(edit, types.WorkspaceEdit), edit
    merged = merged_parent(s, edit)
    assert "Notes.\n\nUnsaved decision: keep env first.\n" in merged
    assert deletes(edit) == [s.uri(ORPHAN)]


async def test_merge_never_deletes_text_it_did_not_carry(s: Session):
    """SPEC §12: an agent wrote to the orphan after it was opened (the editor does not show
    it): merging the editor's text would delete the agent's, so the merge is refused."""
    disk = article("Gone but remembered.", "2026-01-01", "# old\n\nNotes.\n")
    await new_orphan(s, disk)
    (s.root / ORPHAN).write_text(disk + "Agent: the cache moved to src/cache.\n", "utf-8")
    reason = await merge_now(s)
    assert isinstance(reason, str) and "src/old_thing" in reason, reason
    assert "Agent: the cache moved" in (s.root / ORPHAN).read_text("utf-8")


async def test_merge_refuses_what_a_section_cannot_hold(s: Session):
    """SPEC §12: front matter a section cannot hold (a foreign key, a malformed block) is
    content too: no merge, so no delete."""
    await new_orphan(s, article("Gone.", "2026-01-01", "# old\n\nNotes.\n", "owner: alice\n"))
    reason = await merge_now(s)
    assert isinstance(reason, str) and "owner" in reason, reason
    s.change(ORPHAN, "---\ncapsule: [unclosed\n---\n# old\n\nNotes.\n")
    assert isinstance(await merge_now(s), str)


def _body_lines(text: str) -> list[str]:
    """The lines a merge must carry: the capsule and the body without its `# title`."""
    from canon_ls.core.storage.article import parse

    parsed = parse(text, "src/old_thing")
    body = parsed.body.splitlines()
    if body and body[0].startswith("# "):
        body = body[1:]
    return [line.strip() for line in [parsed.capsule, *body] if line.strip()]


async def test_merge_carries_or_keeps_every_line_generated(s: Session):
    """SPEC §12, generated: the file on disk and the editor's unsaved text drift apart by
    random line edits (an agent writes one, the person types in the other). Whatever the
    pair, the merge carries every line of the editor's text, and it deletes the file only
    when every line on disk is in the merged parent too."""
    rng = random.Random(912)
    base = ["Notes.", "Env beats file.", "Secrets never land here.", "See [[src/core/config]]."]
    await new_orphan(s, article("Gone but remembered.", "2026-01-01", "# old\n\n" + _lines(base)))
    outcomes = set()
    for _ in range(40):
        on_disk, in_editor = _drift(rng, base), _drift(rng, base)
        disk_text = article("Gone but remembered.", "2026-01-01", "# old\n\n" + _lines(on_disk))
        (s.root / ORPHAN).write_text(disk_text, "utf-8")
        editor_text = article("Gone but remembered.", "2026-01-01", "# old\n\n" + _lines(in_editor))
        s.change(ORPHAN, editor_text)
        edit = await merge_now(s)
        if isinstance(edit, str):
            outcomes.add("refused")
            continue
        merged = [line.strip() for line in merged_parent(s, edit).splitlines()]
        assert _subsequence(_body_lines(editor_text), merged)
        if deletes(edit):
            outcomes.add("merged")
            assert _subsequence(_body_lines(disk_text), merged), (on_disk, in_editor)
    assert outcomes == {"merged", "refused"}  # the generator reached both sides


def _drift(rng: random.Random, base: list[str]) -> list[str]:
    lines = list(base)
    for _ in range(rng.randrange(3)):
        roll = rng.random()
        if roll < 0.4:
            lines.insert(rng.randrange(len(lines) + 1), f"Line {rng.randrange(10**6)}.")
        elif roll < 0.7 and lines:
            lines.pop(rng.randrange(len(lines)))
        elif lines:
            lines[rng.randrange(len(lines))] += " (edited)"
    return lines


def _lines(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def _subsequence(needles: list[str], hay: list[str]) -> bool:
    it = iter(hay)
    return all(any(line == h for h in it) for line in needles)
