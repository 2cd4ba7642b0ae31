"""SPEC §6 search: tokenisation (CJK bigrams) and the incremental BM25 index."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from canon_ls.core.retrieval.search import SearchIndex, lane_stems, lane_tokens, stem, tokenize
from canon_ls.core.retrieval.search_file import cached_index


def test_spec_6_search_words_are_lower_cased():
    """SPEC §6 search: other text as lower-cased words (English words as their stems)."""
    assert tokenize("Loads Layered CONFIG; env beats file.") == [
        "load",
        "layer",
        "config",
        "env",
        "beat",
        "fil",
    ]


def test_english_words_are_stemmed_cjk_and_codes_are_not():
    """Issue 41 item 5: `rounding` finds `rounded`; CJK, words with digits and short words
    stay as written; the lane keeps its words as written (four characters or more) and
    their stems as a field of their own."""
    same = ["rounding", "rounded", "rounds", "round"]
    assert {stem(w) for w in same} == {"round"}
    assert stem("retries") == stem("retry") == stem("retrying") == stem("retried")
    assert stem("caching") == stem("cached") == stem("cache") == stem("caches")
    assert stem("running") == stem("runs") == "run" and stem("status") == "status"
    assert [stem(w) for w in ("utf8", "tax", "缓存", "été")] == ["utf8", "tax", "缓存", "été"]
    assert lane_tokens("runs ran rounding 缓存") == ["runs", "rounding", "缓存"]
    assert lane_stems(["runs", "rounding", "缓存"]) == ["~run", "~round"]
    index = SearchIndex()
    index.add("a", "Totals are rounded half up.")
    index.add("b", "Totals are truncated.")
    assert [key for key, _ in index.query("rounding", 10)[0]] == ["a"]


def test_spec_6_search_snake_and_camel_case_split():
    assert tokenize("load_config") == ["load", "config"]
    assert sorted(tokenize("loadConfig")) == ["config", "load", "loadconfig"]
    assert sorted(tokenize("HTTPServer")) == ["http", "httpserver", "server"]
    assert sorted(tokenize("The loadConfig, loadConfig")) == sorted(
        ["the", "loadconfig", "loadconfig", "load", "load", "config", "config"]
    )


def test_spec_6_search_cjk_runs_are_bigrams():
    """SPEC §6 search: runs of CJK characters are indexed as character bigrams."""
    assert tokenize("数据库迁移") == ["数据", "据库", "库迁", "迁移"]


def test_spec_6_search_one_character_cjk_run_is_kept():
    """SPEC §6 search: single characters for one-character runs."""
    assert sorted(tokenize("表 a 表格")) == sorted(["表", "a", "表格"])


def test_spec_6_search_mixed_text():
    """Tokens are a bag of words (order carries no meaning), so compare sorted."""
    assert sorted(tokenize("缓存cache失效 TTL")) == sorted(["缓存", "cach", "失效", "ttl"])
    assert tokenize("ユーザー認証 한국어") == [
        "ユー",
        "ーザ",
        "ザー",
        "ー認",
        "認証",
        "한국",
        "국어",
    ]


def test_tokenize_handles_empty_and_odd_input():
    assert tokenize("") == []
    assert tokenize("--- ** [[ ]] ___") == []
    assert tokenize("\x00\ud800 abc") == ["abc"]
    assert tokenize("HTTP OK 2024 v1") == ["http", "ok", "2024", "v1"]


def _index(docs: dict[str, str]) -> SearchIndex:
    idx = SearchIndex()
    for key, text in docs.items():
        idx.add(key, text)
    return idx


DOCS = {
    "src/auth/session": "Session tokens refresh every hour. The session cache evicts stale tokens.",
    "src/core/config": "Loads layered config; env beats file; secrets never land here.",
    "src/billing/invoice": "Invoices are immutable once issued; corrections are credit notes.",
    "docs/zh/cache": "缓存失效策略采用写入后过期，避免读取到陈旧数据。",
    "docs/zh/db": "数据库迁移脚本必须是幂等的，可以重复执行。",
    "src/search/rank": "BM25 ranking over articles; 数据库 results sorted by score.",
}


def test_spec_6_search_ranking_sanity():
    """SPEC §6 search: BM25 puts the document that is about the query first."""
    idx = _index(DOCS)
    hits, total = idx.query("session tokens")
    assert hits[0][0] == "src/auth/session"
    assert total == 1
    hits, total = idx.query("数据库迁移")
    # the cache doc shares only the bigram 数据 with the query
    assert [k for k, _ in hits] == ["docs/zh/db", "src/search/rank", "docs/zh/cache"]
    assert total == 3
    hits, _ = idx.query("config secrets")
    assert hits[0][0] == "src/core/config"


def test_spec_6_search_scores_descend_and_limit_counts_all_matches():
    """SPEC §6 search: ten results, and the result can say how many the cap dropped."""
    idx = SearchIndex()
    for i in range(25):
        idx.add(f"a/{i:02d}", "alpha " * (i % 5 + 1) + "filler words here " * i)
    hits, total = idx.query("alpha", limit=10)
    assert total == 25
    assert len(hits) == 10
    assert all(hits[i][1] >= hits[i + 1][1] for i in range(9))


def test_query_with_no_match_or_empty_query():
    idx = _index(DOCS)
    assert idx.query("zzzz") == ([], 0)
    assert idx.query("") == ([], 0)
    assert SearchIndex().query("anything") == ([], 0)
    assert idx.query("session", limit=0) == ([], 1)


def test_ties_are_broken_by_key():
    idx = SearchIndex()
    for key in ("c", "a", "b"):
        idx.add(key, "same text")
    assert [k for k, _ in idx.query("same")[0]] == ["a", "b", "c"]


def test_scores_match_bm25_formula():
    """Lucene BM25: idf = ln(1 + (N - df + .5) / (df + .5)), k1 = 1.2, b = 0.75."""
    idx = _index({"x": "apple apple pear", "y": "pear", "z": "plum plum plum plum"})
    hits = dict(idx.query("apple")[0])
    n, df, avg = 3, 1, (3 + 1 + 4) / 3
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    tf, dl = 2, 3
    want = idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avg))
    assert math.isclose(hits["x"], want)


def test_add_replaces_and_remove_forgets():
    idx = _index(DOCS)
    idx.add("src/core/config", "now about kafka consumers")
    assert idx.query("secrets") == ([], 0)
    assert idx.query("kafka")[0][0][0] == "src/core/config"
    idx.remove("src/core/config")
    idx.remove("never/there")
    assert idx.query("kafka") == ([], 0)
    assert "src/core/config" not in idx
    assert len(idx) == len(DOCS) - 1


_word = st.sampled_from(["alpha", "beta", "gamma", "delta", "缓存", "失效", "数据库", "x"])
_text = st.lists(_word, max_size=12).map(" ".join)
_ops = st.lists(
    st.tuples(st.sampled_from(["add", "remove"]), st.sampled_from("abcdefg"), _text),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(_ops, st.lists(_word, min_size=1, max_size=3).map(" ".join))
def test_spec_6_search_incremental_update_equals_rebuild(ops, query):
    """SPEC §6 search / §10 external changes: an index updated one document at a time answers
    exactly like one built from scratch over the final documents."""
    live = SearchIndex()
    final: dict[str, str] = {}
    for op, key, text in ops:
        if op == "add":
            live.add(key, text)
            final[key] = text
        else:
            live.remove(key)
            final.pop(key, None)
    rebuilt = _index(final)
    got, got_total = live.query(query, limit=20)
    want, want_total = rebuilt.query(query, limit=20)
    assert got_total == want_total
    assert [k for k, _ in got] == [k for k, _ in want]
    assert all(math.isclose(a, b) for (_, a), (_, b) in zip(got, want, strict=True))
    assert sorted(live.keys()) == sorted(final)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("aBcD_1 .表格数据ü\u0130"), max_size=30))
def test_tokenize_keeps_every_lowered_word_and_cjk_bigram(text):
    """Whatever the camelCase handling adds, each lower-cased word of the text is a token."""
    import re
    from collections import Counter

    words = re.findall(r"[^\W_表格数据]+", text)
    want = Counter(w.lower() for w in words)
    for run in re.findall(r"[表格数据]+", text):
        want.update([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
    got = Counter(tokenize(text))
    assert got & want == want


# -- persisted index ------------------------------------------------------------------------


def test_snapshot_round_trip_answers_the_same():
    idx = _index(DOCS)
    idx.remove("src/billing/invoice")
    restored, stamps = SearchIndex.from_snapshot(idx.snapshot({"a": (1, 2)}))
    assert stamps == {"a": (1, 2)}
    for q in ("session tokens", "数据库迁移", "config", "invoice"):
        assert restored.query(q) == idx.query(q)
    restored.add("src/billing/invoice", DOCS["src/billing/invoice"])
    assert restored.query("immutable")[1] == 1


def test_damaged_snapshot_is_refused():
    assert SearchIndex.from_snapshot(b"") is None
    assert SearchIndex.from_snapshot(b"\x00garbage") is None
    assert SearchIndex.from_snapshot(__import__("marshal").dumps((99, 1.2))) is None


def test_cached_index_reuses_unchanged_documents(tmp_path):
    """The persisted index re-reads only documents whose stamp changed; the result answers
    like a fresh build."""
    cache = tmp_path / "cache" / "search.bin"
    read: list[str] = []

    def docs(changes: dict[str, str], stamp_of: dict[str, int]):
        texts = {**DOCS, **changes}
        return {
            k: (stamp_of.get(k, 0), lambda k=k: read.append(k) or texts[k])
            for k in texts
            if texts[k] is not None
        }

    first = cached_index(cache, docs({}, {}))
    assert sorted(read) == sorted(DOCS) and cache.exists()
    read.clear()
    again = cached_index(cache, docs({}, {}))
    assert read == []
    assert again.query("session") == first.query("session")
    changed = docs({"src/core/config": "kafka consumers", "src/auth/session": None}, {})
    changed["src/core/config"] = (1, changed["src/core/config"][1])
    third = cached_index(cache, changed)
    assert read == ["src/core/config"]
    fresh = _index(
        {
            **{k: v for k, v in DOCS.items() if k != "src/auth/session"},
            "src/core/config": "kafka consumers",
        }
    )
    for q in ("kafka", "session", "数据库"):
        assert third.query(q) == fresh.query(q)


def test_cached_index_survives_a_corrupt_or_unwritable_cache(tmp_path):
    cache = tmp_path / "search.bin"
    cache.write_bytes(b"not marshal")
    idx = cached_index(cache, {"a": (0, lambda: "alpha")})
    assert idx.query("alpha")[1] == 1
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x")
    idx = cached_index(blocked / "search.bin", {"a": (0, lambda: "alpha")})
    assert idx.query("alpha")[1] == 1
    assert cached_index(None, {"a": (0, lambda: "alpha")}).query("alpha")[1] == 1


def test_huge_term_frequency_is_capped_not_an_error():
    idx = SearchIndex()
    idx.add("big", "x " * 70_000)
    idx.add("small", "x y")
    hits, total = idx.query("x")
    assert total == 2 and {k for k, _ in hits} == {"big", "small"}
    idx.remove("big")
    assert idx.query("x") == ([("small", idx.query("x")[0][0][1])], 1)


def test_default_cache_file_follows_the_cache_rules(tmp_path, monkeypatch):
    from canon_ls.core.retrieval.search import default_cache_file

    project = tmp_path / "proj"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CANON_NO_CACHE", raising=False)
    file = default_cache_file(project / ".canon", project)
    assert file is not None and file.parent == (tmp_path / "xdg" / "canon-ls").resolve()
    assert file.name.startswith("search-articles-")
    assert default_cache_file(project / ".canon", project, kind="journal") != file
    monkeypatch.setenv("XDG_CACHE_HOME", str(project / "cache"))
    assert default_cache_file(project / ".canon", project) is None
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("CANON_NO_CACHE", "1")
    assert default_cache_file(project / ".canon", project) is None


def test_cached_index_never_trusts_a_none_stamp(tmp_path):
    cache = tmp_path / "search.bin"
    read: list[str] = []
    docs = {"a": (None, lambda: read.append("a") or "alpha")}
    cached_index(cache, docs)
    cached_index(cache, docs)
    assert read == ["a", "a"]


def test_a_restored_index_updates_like_a_fresh_one():
    """Documents keep their terms as term ids (issue 15): after a snapshot round trip, removing
    and replacing documents leaves the index a fresh build of the same documents would be."""
    idx = _index(DOCS)
    restored, _ = SearchIndex.from_snapshot(idx.snapshot())
    keys = sorted(DOCS)
    restored.remove(keys[0])
    restored.add(keys[1], DOCS[keys[0]] + " quokka")
    docs = {k: v for k, v in DOCS.items() if k != keys[0]} | {keys[1]: DOCS[keys[0]] + " quokka"}
    fresh = _index(docs)
    for q in ("session tokens", "数据库迁移", "config", "invoice", "quokka", "immutable"):
        assert restored.query(q, 20) == fresh.query(q, 20)


def test_a_snapshot_naming_an_unknown_term_is_refused():
    import marshal

    state = list(marshal.loads(_index(DOCS).snapshot()))
    state[6] = state[6][:1]  # the vocabulary, cut short: the documents name missing terms
    assert SearchIndex.from_snapshot(marshal.dumps(tuple(state))) is None
