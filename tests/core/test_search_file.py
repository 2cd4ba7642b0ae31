"""The index as a file read through mmap (issue 15): it answers exactly as the in-memory
`SearchIndex` over the same documents (SPEC §6 search), before and after it is written,
while documents change on top of it, and after it is reopened."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from canon_ls.core.retrieval.search import SearchIndex, boosted, tokenize
from canon_ls.core.retrieval.search_file import FileIndex, IndexFile, cached_index, write

_word = st.sampled_from(["alpha", "beta", "gamma", "delta", "缓存", "失效", "数据库", "x", "é"])
_text = st.lists(_word, max_size=12).map(" ".join)
_ops = st.lists(
    st.tuples(st.sampled_from(["add", "remove", "write"]), st.sampled_from("abcdefg"), _text),
    max_size=40,
)
QUERIES = ["alpha", "beta gamma", "缓存失效", "数据库 x", "é delta alpha", "nothing"]


def _reference(docs: dict[str, str]) -> SearchIndex:
    idx = SearchIndex()
    for key, text in docs.items():
        idx.add(key, text)
    return idx


def _same(got: FileIndex, docs: dict[str, str]) -> None:
    want = _reference(docs)
    for q in QUERIES:
        tokens = boosted(tokenize(q))
        assert got.query_tokens(tokens, 20) == want.query_tokens(tokens, 20), q  # exact scores
    assert sorted(got.keys()) == sorted(docs)
    assert len(got) == len(docs)


@settings(max_examples=150, deadline=None)
@given(_ops)
def test_a_file_index_answers_as_the_memory_index_through_changes_and_rewrites(ops):
    """Adds and removes on top of a file, rewrites of it (holes included), and the result
    reopened from disk: every step ranks as a fresh in-memory build, score for score."""
    index = FileIndex(None)
    final: dict[str, str] = {}
    for op, key, text in ops:
        if op == "add":
            index.add(key, text)
            final[key] = text
        elif op == "remove":
            index.remove(key)
            final.pop(key, None)
        else:
            written = write(None, index)
            assert written is not None
            index = FileIndex(written)
        _same(index, final)


def test_the_file_is_reopened_and_rebuilt_only_for_what_changed(tmp_path: Path):
    cache = tmp_path / "cache" / "search.idx"
    texts = {f"k{i}": f"word{i % 7} common text {i}" for i in range(200)}
    read: list[str] = []

    def docs(stamps: dict[str, int]):
        return {k: (stamps.get(k, 0), lambda k=k: read.append(k) or texts[k]) for k in texts}

    cached_index(cache, docs({}))
    assert len(read) == 200 and cache.exists()
    read.clear()
    again = cached_index(cache, docs({}))
    assert read == [] and again.base is not None and not again._ids  # straight from the file
    texts["k3"] = "quokka"
    del texts["k4"]
    third = cached_index(cache, docs({"k3": 1}))
    assert read == ["k3"]
    _same(third, texts)
    reopened = IndexFile.open(cache)
    assert reopened is not None and reopened.n_live == 199


def test_a_damaged_or_foreign_file_is_rebuilt(tmp_path: Path):
    cache = tmp_path / "search.idx"
    docs = {"a": (0, lambda: "alpha")}
    cached_index(cache, docs)
    data = cache.read_bytes()
    lengths_flipped = (
        b"\xff\xff\xff\x7f" + data[4:]
    )  # a document length off: the sum is not the total
    for bad in (b"", b"x" * 200, data[:-1], data[: len(data) // 2], data + b"x", lengths_flipped):
        cache.write_bytes(bad)
        assert IndexFile.open(cache) is None
        assert cached_index(cache, docs).query("alpha")[1] == 1
    assert IndexFile.open(cache) is not None  # rewritten whole


def test_a_flipped_byte_anywhere_is_a_rebuild_never_a_wrong_or_failed_answer(tmp_path: Path):
    """Every byte of the file flipped in turn (postings, offsets, keys, the trailer): the file
    is refused and rebuilt, and the answers stay those of the sound index (a flipped doc id
    in the postings once failed every later search with IndexError)."""
    cache = tmp_path / "search.idx"
    texts = {k: f"alpha {k} beta {k * 3}" for k in "abcdef"}
    docs = {k: (1, lambda t=t: t) for k, t in texts.items()}
    cached_index(cache, docs)
    sound = cache.read_bytes()
    for at in range(len(sound)):
        flipped = bytearray(sound)
        flipped[at] ^= 0x5A
        cache.write_bytes(bytes(flipped))
        assert IndexFile.open(cache) is None, at
        _same(cached_index(cache, docs), texts)
        assert cache.read_bytes() == sound, at


def test_many_holes_start_a_fresh_file(tmp_path: Path):
    cache = tmp_path / "search.idx"
    texts = {f"k{i}": f"w{i}" for i in range(300)}
    cached_index(cache, {k: (0, lambda k=k: texts[k]) for k in texts})
    keep = {k: v for k, v in texts.items() if int(k[1:]) % 2}
    idx = cached_index(cache, {k: (0, lambda k=k: keep[k]) for k in keep})
    assert idx.base is not None and idx.base.n_docs == len(keep)  # no holes left
    _same(idx, keep)


def test_a_build_in_chunks_answers_as_one_in_memory(tmp_path: Path, monkeypatch):
    """Every CHUNK documents the build writes what it added out to a file and goes on from
    it (a build never holds more than a chunk's postings); the result is the same."""
    import canon_ls.core.retrieval.search_file as search_file

    monkeypatch.setattr(search_file, "CHUNK", 3)
    words = ["alpha", "beta", "gamma", "delta", "缓存", "失效", "数据库", "x", "é"]
    texts = {f"k{i:02}": " ".join(words[j % 9] for j in range(i, i + i % 5 + 1)) for i in range(20)}
    cache = tmp_path / "cache" / "search.idx"
    for path in (cache, None):
        _same(cached_index(path, {k: (0, lambda k=k: texts[k]) for k in texts}), texts)
    texts.update({"k03": "alpha alpha quokka", "new": "beta 数据库"})
    del texts["k07"]
    stamps = {"k03": 1}
    _same(cached_index(cache, {k: (stamps.get(k, 0), lambda k=k: texts[k]) for k in texts}), texts)
    assert [p.name for p in cache.parent.iterdir()] == ["search.idx"]  # no chunk left behind
