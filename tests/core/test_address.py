"""SPEC §3 addresses and §12 containment at the address level."""

from __future__ import annotations

from pathlib import Path

import pytest

from canon_ls.core.storage.address import (
    OutsideStore,
    StorePaths,
    ancestors,
    clean,
    contained,
    normalise,
    parent,
)

SPEC_3_TABLE = [
    ("src/core/config.ts", "src/core/config"),
    ("src/core/config.test.ts", "src/core/config.test"),
    ("docs/v1.2/notes.md", "docs/v1.2/notes"),
    (".env", ".env"),
    ("src/.eslintrc.json", "src/.eslintrc"),
    ("./src//core/./config.ts", "src/core/config"),
    ("../../etc/passwd", "etc/passwd"),
    ("src/core/", "src/core"),
    ("src\\core\\config.ts", "src/core/config"),
    ("Makefile", "Makefile"),
    ("archive.tar.gz", "archive.tar"),
]


@pytest.mark.parametrize(("raw", "expected"), SPEC_3_TABLE)
def test_spec_3_table_row(raw: str, expected: str) -> None:
    """SPEC §3: every row of the normalisation table."""
    assert normalise(raw) == expected


def test_spec_3_empty_and_root_name_no_article() -> None:
    """SPEC §3: the project root itself is the empty address."""
    assert normalise("") == ""
    assert normalise(".") == ""
    assert normalise("./") == ""
    assert normalise("/", Path("/")) == ""


def test_spec_3_leading_slash_relative_when_no_project() -> None:
    """SPEC §3 step 2: leading '/' goes when the path is not inside a known root."""
    assert normalise("/src/a.ts") == "src/a"


def test_spec_3_absolute_inside_project(tmp_path: Path) -> None:
    """SPEC §3 step 1: an absolute path inside the project becomes relative to it."""
    assert normalise(str(tmp_path / "src" / "a.ts"), tmp_path) == "src/a"
    assert normalise(str(tmp_path), tmp_path) == ""


def test_spec_3_absolute_outside_project_is_refused(tmp_path: Path) -> None:
    """Issue 24 item 4 (SPEC §12): an absolute path outside the project and its mounts names
    nothing canon may write (`canon write /etc/hosts` made articles/etc/hosts.md); without a
    project to compare with it is still clamped, never escaping."""
    project = tmp_path / "p"
    for outside in ("/etc/passwd", str(project) + "/../../etc/passwd", "file:///etc/hosts"):
        with pytest.raises(OutsideStore, match="outside the project"):
            normalise(outside, project)
    lake = tmp_path / "lake"
    assert normalise(str(lake / "prices.csv"), project, {"lake": lake}) == "lake:prices"
    assert normalise("/etc/passwd") == "etc/passwd"


@pytest.mark.parametrize("path", [".git/config", "src/.git/hooks/x", ".GIT/config", "lake:.git/x"])
def test_spec_3_a_git_directory_names_no_article(tmp_path: Path, path: str) -> None:
    """Issue 24 item 4: git never commits a path with a `.git` segment, so no article has one."""
    with pytest.raises(OutsideStore, match=".git directory"):
        normalise(path, tmp_path, {"lake": tmp_path / "lake"})
    assert normalise(".github/workflows/ci.yml", tmp_path) == ".github/workflows/ci"


def test_spec_3_file_uri_decoded_then_clamped(tmp_path: Path) -> None:
    """SPEC §3 step 1: file:// URIs are decoded first; %2e%2e cannot climb out."""
    uri = (tmp_path / "src" / "a b.ts").as_uri()
    assert normalise(uri, tmp_path) == "src/a b"
    evil = tmp_path.as_uri() + "/%2e%2e/%2E%2E/etc/passwd"
    with pytest.raises(OutsideStore):
        normalise(evil, tmp_path)
    assert normalise("file:///%2e%2e/%2e%2e/etc/shadow") == "etc/shadow"


def test_spec_3_nul_bytes_refused() -> None:
    """SPEC §12: NUL bytes never reach the file system."""
    with pytest.raises(OutsideStore):
        normalise("src/a\x00.ts")
    with pytest.raises(OutsideStore):
        normalise("file:///tmp/a%00b")


def test_spec_8_mount_paths(tmp_path: Path) -> None:
    """SPEC §8: a path inside a mount becomes 'name:addr'; the name form works too."""
    lake = tmp_path / "data" / "lake"
    mounts = {"lake": lake}
    assert normalise(str(lake / "prices.csv"), tmp_path / "proj", mounts) == "lake:prices"
    assert normalise("lake:prices.csv", tmp_path / "proj", mounts) == "lake:prices"
    assert normalise("lake:../../x/y.txt", tmp_path / "proj", mounts) == "lake:x/y"
    # without the mount the colon is just part of a name
    assert normalise("lake:prices.csv") == "lake:prices"


