"""Tokenizer and incremental BM25 index for `search` (SPEC §6 search)."""

from __future__ import annotations

import functools
import heapq
import marshal
import math
import os
import re
import sys
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from canon_ls.core.storage.article import Article

# Han, kana, Hangul and the compatibility/extension blocks: scripts written without spaces.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f"
_HAS_CJK = re.compile(f"[{_CJK}]")
_CJK_RUN = re.compile(f"[{_CJK}]+")
# Words are runs of letters/digits; `_` separates (so snake_case splits); CJK runs stand apart.
_WORD = re.compile(rf"[^\W_{_CJK}]+")
# Parts of a camelCase / PascalCase / HTTPServer word.
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """An English word's stem (Porter-style, no dependency): `rounding`, `rounded`, `rounds`
    give `round`; words of 3 letters or fewer, with a digit or non-ASCII (CJK) stay."""
    if len(word) < 4 or not (word.isascii() and word.isalpha()):
        return word
    if word.endswith("sses") or word.endswith("ies"):
        word = word[:-2]
    elif word[-1] == "s" and word[-2] not in "isu":
        word = word[:-1]
    for suffix in ("ing", "ed"):
        base = word[: -len(suffix)]
        if word.endswith(suffix) and not word.endswith("eed") and _VOWEL.search(base):
            word = base[:-1] if len(base) > 2 and base[-1] == base[-2] not in "lsz" else base
            break
    if word[-1] == "y" and len(word) > 2 and word[-2] not in "aeiou":
        word = word[:-1] + "i"
    return word[:-1] if word[-1] == "e" and len(word) > 3 else word


_VOWEL = re.compile("[aeiouy].")


def tokenize(text: str) -> list[str]:
    """Lower-cased words stemmed, plus camelCase words' parts; CJK runs as character bigrams."""
    words = _WORD.findall(text)
    out: list[str] = []
    if words:
        lower: dict[str, str] = {}
        camel: list[str] = []
        for word in set(words):  # per distinct word: regex work stays off the hot path
            low = word.lower()
            lower[word] = stem(low)
            if low != word and word[1:] != low[1:] and not word.isupper():
                camel.append(word)
        out = [lower[w] for w in words]
        if camel:
            counts = Counter(words)
            for word in camel:
                parts = _CAMEL_PART.findall(word)
                if len(parts) > 1:
                    out.extend([stem(p.lower()) for p in parts] * counts[word])
    if _HAS_CJK.search(text) is not None:
        append = out.append
        for run in _CJK_RUN.findall(text):
            if len(run) == 1:
                append(run)
            else:
                out.extend(map(str.__add__, run[:-1], run[1:]))
    return out


# The retrieval lane's words (pi-canon's lexical facts): lower-cased ASCII runs of [a-z0-9_]
# (outer underscores trimmed) of at least four characters, outside this fixed list.
LANE_MIN = 4
LANE_STOPWORDS = frozenset({
    "about", "after", "again", "against", "because", "been", "before", "being", "between", "both",
    "cannot", "could", "does", "doing", "down", "during", "each", "from", "further", "have",
    "having", "here", "into", "itself", "just", "more", "most", "once", "only", "other", "over",
    "same", "should", "some", "such", "than", "that", "their", "them", "then", "there", "these",
    "they", "this", "those", "through", "under", "until", "very", "were", "what", "when", "where",
    "which", "while", "will", "with", "would", "your",
})  # fmt: skip
_LANE_WORD = re.compile(r"[a-z0-9_]+")


def lane_tokens(text: str) -> list[str]:
    """The lane's tokens: content words of four or more ASCII characters, and CJK bigrams
    (as `tokenize` makes them). Function words never make an article relevant."""
    out = [
        word
        for raw in _LANE_WORD.findall(text.lower())
        if len(word := raw.strip("_")) >= LANE_MIN and word not in LANE_STOPWORDS
    ]
    if _HAS_CJK.search(text) is not None:
        for run in _CJK_RUN.findall(text):
            out.extend([run] if len(run) == 1 else map(str.__add__, run[:-1], run[1:]))
    return out


