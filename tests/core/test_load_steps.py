"""Issue 15 (SPEC §4: resolution from an in-memory index): the store's first load in steps,
which the language server runs between requests. Stepped, abandoned half-way or finished by
another use, the store ends as a load in one go leaves it; from the parse cache too."""

from __future__ import annotations

from pathlib import Path

import pytest

from canon_ls.core.storage import cache
from canon_ls.core.storage.store import Store

N = 60


def _load(file, root, racy_ns):  # the snapshot's usable entries, all records
    return {k: v for part in cache.records(file, root, racy_ns) for k, v in part.items()}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv("CANON_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "MIN_PARSED", 1)
    monkeypatch.setattr(cache, "CHUNK", 7)  # several records, so the cache loads in steps
    monkeypatch.setattr("canon_ls.core.storage.freshness.RACY_NS", 0)  # every file settled
    root = tmp_path / "proj"
    for i in range(N):
        path = root / ".canon/articles" / f"d{i % 5}/a{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ncapsule: Article {i}.\nupdated: 2026-01-01\n---\n# A{i}\n")
    return root


def test_a_stepped_load_is_a_load(project: Path):
    whole = Store(project).articles()
    stepped = Store(project)
    steps = list(stepped.load_steps(step=4, save=False))
    assert len(steps) >= N // 4  # the parse alone takes that many steps
    assert stepped.loaded
    assert stepped.articles() == whole


def test_the_cache_loads_in_steps_and_is_written_only_when_asked(project: Path):
    first = Store(project)
    for _ in first.load_steps(step=4, save=False):
        pass
    file = cache.cache_file(first.root, first.project)
    assert _load(file, first.root, 0) == {}  # not written
    second = Store(project)
    for _ in second.load_steps(step=4):
        pass
    file = cache.cache_file(second.root, second.project)
    assert len(_load(file, second.root, 0)) == N
    assert len(list(cache.records(file, second.root, 0))) == -(-N // 7)
    third = Store(project)
    assert len(list(third.load_steps(step=4))) >= N // 4
    assert third.articles() == first.articles()


def test_an_abandoned_load_is_finished_by_the_next_use(project: Path):
    whole = Store(project).articles()
    half = Store(project)
    steps = half.load_steps(step=4)
    for _ in range(8):
        next(steps)
    assert not half.loaded
    (project / ".canon/articles/d0/a0.md").unlink()  # changed meanwhile
    steps.close()
    assert half.articles() == [a for a in whole if a.address != "d0/a0"]
    assert list(half.load_steps()) == []  # loaded: nothing left to do


def journal(project: Path, n: int) -> None:
    for i in range(n):
        path = project / ".canon/journal" / f"2026-01-{1 + i % 28:02}-e{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        subject = f"d{i % 3}/a{i}"
        path.write_text(f"---\ndate: 2026-01-01\nsubject:\n  - {subject}\nsource: cli\n---\nx\n")


def test_the_journal_reads_in_steps_and_an_abandoned_read_is_finished(project: Path):
    journal(project, 30)
    whole = Store(project)
    expected = [whole.journal_names(f"d{i % 3}/a{i}") for i in range(30)]
    stepped = Store(project)
    assert len(list(stepped.journal_steps(step=4))) >= 30 // 4
    assert [stepped.journal_names(f"d{i % 3}/a{i}") for i in range(30)] == expected
    half = Store(project)
    steps = half.journal_steps(step=4)
    next(steps)
    next(steps)
    steps.close()  # abandoned: the next look-up reads what is left
    assert [half.journal_names(f"d{i % 3}/a{i}") for i in range(30)] == expected


def test_the_journal_count_follows_new_and_removed_entries(project: Path):
    journal(project, 5)
    store = Store(project)
    assert store.journal_count() == 5
    journal(project, 7)
    assert store.journal_count() == 7
    (project / ".canon/journal/2026-01-01-e0.md").unlink()
    assert store.journal_count() == 6


def test_the_names_only_listing_finds_what_the_scan_finds(tmp_path):
    """`freshness.addresses` (the first workspace symbols' listing, no stat per file) follows
    the scan's rules: regular .md files, links followed only inside the store, each real
    directory once; a FIFO, a link out and a non-.md file are no article."""
    import os

    from canon_ls.core.storage import freshness

    articles = tmp_path / "store" / "articles"
    (articles / "src" / "core").mkdir(parents=True)
    (articles / "src" / "core" / "config.md").write_text("x")
    (articles / "src.md").write_text("x")
    (articles / "notes.txt").write_text("x")
    (articles / ".md").write_text("x")
    os.mkfifo(articles / "pipe.md")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("x")
    (articles / "out").symlink_to(outside)
    (articles / "alias").symlink_to(articles / "src")
    (articles / "again.md").symlink_to(articles / "src.md")
    real = os.path.realpath(articles)
    listed = freshness.addresses(articles, real)
    assert sorted(listed) == sorted(freshness.scan(articles, real))
    assert {"again", "src", "src/core/config"} <= set(listed)
    assert not {"pipe", "out/secret", "notes", ""} & set(listed)


def test_the_scan_keeps_a_stat_key_per_article_and_no_path(tmp_path: Path) -> None:
    """Issue 40 item 3 (memory at 50k articles): the scan every load starts with (the server's,
    the check child's, the search worker's) keeps address -> stat key; each file is
    articles/<address>.md, so a path string per article (7 MB at 50k, alive until the load
    ends, its high-water kept by the process) is not held. 400 files: 428 bytes a file with
    the paths, 277 without."""
    import os
    import tracemalloc

    from canon_ls.core.storage import freshness, fsio  # noqa: F401 (imported before the measure)

    articles = tmp_path / "proj" / ".canon" / "articles"
    for i in range(400):
        path = articles / f"area{i % 7}" / f"topic{i % 13}" / f"note-{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("---\ncapsule: A note.\n---\nx\n")
    real = os.path.realpath(articles)
    tracemalloc.start()
    try:
        found = freshness.scan(articles, real)
        per_file = tracemalloc.get_traced_memory()[0] / len(found)
    finally:
        tracemalloc.stop()
    assert len(found) == 400 and per_file < 350, f"{per_file:.0f} bytes a file"
    store = Store(tmp_path / "proj")
    store.refresh()  # each file read from articles/<address>.md
    assert store.article("area3/topic10/note-010") is None
    assert store.article("area3/topic10/note-10") is not None
    assert len(store.addresses()) == 400
