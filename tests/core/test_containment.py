"""SPEC §12: no address, link, symlink or argument reads or writes outside the store."""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
from pathlib import Path

import pytest

from canon_ls.core import tool
from canon_ls.core.storage.store import Store


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
        "src/../../../../outside/y.ts",
        "..\\..\\outside\\z.ts",
    ],
)
def test_spec_12_dotdot_and_absolute_stay_inside(
    store: Store, project: Path, outside: Path, path: str
) -> None:
    """SPEC §3/§12: '..' is clamped; writes land inside the store."""
    before = tree(outside)
    r = run(store, action="write", path=path, capsule="Inside.")
    assert r.code == 0, r.text
    assert tree(outside) == before
    written = [p for p in (project / ".canon/articles").rglob("*.md")]
    assert len(written) == 1
    assert (project / ".canon/articles") in written[0].parents


@pytest.mark.parametrize(
    "path", ["/etc/passwd", "%s/%%2e%%2e/%%2E%%2e/outside/secret.md", ".git/config", "src/.git/x"]
)
def test_spec_12_absolute_outside_and_git_are_refused(
    store: Store, project: Path, outside: Path, path: str
) -> None:
    """Issue 24 item 4: an absolute path (or file:// URI, %2e%2e decoded) outside the project
    and its mounts, or an address inside a .git directory, is refused with one sentence by
    every action; nothing is written anywhere."""
    path = path % project.as_uri() if "%s" in path else path
    before = tree(outside)
    for action in ({"capsule": "Inside."} | {"action": "write"}, {"action": "read"}):
        r = run(store, path=path, **action)
        assert r.code == 2 and r.text.startswith("Refused: ") and "\n" not in r.text, r.text
    r = run(store, action="journal", body="x", subject=[path])
    assert r.code == 2, r.text
    assert tree(outside) == before and not (project / ".canon/articles").exists()


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


def _swap_forever(articles: str, outside: str, stop, restore: bool) -> None:  # type: ignore[no-untyped-def]
    """Flip articles/sub between a real directory and a symlink leading outside. `restore`:
    the same real directory comes back each time; else a fresh one does (a real `sub` that
    writes filled meanwhile is moved aside, inside the store, so the flipping never stalls)."""
    sub = os.path.join(articles, "sub")
    aside = os.path.join(articles, "sub.real")
    n = 0
    while not stop.is_set():
        n += 1
        if restore:
            steps = [
                lambda: os.rename(sub, aside),
                lambda: os.symlink(outside, sub),
                lambda: os.unlink(sub),
                lambda: os.rename(aside, sub),
            ]
        else:
            steps = [
                lambda: os.rmdir(sub),
                lambda n=n: os.rename(sub, os.path.join(articles, f"kept{n}")),
                lambda: os.symlink(outside, sub),
                lambda: os.unlink(sub),
                lambda: os.mkdir(sub),
            ]
        for step in steps:
            with contextlib.suppress(OSError):
                step()


def test_spec_12_symlink_swapped_between_check_and_use(project: Path, outside: Path) -> None:
    """SPEC §12: containment is checked on what was opened. Another process flips a store
    directory between a real directory and a symlink leading outside while 3,000 writes go
    through it: each write lands inside or is refused; none lands outside."""
    store = Store(project)
    store.write("sub/first.ts", capsule="First.")
    before = tree(outside)
    ctx = mp.get_context("fork")
    stop = ctx.Event()
    swapper = ctx.Process(
        target=_swap_forever,
        args=(str(project / ".canon/articles"), str(outside), stop, False),
    )
    swapper.start()
    landed = refused = 0
    try:
        for i in range(3000):
            r = run(store, action="write", path=f"sub/x{i}.ts", capsule=f"Write {i}.")
            if r.code == 0:
                landed += 1
            else:
                refused += 1
                assert "\n" not in r.text, r.text
    finally:
        stop.set()
        swapper.join(10)
    print(f"3000 writes while swapping: {landed} landed inside, {refused} refused")
    assert tree(outside) == before
    assert landed > 0


def test_spec_12_symlink_swapped_during_reads(project: Path, outside: Path) -> None:
    """SPEC §12 on the read side: while another process flips a store directory between a
    real directory and a symlink leading outside, 3,000 reads, maps and searches never show
    the outside file's content."""
    store = Store(project)
    store.write("sub/secret.ts", capsule="Inside capsule.", body="Inside body.")
    ctx = mp.get_context("fork")
    stop = ctx.Event()
    swapper = ctx.Process(
        target=_swap_forever,
        args=(str(project / ".canon/articles"), str(outside), stop, True),
    )
    swapper.start()
    inside = 0  # reads that found the store's own article: the test must see some
    try:
        for i in range(1000):
            for action in (
                {"action": "read", "path": "sub/secret"},
                {"action": "map"},
                {"action": "search", "query": "secret"},
            ):
                r = tool.run(Store(project) if i % 2 else store, action)
                assert "SECRET" not in r.text, (i, action, r.text)
                inside += "Inside capsule." in r.text
    finally:
        stop.set()
        swapper.join(10)
    assert inside > 0, "no read saw the store's own article: the swap hid everything"


@pytest.fixture
def outside_store(outside: Path) -> Path:
    """A complete store outside the project: articles, journal, schema."""
    store = outside / "store"
    (store / "articles/src").mkdir(parents=True)
    (store / "articles/src/app.md").write_text("---\ncapsule: SECRET app\n---\nSECRET body\n")
    (store / "journal").mkdir()
    (store / "journal/2026-01-01-secret.md").write_text(
        "---\ndate: 2026-01-01\nsubject:\n  - src/app\n---\nSECRET entry\n"
    )
    (store / "schema.json").write_text('{"schema_version": 1}\n')
    return store


LAYOUT_LINKS = {
    ".canon": "",
    ".canon/articles": "articles",
    ".canon/journal": "journal",
}
ACTIONS = [
    {"action": "read", "path": "src/app.ts"},
    {"action": "search", "query": "secret"},
    {"action": "search", "query": "secret", "journal": True},
    {"action": "map"},
    {"action": "write", "path": "src/app.ts", "capsule": "Overwritten."},
    {"action": "write", "path": "src/new.ts", "capsule": "New.", "body": "New body."},
    {"action": "journal", "body": "Landed outside?", "subject": ["src/app"]},
]


@pytest.mark.parametrize("link", list(LAYOUT_LINKS))
@pytest.mark.parametrize("action", ACTIONS, ids=lambda a: "-".join(map(str, a.values()))[:30])
def test_spec_12_store_directory_symlinked_outside_is_refused(
    project: Path, outside_store: Path, link: str, action: dict[str, object]
) -> None:
    """SPEC §12: a store whose .canon, articles/ or journal/ is a symlink leading outside the
    project is refused with one sentence, for reads and writes alike; nothing outside is read
    or written."""
    target = outside_store / LAYOUT_LINKS[link] if LAYOUT_LINKS[link] else outside_store
    if link != ".canon":
        (project / ".canon").mkdir()
        for name in ("articles", "journal"):
            if f".canon/{name}" != link:
                (project / ".canon" / name).mkdir()
    (project / link).symlink_to(target, target_is_directory=True)
    before = tree(outside_store.parent)
    r = tool.run(Store(project), action)
    assert r.code == 2, r.text
    assert "SECRET" not in r.text
    assert "\n" not in r.text.strip(), r.text
    assert "symbolic link" in r.text and "outside the project" in r.text, r.text
    assert tree(outside_store.parent) == before


def test_spec_12_store_symlinked_inside_the_project_is_served(project: Path) -> None:
    """SPEC §12 refuses links leading *outside*; a store kept elsewhere in the project and
    linked as .canon is an ordinary store."""
    (project / "docs/canon").mkdir(parents=True)
    (project / ".canon").symlink_to(project / "docs/canon", target_is_directory=True)
    store = Store(project)
    assert tool.run(store, {"action": "write", "path": "src/a.ts", "capsule": "A."}).code == 0
    assert (project / "docs/canon/articles/src/a.md").is_file()
    assert "capsule: A." in tool.run(Store(project), {"action": "read", "path": "src/a.ts"}).text


def test_spec_12_store_path_of_refuses_symlinked_store(project: Path, outside_store: Path) -> None:
    """SPEC §12: the path an editor would create an article at (LSP "Create article") comes
    from the same check: a symlinked articles/ leading outside yields no path."""
    from canon_ls.core.storage.address import OutsideStore

    (project / ".canon").mkdir()
    (project / ".canon/articles").symlink_to(outside_store / "articles")
    with pytest.raises(OutsideStore, match="symbolic link"):
        Store(project).path_of("src/new")
