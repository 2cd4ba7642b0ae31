"""SPEC §12: no address, link, symlink or argument reads or writes outside the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from canon_ls.core import tool
from canon_ls.core.store import Store


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else b"<dir>")
        for p in sorted(root.rglob("*"))
        if not p.is_symlink()
    }


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret.md").write_text("---\ncapsule: SECRET capsule\n---\nSECRET body\n")
    return d


def run(store: Store, **kw: object) -> tool.ToolResult:
    return tool.run(store, kw)


@pytest.mark.parametrize(
    "path",
    [
        "../../outside/x.ts",
        "../outside/secret.md",
        "/etc/passwd",
        "src/../../../../outside/y.ts",
        "..\\..\\outside\\z.ts",
    ],
)
def test_spec_12_dotdot_and_absolute_stay_inside(
    store: Store, project: Path, outside: Path, path: str
) -> None:
    """SPEC §3/§12: '..' and absolute paths are clamped; writes land inside the store."""
    before = tree(outside)
    r = run(store, action="write", path=path, capsule="Inside.")
    assert r.code == 0, r.text
    assert tree(outside) == before
    written = [p for p in (project / ".canon/articles").rglob("*.md")]
    assert len(written) == 1
    assert (project / ".canon/articles") in written[0].parents


def test_spec_12_file_uri_dotdot(store: Store, project: Path, outside: Path) -> None:
    """SPEC §3: file:// URIs with %2e%2e are decoded, then clamped."""
    before = tree(outside)
    uri = project.as_uri() + "/%2e%2e/%2E%2e/outside/secret.md"
    r = run(store, action="write", path=uri, capsule="Inside.")
    assert r.code == 0
    assert tree(outside) == before
    assert "SECRET" not in run(store, action="read", path=uri).text


def test_spec_12_nul_bytes(store: Store, project: Path) -> None:
    for action in (
        {"action": "write", "path": "a\x00b", "capsule": "x"},
        {"action": "read", "path": "a\x00"},
        {"action": "write", "path": "file:///x%00y", "capsule": "x"},
    ):
        r = tool.run(store, action)
        assert r.code == 2 and "NUL" in r.text
    assert not (project / ".canon").exists()


def test_spec_12_symlinked_dir_under_articles(store: Store, project: Path, outside: Path) -> None:
    """SPEC §12: a symlinked directory under articles/ pointing outside is neither read nor
    written through."""
    articles = project / ".canon/articles"
    articles.mkdir(parents=True)
    (articles / "evil").symlink_to(outside, target_is_directory=True)
    (articles / "link.md").symlink_to(outside / "secret.md")
    before = tree(outside)
    assert "SECRET" not in run(store, action="read", path="evil/secret").text
    assert "SECRET" not in run(store, action="read", path="link").text
    assert "SECRET" not in run(store, action="map").text
    assert "SECRET" not in run(store, action="search", query="secret").text
    assert store.addresses() == []
    for path in ("evil/new.ts", "evil/secret", "link", "evil/deep/er/x.ts"):
        r = run(store, action="write", path=path, capsule="Through the link.", body="x")
        assert r.code == 2 and "outside" in r.text, (path, r.text)
    assert tree(outside) == before
    assert not (outside / "deep").exists()


def test_spec_12_symlink_inside_store_is_followed(store: Store, project: Path) -> None:
    articles = project / ".canon/articles"
    (articles / "real").mkdir(parents=True)
    (articles / "real/a.md").write_text("---\ncapsule: Real A.\n---\n")
    (articles / "alias").symlink_to(articles / "real", target_is_directory=True)
    assert set(store.addresses()) == {"real/a", "alias/a"}


def test_spec_12_journal_dir_symlink_outside(store: Store, project: Path, outside: Path) -> None:
    (project / ".canon").mkdir()
    (project / ".canon/journal").symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    r = run(store, action="journal", body="Should not land outside.")
    assert r.code == 2
    assert tree(outside) == before


def test_spec_12_wikilink_targets_clamped(store: Store, project: Path, outside: Path) -> None:
    r = run(store, action="write", path="a.ts", capsule="A.", body="[[../../outside/secret]]")
    assert "Broken wikilink [[../../outside/secret]]: no article outside/secret" in r.text
