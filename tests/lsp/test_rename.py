"""SPEC §10 file operations: workspace/willRenameFiles moves articles and rewrites links."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lsp_harness import Session, apply_edit, article, snapshot, write
from lsprotocol import types


async def will_rename(s: Session, old: str, new: str) -> types.WorkspaceEdit | None:
    return await s.client.workspace_will_rename_files_async(
        types.RenameFilesParams(files=[types.FileRename(old_uri=s.uri(old), new_uri=s.uri(new))])
    )


def expect_only(
    before: dict[str, bytes],
    after: dict[str, bytes],
    moved: dict[str, str],
    relinked: dict[str, tuple[str, str]],
) -> None:
    """Everything but the moved files and the rewritten links is byte-for-byte unchanged."""
    expected = dict(before)
    for old, new in moved.items():
        expected[new] = expected.pop(old)
    for rel, (a, b) in relinked.items():
        expected[rel] = expected[rel].replace(a.encode(), b.encode())
    assert after == expected


async def test_rename_asset_file_moves_article_and_rewrites_links(s: Session):
    """SPEC §10: renaming an asset moves its article; inbound [[links]] follow; nothing else."""
    edit = await will_rename(s, "src/core/config.ts", "src/core/settings.ts")
    assert edit is not None
    before = snapshot(s.root)
    apply_edit(s.root, edit)
    (s.root / "src/core/config.ts").rename(s.root / "src/core/settings.ts")  # the editor's part
    after = snapshot(s.root)
    before["src/core/settings.ts"] = before.pop("src/core/config.ts")
    expect_only(
        before,
        after,
        {".canon/articles/src/core/config.md": ".canon/articles/src/core/settings.md"},
        {
            ".canon/articles/src.md": ("[[src/core/config]]", "[[src/core/settings]]"),
            ".canon/articles/lib/widget.md": ("[[src/core/config]]", "[[src/core/settings]]"),
        },
    )


async def test_rename_folder_moves_every_article_beneath(s: Session):
    """SPEC §10: renaming a folder moves the articles under its address."""
    edit = await will_rename(s, "src/core", "src/engine")
    assert edit is not None
    before = snapshot(s.root)
    apply_edit(s.root, edit)
    after = snapshot(s.root)
    expect_only(
        before,
        after,
        {".canon/articles/src/core/config.md": ".canon/articles/src/engine/config.md"},
        {
            ".canon/articles/src.md": ("[[src/core/config]]", "[[src/engine/config]]"),
            ".canon/articles/lib/widget.md": ("[[src/core/config]]", "[[src/engine/config]]"),
        },
    )


async def test_rename_article_file_rewrites_inbound_links_only(s: Session):
    """SPEC §10: renaming an article file rewrites inbound wikilinks (the editor moves it)."""
    edit = await will_rename(
        s, ".canon/articles/src/core/config.md", ".canon/articles/src/core/conf.md"
    )
    assert edit is not None
    assert not any(isinstance(c, types.RenameFile) for c in edit.document_changes or [])
    before = snapshot(s.root)
    apply_edit(s.root, edit)
    expect_only(
        before,
        snapshot(s.root),
        {},
        {
            ".canon/articles/src.md": ("[[src/core/config]]", "[[src/core/conf]]"),
            ".canon/articles/lib/widget.md": ("[[src/core/config]]", "[[src/core/conf]]"),
        },
    )


async def test_rename_of_ungoverned_file_changes_nothing(s: Session):
    """SPEC §10: a file without its own article moves nothing."""
    assert await will_rename(s, "src/app.ts", "src/main.ts") is None


async def test_rename_rewrites_a_link_typed_but_not_saved(s: Session):
    """SPEC §10 file operations: a wikilink in an open article's unsaved text follows the
    rename too (an edit against that document's version), not only links on disk."""
    await s.checked()
    rel = ".canon/articles/src.md"
    uri = s.open(rel, "markdown")
    disk = (s.root / rel).read_text(encoding="utf-8")
    assert "[[lib/widget]]" not in disk
    s.versions[uri] += 1
    s.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=s.versions[uri]),
            content_changes=[
                types.TextDocumentContentChangeWholeDocument(text=disk + "And [[lib/widget]].\n")
            ],
        )
    )
    edit = await will_rename(s, ".canon/articles/lib/widget.md", ".canon/articles/lib/gadget.md")
    assert edit is not None
    mine = [
        c
        for c in edit.document_changes or []
        if isinstance(c, types.TextDocumentEdit) and c.text_document.uri == uri
    ]
    assert len(mine) == 1 and mine[0].text_document.version == s.versions[uri]
    assert [e.new_text for e in mine[0].edits] == ["lib/gadget"]


async def will_rename_uris(s: Session, old: str, new: str) -> types.WorkspaceEdit | None:
    return await s.client.workspace_will_rename_files_async(
        types.RenameFilesParams(files=[types.FileRename(old_uri=old, new_uri=new)])
    )