def test_spec_3_non_ascii_and_case_sensitive() -> None:
    """SPEC §3: non-ASCII names allowed; addresses are case-sensitive."""
    assert normalise("docs/配置/Ünï.md") == "docs/配置/Ünï"
    assert normalise("Src/A.ts") != normalise("src/a.ts")


def test_spec_4_ancestors_and_parent() -> None:
    """SPEC §4: the walk up one segment at a time."""
    assert list(ancestors("a/b/c")) == ["a/b/c", "a/b", "a"]
    assert list(ancestors("")) == []
    assert parent("a/b/c") == "a/b"
    assert parent("a") == ""


def test_clean_keeps_dots_for_addresses() -> None:
    """Wikilink targets are addresses: no extension stripping except a trailing .md."""
    assert clean("src/config.test") == "src/config.test"
    assert clean("./src/../docs/x.md") == "docs/x"
    assert clean("lake:prices") == "lake:prices"


def test_spec_12_article_file_contained(tmp_path: Path) -> None:
    """SPEC §3 step 2 / §12: article files always resolve under articles/."""
    articles = tmp_path / ".canon" / "articles"
    articles.mkdir(parents=True)
    assert StorePaths(articles).checked("src/a") == articles / "src" / "a.md"
    outside = tmp_path / "outside"
    outside.mkdir()
    (articles / "evil").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutsideStore):
        StorePaths(articles).checked("evil/x")
    with pytest.raises(OutsideStore):
        StorePaths(articles).checked("../x")
    with pytest.raises(OutsideStore):
        StorePaths(articles).checked("")
    with pytest.raises(OutsideStore):
        contained(tmp_path / "x", articles)


def test_address_of_file(tmp_path: Path) -> None:
    articles = tmp_path / "articles"
    assert StorePaths(articles).address(articles / "src" / "a.md") == "src/a"
    assert StorePaths(articles).address(articles / ".env.md") == ".env"
    assert StorePaths(articles).address(articles / "src" / "a.txt") is None
    assert StorePaths(articles).address(tmp_path / "x.md") is None


def test_spec_2_3_8_place_is_the_one_answer_for_a_file(tmp_path: Path) -> None:
    """address.place: what a file is to canon, with `root` moved and a mount (the language
    server's Folder.where, canon.resolve and the hooks' resolver all ask it)."""
    from canon_ls.core.storage.address import place

    project = tmp_path / "p"
    root = project / "docs/memory"
    lake = tmp_path / "lake"
    mounts = {"lake": lake}

    def where(path: Path) -> tuple[str, str]:
        return place(path, project, root, mounts)

    assert where(root / "articles/src/a.md") == ("article", "src/a")
    assert where(root / "articles/src/notes.txt") == ("store", "")
    assert where(root / "journal/2026-01-01-x.md") == ("journal", "")
    assert where(root / "schema.json") == ("store", "")
    assert where(project / ".canon/articles/x.md") == ("asset", ".canon/articles/x")  # moved
    assert where(project / "src/a.py") == ("asset", "src/a")
    assert where(project / ".git/HEAD") == ("", "")
    assert where(lake / ".canon/articles/prices.md") == ("article", "lake:prices")
    assert where(lake / ".canon/journal/e.md") == ("store", "")
    assert where(lake / "prices.csv") == ("asset", "lake:prices")
    assert where(lake / ".git/config") == ("", "")
    assert where(tmp_path / "elsewhere.py") == ("", "")


def test_spec_3_an_existing_article_wins_over_the_extension_rule() -> None:
    """SPEC §3: exactly an existing article's address names it; else the path rule."""
    from canon_ls.core.storage.address import argument, link_target

    articles = {"src/core/config", "src/core/config.test"}.__contains__
    assert argument("src/core/config.test", articles) == "src/core/config.test"
    assert argument("./src//core/config.test", articles) == "src/core/config.test"
    assert argument("src/core/config.test.ts", articles) == "src/core/config.test"
    assert argument("src/core/config.ts", articles) == "src/core/config"
    assert argument("src/core/config.test", set().__contains__) == "src/core/config"
    assert link_target("src/x.ts", set().__contains__) == "src/x"
    assert link_target("src/x.ts", {"src/x.ts"}.__contains__) == "src/x.ts"
    assert link_target(".env", set().__contains__) == ".env"
    assert link_target("docs/v1.2", set().__contains__) == "docs/v1"