def lane_stems(tokens: list[str]) -> list[str]:
    """The stems of the lane's ASCII tokens as a field of their own (lane._scores asks them
    only when no article holds a word as written: such a prompt ranks as before stems)."""
    return [STEM + stem(t) for t in tokens if t.isascii()]


STEM = "~"  # prefix of the lane's stem tokens (tokenize never yields it)
TAG = "#"  # prefix of tag tokens: tokenize never yields it, so tags are a field of their own


def tag_tokens(tags: Iterable[str]) -> list[str]:
    """The tokens of an article's `tags:` as tag-field tokens ('#retry')."""
    return [TAG + token for tag in tags for token in tokenize(tag)]


def article_text(article: Article) -> str:
    tags = " ".join(article.tags)
    return f"{article.address} {article.title} {article.capsule} {tags} {article.body}"


def article_tokens(article: Article) -> list[str]:
    """An article's search tokens: address, title, capsule, tags and body, plus its tags as a
    boosted field (`tag_tokens`)."""
    return tokenize(article_text(article)) + tag_tokens(article.tags)


def boosted(tokens: list[str]) -> list[str]:
    """A query's tokens plus their tag-field forms: an article tagged with a query word scores
    it twice (in its text and as a tag), above one whose body merely mentions it."""
    return tokens + [TAG + token for token in tokens]


_ID, _TF, _TERM = "I", "H", "I"  # doc ids, term frequencies (capped), term ids
TF_MAX = 65535  # term frequencies are capped here (a u16 in the index file)
_LAYOUT = (_ID, array(_ID).itemsize, _TF, array(_TF).itemsize, sys.byteorder, _TERM)
_NO_TERMS: array[int] = array(_TERM)  # a removed document's terms (shared, never changed)


