"""The search worker's index is built from the article files with no Store kept beside it
(issue 15): it must rank exactly as `Store.search_articles` does (SPEC §6 search), mounts
included, share its on-disk snapshot, and follow edits it is told about."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_harness import build_workspace

from canon_ls.core.retrieval.search_corpus import SearchCorpus
from canon_ls.core.storage.project import open_store

QUERIES = ["config", "widget loader", "the", "retry", "cache entry", "zanzibar", ""]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = build_workspace(tmp_path / "proj")
    lake = tmp_path / "lake"
    (lake / ".canon" / "articles" / "prices").mkdir(parents=True)
    (lake / ".canon" / "articles" / "prices" / "daily.md").write_text(
        "---\ncapsule: Daily config of the price lake.\nupdated: 2025-01-01\n"
        "tags: [retry]\n---\nRetry the cache entry loader.\n",
        encoding="utf-8",
    )
    return root


def options(tmp_path: Path) -> dict[str, object]:
    return {"mounts": [str(tmp_path / "lake")]}


def test_the_corpus_ranks_as_the_store_does(project: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    # files written a moment ago are "racy" (never stamped): trust them here, as after 3 s
    monkeypatch.setattr("canon_ls.core.storage.freshness.RACY_NS", 0)
    store = open_store(project, options(tmp_path))
    corpus = SearchCorpus(open_store(project, options(tmp_path)))
    corpus.build()
    assert "lake:prices/daily" in corpus.index
    assert sorted(corpus.index.keys()) == store.addresses()
    for query in QUERIES:
        assert corpus.query(query, 20) == store.search_articles(query, 20), query
    # the snapshot the corpus writes is the store's: a fresh store re-tokenizes nothing (the
    # store never trusts a mount article's stamp, so this part is about the project's own)
    SearchCorpus(open_store(project)).build()
    snapshots = list((tmp_path / "cache").rglob("search-articles-*.idx"))
    assert len(snapshots) == 1
    before = snapshots[0].stat().st_mtime_ns
    assert open_store(project).search_articles("config", 5)[0]
    assert snapshots[0].stat().st_mtime_ns == before


def test_the_corpus_follows_the_edits_it_is_told_about(project: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("CANON_NO_CACHE", "1")
    corpus = SearchCorpus(open_store(project, options(tmp_path)))
    corpus.build()
    articles = project / ".canon" / "articles"
    (articles / "quokka.md").write_text(
        "---\ncapsule: Zanzibar quokka notes.\n---\nbody\n", encoding="utf-8"
    )
    (tmp_path / "lake" / ".canon" / "articles" / "prices" / "daily.md").unlink()
    corpus.update(["quokka", "lake:prices/daily", "../escape", "nowhere:x/y"])
    assert [a for a, _ in corpus.query("zanzibar quokka", 5)[0]] == ["quokka"]
    assert "lake:prices/daily" not in corpus.index
    assert "../escape" not in corpus.index
    store = open_store(project, options(tmp_path))
    for query in QUERIES:
        assert corpus.query(query, 20) == store.search_articles(query, 20), query


def test_the_worker_answers_from_the_corpus(project: Path, tmp_path: Path):
    """The child itself, over its pipe: ready, then one JSON answer per question."""
    env = {"CANON_NO_CACHE": "1", "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "canon_ls.lsp.helpers.searcher_worker",
            str(project),
            json.dumps(options(tmp_path)),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        assert json.loads(proc.stdout.readline()) == {"ready": True}
        proc.stdin.write(json.dumps({"query": "price lake", "limit": 3, "changed": []}) + "\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["hits"][0] == "lake:prices/daily"
    finally:
        proc.kill()
        proc.wait()


def test_after_a_large_build_the_worker_starts_again_from_its_file(tmp_path: Path):
    """Issue 15: a build that read many articles leaves its memory with the process, so the
    worker starts itself again (same pid, same pipes) and maps the file it wrote; without a
    cache file there is nothing to map, and it does not. Both answer the question."""
    from canon_ls.lsp.helpers.searcher_worker import REEXEC, REEXEC_READS

    root = tmp_path / "big"
    articles = root / ".canon" / "articles" / "gen"
    articles.mkdir(parents=True)
    for i in range(REEXEC_READS):
        (articles / f"a{i:04}.md").write_text(
            f"---\ncapsule: Generated {i}.\n---\nword{i % 13} body {'quokka' if i == 7 else ''}\n",
            encoding="utf-8",
        )
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    for restarted, extra in ((True, {}), (False, {"CANON_NO_CACHE": "1"})):
        proc = subprocess.Popen(
            [sys.executable, "-m", "canon_ls.lsp.helpers.searcher_worker", str(root), "{}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**env, **extra},
        )
        try:
            assert proc.stdout is not None and proc.stdin is not None
            assert json.loads(proc.stdout.readline()) == {"ready": True}
            environ = Path(f"/proc/{proc.pid}/environ").read_bytes().split(b"\0")
            assert (f"{REEXEC}=1".encode() in environ) is restarted
            proc.stdin.write(json.dumps({"query": "quokka", "limit": 3, "changed": []}) + "\n")
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["hits"] == ["gen/a0007"]
        finally:
            proc.stdin.close()  # type: ignore[union-attr]
            proc.stdout.close()  # type: ignore[union-attr]
            proc.kill()
            proc.wait()


def test_the_worker_leaves_the_store_modules_unloaded():
    """Issue 15: the worker gets plain directories from the server (`spec_of`), so its
    process never loads the Store's modules (about 5 MB); its read limit is the Store's.
    Issue 40: nor asyncio (with ssl, ~8 MB) or git, the server side's (searcher.py)."""
    from canon_ls.core.retrieval import search_corpus
    from canon_ls.core.storage import index

    assert search_corpus.MAX_BYTES == index.MAX_BYTES
    code = (
        "import sys\n"
        "from canon_ls.lsp.helpers import searcher_worker\n"
        "from canon_ls.core.retrieval import search_corpus\n"
        "names = ('canon_ls.core.storage.store', 'canon_ls.core.storage.index', 'asyncio',"
        " 'ssl', 'canon_ls.core.git.gitrun')\n"
        "print(sorted(m for m in names if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr
