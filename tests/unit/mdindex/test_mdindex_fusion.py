"""Channels, rank-only fusion and receipts' native scores."""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.io import IOResult
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.mdfs import MappingReader
from memhtml.mdindex import (
    RRF_K,
    BM25Channel,
    ChannelRefused,
    Corpus,
    Scored,
    TrigramChannel,
    build,
    make_channels,
    normalize,
    retrieve,
    top_k,
    trigrams,
)

T = TypeVar("T")
E = TypeVar("E")


def ok(result: IOResult[T, E]) -> T:
    """The value of a successful IOResult; a failure raises."""
    return unsafe_perform_io(result.unwrap())


def err(result: IOResult[T, E]) -> E:
    """The error of a failed IOResult; a success raises."""
    return unsafe_perform_io(result.failure())


def test_bm25_finds_the_function_word_variant(corpus: Corpus) -> None:
    query = "the anemometer is reliable on the gusts and unreliable on the mean"
    hits = retrieve(corpus, [BM25Channel(corpus)], query, 3)
    assert hits[0].file == "notes/wind.md"


def test_bm25_finds_the_wrapped_blockquote_phrase(corpus: Corpus) -> None:
    query = "somebody is awake and watching and the light is how that travels"
    assert retrieve(corpus, [BM25Channel(corpus)], query, 3)[0].file == "HANDBOOK.md"


def test_in_vocabulary_query_returns_low_scores_not_nothing(corpus: Corpus) -> None:
    assert retrieve(corpus, [BM25Channel(corpus)], "the boat and the coast and the water", 5)
    assert retrieve(corpus, [BM25Channel(corpus)], "zzqq xxvv wwjj", 5) == ()


def test_a_budget_below_one_returns_nothing(corpus: Corpus) -> None:
    for k in (0, -1):
        assert retrieve(corpus, [BM25Channel(corpus)], "glazing", k) == ()
    assert retrieve(corpus, [], "glazing", 3) == ()


def test_bm25_idf_stays_positive_for_common_terms(corpus: Corpus) -> None:
    bm25 = BM25Channel(corpus)
    assert corpus.df["the"] > len(corpus.chunks) / 2
    assert bm25.idf("the") > 0


def test_single_channel_fusion_keeps_the_channel_order(corpus: Corpus) -> None:
    bm25 = BM25Channel(corpus)
    query = "brass paste scratches optical glass"
    raw = bm25.query(query, 10)
    fused = retrieve(corpus, [bm25], query, 10)
    assert corpus.chunks[raw[0].chunk].file == fused[0].file
    assert all(hit.native_channel == "bm25" for hit in fused)


def test_native_score_comes_from_the_channel_that_surfaced_the_chunk(corpus: Corpus) -> None:
    # "anemometers" is out of bm25's vocabulary, so only trigram reaches
    # notes/wind.md; "glazing" is in it, so bm25 reaches notes/glass.md first.
    bm25, trigram = BM25Channel(corpus), TrigramChannel(corpus)
    by_file = {h.file: h for h in retrieve(corpus, [bm25, trigram], "anemometers glazing", 10)}
    assert by_file["notes/wind.md"].native_channel == "trigram"
    assert (by_file["notes/wind.md"].native or 0) > 0
    assert by_file["notes/glass.md"].native_channel == "bm25"
    reversed_order = retrieve(corpus, [trigram, bm25], "anemometers glazing", 10)
    assert {h.native_channel for h in reversed_order if h.file == "notes/glass.md"} == {"trigram"}


def test_fused_score_is_reciprocal_rank_only(corpus: Corpus) -> None:
    bm25, trigram = BM25Channel(corpus), TrigramChannel(corpus)
    top = retrieve(corpus, [bm25, trigram], "salt haze etches the glazing", 1)[0]
    # First in both channels: 1/(60+0) twice, whatever the raw scores were.
    assert top.fused == 1.0 / RRF_K + 1.0 / RRF_K


def test_fusion_ties_break_by_path_then_paragraph() -> None:
    # Two files with identical text score identically in every channel; the
    # tie must go to the lower path, and within a file to the lower paragraph.
    text = b"brass paste scratches optical glass"
    reader = MappingReader({"b.md": text, "a.md": text + b"\n\n" + text, "c/z.md": text})
    corpus = ok(build(reader))
    channels = make_channels(corpus, ["bm25", "trigram"]).unwrap()
    hits = retrieve(corpus, channels, "brass paste optical glass", 5)
    assert [(h.file, h.para) for h in hits] == [("a.md", 0), ("b.md", 0), ("c/z.md", 0)]
    assert hits[1].fused < hits[0].fused  # rank 1 in a channel scores below rank 0


def test_equal_fused_scores_order_by_path() -> None:
    class Fixed:
        def __init__(self, name: str, order: list[int]) -> None:
            self._name, self._order = name, order

        @property
        def name(self) -> str:
            return self._name

        def query(self, text: str, k: int) -> tuple[Scored, ...]:
            return tuple(Scored(c, r, 1.0) for r, c in enumerate(self._order[:k]))

    words = b"three words here"
    corpus = ok(build(MappingReader({"x.md": words, "m.md": words, "a.md": words})))
    # Chunk ids follow sorted paths: a.md=0, m.md=1, x.md=2. Crossed ranks
    # give x.md and a.md the same fused score; path decides.
    hits = retrieve(corpus, [Fixed("one", [2, 0]), Fixed("two", [0, 2])], "q", 3)
    assert [h.file for h in hits] == ["a.md", "x.md"]
    assert hits[0].fused == hits[1].fused


def test_top_k_breaks_score_ties_by_chunk_id() -> None:
    candidates = np.array([9, 3, 7, 1, 5], dtype=np.int64)
    scores = np.array([1.0, 2.0, 1.0, 1.0, 2.0])
    assert [(s.chunk, s.rank) for s in top_k(candidates, scores, 3)] == [(3, 0), (5, 1), (1, 2)]
    assert top_k(candidates, scores, 0) == ()


@settings(max_examples=60, derandomize=True)
@given(
    st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=40),
    st.integers(min_value=1, max_value=50),
)
def test_top_k_is_a_total_order(raw: list[int], k: int) -> None:
    candidates = np.arange(len(raw), dtype=np.int64)[::-1].copy()
    scores = np.array([float(s) for s in raw])
    got = [(s.score, s.chunk) for s in top_k(candidates, scores, k)]
    expected = sorted(
        zip(scores.tolist(), candidates.tolist(), strict=True), key=lambda p: (-p[0], p[1])
    )
    assert got == expected[:k]


def test_trigram_equals_brute_force_jaccard(corpus: Corpus) -> None:
    channel = TrigramChannel(corpus)
    for query in ("anemometers", "glazing daylight", "the station", "ab", "東京 tower"):
        q = trigrams(normalize(query))
        brute = []
        for chunk_id, chunk in enumerate(corpus.chunks):
            grams = trigrams(chunk.text)
            if q & grams:
                brute.append((-(len(q & grams) / len(q | grams)), chunk_id))
        expected = [(c, -s) for s, c in sorted(brute)[:50]]
        assert [(s.chunk, s.score) for s in channel.query(query, 50)] == expected


def test_make_channels_refuses_unknown_repeated_and_none(corpus: Corpus) -> None:
    assert [c.name for c in make_channels(corpus, ["trigram", "bm25"]).unwrap()] == [
        "trigram",
        "bm25",
    ]
    for names in (["bm25", "bm25"], ["vector"], []):
        assert isinstance(make_channels(corpus, names).failure(), ChannelRefused)


@pytest.mark.parametrize("k", [1, 2, 5])
def test_retrieve_returns_one_hit_per_file(corpus: Corpus, k: int) -> None:
    hits = retrieve(corpus, make_channels(corpus, ["bm25"]).unwrap(), "the glazing station", k)
    assert len(hits) <= k
    assert len({h.file for h in hits}) == len(hits)