class SearchIndex:
    """BM25 (Lucene idf, k1=1.2, b=0.75) over keyed documents, updated one document at a time."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._postings: dict[str, tuple[array[int], array[int]]] = {}
        self._ids: dict[str, int] = {}
        self._keys: list[str | None] = []
        self._vocab: list[str] = []  # term id -> term
        self._term_ids: dict[str, int] = {}
        self._terms: list[array[int]] = []  # distinct term ids of each doc, for removal
        self._lengths: list[int] = []
        self._free: list[int] = []
        self._total = 0
        self._norms: list[float] = []
        self._norms_valid = False

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, key: object) -> bool:
        return key in self._ids

    def keys(self) -> list[str]:
        return list(self._ids)

    def add(self, key: str, text: str) -> None:
        """Index `text` under `key`, replacing what `key` held before."""
        self.add_tokens(key, tokenize(text))

    def add_tokens(self, key: str, tokens: Iterable[str]) -> None:
        """Index already tokenized text (the tokens of `tokenize`) under `key`."""
        if key in self._ids:
            self.remove(key)
        counts = Counter(tokens)  # counted in C
        length = sum(counts.values())
        vocab, term_ids = self._vocab, self._term_ids
        terms = array(_TERM)
        for term in counts:
            tid = term_ids.get(term)
            if tid is None:
                tid = term_ids[term] = len(vocab)
                vocab.append(term)  # one string per term, shared by the postings' keys
            terms.append(tid)
        if self._free:
            doc = self._free.pop()
            self._keys[doc] = key
            self._terms[doc] = terms
            self._lengths[doc] = length
        else:
            doc = len(self._keys)
            self._keys.append(key)
            self._terms.append(terms)
            self._lengths.append(length)
        self._ids[key] = doc
        self._total += length
        postings = self._postings
        for tid, tf in zip(terms, counts.values(), strict=True):
            term = vocab[tid]
            plist = postings.get(term)
            if tf > TF_MAX:
                tf = TF_MAX  # BM25 saturates long before
            if plist is None:
                postings[term] = (array(_ID, (doc,)), array(_TF, (tf,)))
                continue
            ids, tfs = plist  # kept sorted by doc id, so removal can bisect
            if ids[-1] < doc:
                ids.append(doc)
                tfs.append(tf)
            else:
                i = bisect_left(ids, doc)
                ids.insert(i, doc)
                tfs.insert(i, tf)
        self._norms_valid = False

    def remove(self, key: str) -> None:
        """Forget `key`; unknown keys are ignored."""
        doc = self._ids.pop(key, None)
        if doc is None:
            return
        postings, vocab = self._postings, self._vocab
        for tid in self._terms[doc]:
            term = vocab[tid]
            plist = postings.get(term)
            if plist is None:
                continue
            ids, tfs = plist
            i = bisect_left(ids, doc)
            if i < len(ids) and ids[i] == doc:
                del ids[i]
                del tfs[i]
            if not ids:
                del postings[term]
        self._total -= self._lengths[doc]
        self._keys[doc] = None
        self._terms[doc] = _NO_TERMS
        self._lengths[doc] = 0
        self._free.append(doc)
        self._norms_valid = False

    def _refresh_norms(self) -> None:
        n = len(self._ids)
        avg = self._total / n if n else 1.0
        k1, b = self.k1, self.b
        base, slope = k1 * (1 - b), k1 * b / (avg or 1.0)
        self._norms = [base + slope * length for length in self._lengths]
        self._norms_valid = True

    def scores(self, tokens: Iterable[str]) -> dict[str, float]:
        """Every matching key with its BM25 score (for callers that filter before ranking)."""
        return {self._keys[d]: s for d, s in self._score(tokens).items()}  # type: ignore[misc]

    def _score(self, tokens: Iterable[str]) -> dict[int, float]:
        if not self._norms_valid:
            self._refresh_norms()
        n = len(self._ids)
        postings = self._postings
        plists = [p for p in (postings.get(t) for t in set(tokens)) if p]
        return bm25(plists, n, self.k1, self._norms)

    # -- persistence (marshal: plain data only, nothing executes on load) ------------------
    SNAPSHOT_VERSION = 5  # 5: stems (4: term ids per document); older ones rebuild

    def snapshot(self, stamps: Mapping[str, object] | None = None) -> bytes:
        """The index as bytes, with an optional stamp per key (e.g. (mtime_ns, size))."""
        state = (
            self.SNAPSHOT_VERSION,
            _LAYOUT,
            self.k1,
            self.b,
            # marshal writes a typed array as its bytes (what tobytes() gives): no copy of
            # every posting list is made first, which doubled the index's memory while saving
            self._postings,
            self._keys,
            self._vocab,
            self._terms,
            self._lengths,
            self._free,
            dict(stamps or {}),
        )
        return marshal.dumps(state)

    @classmethod
    def from_snapshot(cls, data: bytes) -> tuple[SearchIndex, dict[str, object]] | None:
        """(index, stamps) from `snapshot` bytes; None when they are damaged or outdated."""
        try:
            state = marshal.loads(data)
            version, layout, k1, b, raw, keys, vocab, raw_terms, lengths, free, stamps = state
            if version != cls.SNAPSHOT_VERSION or layout != _LAYOUT:
                return None
            postings: dict[str, tuple[array[int], array[int]]] = {}
            if not (isinstance(raw, dict) and isinstance(raw_terms, list)):
                return None
            if not _arrays_into(postings, raw):  # (the rest is checked as it is assembled)
                return None
            if not (
                isinstance(keys, list)
                and isinstance(vocab, list)
                and isinstance(lengths, list)
                and isinstance(free, list)
                and isinstance(stamps, dict)
                and len(keys) == len(raw_terms) == len(lengths)
            ):
                return None
            terms = []  # the documents' term ids, from their bytes
            for i, ids_bytes in enumerate(raw_terms):
                ids = array(_TERM)
                ids.frombytes(ids_bytes)
                if ids and max(ids) >= len(vocab):
                    return None
                terms.append(ids if ids else _NO_TERMS)
                raw_terms[i] = None  # each document's bytes go as its array comes
            index = cls(float(k1), float(b))
            index._postings, index._keys, index._terms = postings, keys, terms
            index._vocab, index._term_ids = vocab, {t: i for i, t in enumerate(vocab)}
            index._lengths, index._free = lengths, free
            index._ids = {k: i for i, k in enumerate(keys) if k is not None}
            index._total = sum(lengths)
            return index, stamps
        except (ValueError, EOFError, TypeError):
            return None

    def query(self, text: str, limit: int = 10) -> tuple[list[tuple[str, float]], int]:
        """The best `limit` (key, score) pairs, best first, and how many documents matched."""
        return self.query_tokens(tokenize(text), limit)

    def query_tokens(
        self, tokens: Iterable[str], limit: int = 10
    ) -> tuple[list[tuple[str, float]], int]:
        """`query` for already tokenized text."""
        keys = self._keys
        return best(self._score(tokens), limit, lambda d: keys[d] or "")


def _arrays_into(postings: dict[str, tuple[array[int], array[int]]], raw: Any) -> bool:
    """Posting lists from a snapshot's bytes into `postings`, each list's bytes let go as its
    arrays come (the index is never held twice); False when they do not fit together."""
    while raw:
        term, (id_bytes, tf_bytes) = raw.popitem()
        ids, tfs = array(_ID), array(_TF)
        ids.frombytes(id_bytes)
        tfs.frombytes(tf_bytes)
        if len(ids) != len(tfs):
            return False
        postings[term] = (ids, tfs)
    return True


def bm25(
    plists: list[tuple[array[int], array[int]]], n: int, k1: float, norms: Sequence[float]
) -> dict[int, float]:
    """BM25 over the query terms' posting lists (document ids, term frequencies) of a corpus of `n`
    documents; `norms[d]`: document d's length normalisation."""
    k1p = k1 + 1
    # the longest list seeds the dict at once
    plists = sorted(plists, key=lambda plist: len(plist[0]), reverse=True)
    scores: dict[int, float] = {}
    for i, (ids, tfs) in enumerate(plists):
        df = len(ids)
        w = math.log(1 + (n - df + 0.5) / (df + 0.5)) * k1p
        if i == 0:
            scores = {d: w * tf / (tf + norms[d]) for d, tf in zip(ids, tfs, strict=True)}
            continue
        get = scores.get
        for d, tf in zip(ids, tfs, strict=True):
            scores[d] = get(d, 0.0) + w * tf / (tf + norms[d])
    return scores