def out_of_project_destinations(root: Path) -> Iterator[tuple[str, str]]:
    """Where a governed file or folder may be dragged that is not an asset of this project:
    another directory (next to it, above it, spelled with `..` or `%2e%2e`), `.git/`, the
    store and its parts. Yields (old relative path, new URI)."""
    outside = root.parent / "elsewhere"
    for name in ("src/core/config.ts", "src/core"):
        leaf = Path(name).name
        yield name, (outside / leaf).as_uri()
        yield name, (root.parent / leaf).as_uri()
        yield name, (outside / "src/core" / leaf).as_uri()
        yield name, f"{root.as_uri()}/src/../../elsewhere/{leaf}"
        yield name, f"{root.as_uri()}/%2e%2e/elsewhere/{leaf}"
        for inside in (".git", ".git/objects", ".canon", ".canon/articles", ".canon/journal"):
            yield name, (root / inside / leaf).as_uri()
        yield name, (root / ".canon/articles/src" / leaf).as_uri()


async def test_rename_out_of_the_project_moves_nothing(s: Session):
    """SPEC §12: moving an asset (file or folder) outside the workspace folder, into `.git/`
    or into the store moves no article and rewrites no link."""
    await s.checked()
    moved = []
    for old, new in out_of_project_destinations(s.root):
        edit = await will_rename_uris(s, s.uri(old), new)
        if edit is not None:
            moved.append((old, new, edit))
    assert moved == []


def add_folder(s: Session, root: Path, name: str) -> None:
    s.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=root.as_uri(), name=name)], removed=[]
            )
        )
    )


async def test_rename_between_roots_moves_into_a_root_with_a_store(s: Session, tmp_path: Path):
    """SPEC §12 + §10: a move into another root of the workspace moves the article into that
    root's store when it has one (and rewrites no link of this store: none can point there);
    into a root without a store, nothing moves."""
    other, bare = tmp_path / "other", tmp_path / "bare"
    write(other, "lib/tool.py", "# tool\n")
    write(other, ".canon/articles/lib.md", article("Other lib.", "2026-12-01", "# lib\n"))
    write(bare, "lib/tool.py", "# tool\n")
    add_folder(s, other, "other")
    add_folder(s, bare, "bare")
    old = s.uri("src/core/config.ts")
    assert await will_rename_uris(s, old, (bare / "lib/config.ts").as_uri()) is None
    edit = await will_rename_uris(s, old, (other / "lib/config.ts").as_uri())
    assert edit is not None
    changes = edit.document_changes or []
    assert [(c.old_uri, c.new_uri) for c in changes if isinstance(c, types.RenameFile)] == [
        (
            s.uri(".canon/articles/src/core/config.md"),
            (other / ".canon/articles/lib/config.md").as_uri(),
        )
    ]
    assert [c for c in changes if not isinstance(c, types.RenameFile)] == []
    folder_edit = await will_rename_uris(s, s.uri("src/core"), (other / "lib/engine").as_uri())
    assert folder_edit is not None
    assert [
        (c.old_uri, c.new_uri)
        for c in folder_edit.document_changes or []
        if isinstance(c, types.RenameFile)
    ] == [
        (
            s.uri(".canon/articles/src/core/config.md"),
            (other / ".canon/articles/lib/engine/config.md").as_uri(),
        )
    ]


ARTICLE_FOLDER_MOVES = [
    ("src/core", "src/engine"),  # the case: a sibling name
    ("src/core", "core"),  # up one level
    ("src/core", "lib/src/core"),  # down two, under another article's folder
    ("src", "source"),  # the folder beside an article of the same name (src.md stays)
]


@pytest.mark.parametrize(("old", "new"), ARTICLE_FOLDER_MOVES, ids=lambda v: v)
async def test_rename_article_folder_rewrites_links_beneath(s: Session, old: str, new: str):
    """SPEC §10 file operations: renaming a folder of articles inside the store rewrites every
    inbound link to an article beneath it (the editor moves the folder); nothing else changes.
    Run in all three client profiles."""
    await s.checked()
    base = ".canon/articles/"
    edit = await will_rename(s, base + old, base + new)
    assert edit is not None
    assert not any(isinstance(c, types.RenameFile) for c in edit.document_changes or [])
    before = snapshot(s.root)
    apply_edit(s.root, edit)
    (s.root / base / new).parent.mkdir(parents=True, exist_ok=True)
    (s.root / base / old).rename(s.root / base / new)  # the editor's part
    moved = {
        rel: base + new + rel[len(base + old) :]
        for rel in before
        if rel.startswith(base + old + "/")
    }
    linked = {a[len(base) : -3]: b[len(base) : -3] for a, b in moved.items()}
    relinked = {
        rel: (f"[[{a}]]", f"[[{b}]]")
        for rel, data in before.items()
        for a, b in linked.items()
        if rel.startswith(base) and f"[[{a}]]".encode() in data  # articles link; docs do not
    }
    assert relinked  # the store links into every moved folder
    expect_only(before, snapshot(s.root), moved, relinked)