def best(
    scores: dict[int, float], limit: int, key_of: Callable[[int], str]
) -> tuple[list[tuple[str, float]], int]:
    """The best `limit` (key, score) pairs of BM25 `scores`, best first (ties by key), and how
    many documents matched: the one ranking of the in-memory index and the index file."""
    if limit <= 0 or not scores:
        return [], len(scores)
    top = heapq.nlargest(limit, scores.items(), key=lambda item: item[1])
    return sorted(((key_of(d), s) for d, s in top), key=_rank), len(scores)


def _rank(hit: tuple[str | None, float]) -> tuple[float, str]:
    return (-hit[1], hit[0] or "")


def default_cache_file(
    store_root: Path, project: Path | None = None, kind: str = "articles"
) -> Path | None:
    """Where a store's search index is cached: beside the parse cache (core/storage/cache.py); None
    when
    CANON_NO_CACHE is set or that would lie inside the project or the store."""
    from canon_ls.core.storage import cache

    root = Path(store_root)
    file = cache.cache_file(root, Path(project) if project is not None else root.parent)
    if file is None:
        return None
    import hashlib  # here, not at the top: a hook process ranking the lane never needs it

    key = hashlib.sha256(os.path.realpath(root).encode("utf-8", "surrogateescape")).hexdigest()
    return file.parent / f"search-{kind}-{key[:20]}.idx"
