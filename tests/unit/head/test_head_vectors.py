"""fill_vectors: one embed call, one text per distinct content hash, and refusals."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from returns.io import IOSuccess
from returns.unsafe import unsafe_perform_io
from tests.fake_embedders import RecordingEmbedder
from tests.property.head_support import archived, memory, record_at

from memhtml.contracts.errors import EmbedFailure
from memhtml.contracts.ops import Label, Move, Put
from memhtml.contracts.services import VectorSpace
from memhtml.contracts.view import HeadView
from memhtml.head import (
    VECTOR_TEXT_MAX_CHARS,
    FillResult,
    HeadVersion,
    VectorCache,
    empty_vector_cache,
    fill_vectors,
    vector_text_of,
    version_from_records,
    with_overlay,
)

SPACE = VectorSpace("test-model", 3)


def _view() -> HeadVersion:
    empty = dataclasses.replace(record_at("areas/e.html", memory("Empty", "An empty one.")),
                                body_text="   ")
    return version_from_records([
        record_at("areas/b.html", memory("Twin", "The twin claim.", "Body.")),
        record_at("areas/a.html", memory("Twin", "The twin claim.", "Body.",
                                         at="2026-06-01T00:00:00Z")),
        record_at("areas/c.html", memory("Other", "Another claim.")),
        record_at("archive/d.html", archived(memory("Old", "An archived claim."))),
        record_at("areas/status-archived.html", archived(memory("Old", "Archived by status."))),
        empty,
    ], "sha")


def _fill(view: HeadView, cache: VectorCache, embedder: RecordingEmbedder,
          limit: int | None = None) -> FillResult:
    return unsafe_perform_io(fill_vectors(view, cache, embedder, limit).unwrap())


def _failure(view: HeadVersion, cache: VectorCache, embedder: RecordingEmbedder) -> EmbedFailure:
    result = fill_vectors(view, cache, embedder)
    assert not isinstance(result, IOSuccess), result
    return unsafe_perform_io(result.failure())


def test_one_call_one_text_per_distinct_hash() -> None:
    view = _view()
    embedder = RecordingEmbedder(SPACE)
    result = _fill(view, empty_vector_cache(SPACE), embedder)
    # Path order: a.html (twin of b.html) then c.html; archived and empty records skipped.
    assert embedder.calls == [["The twin claim. Body.", "Another claim."]]
    assert result.counts.records == 4
    assert result.counts.embedded == 2
    assert result.counts.empty == 1
    assert result.counts.reused == 0
    assert result.remaining == 0
    twin = view.get("areas/a.html")
    assert twin is not None
    assert set(result.cache.vectors) == {
        twin.content_hash, record_at("x.html", memory("Other", "Another claim.")).content_hash}
    vector = result.cache.vectors[twin.content_hash]
    assert vector.shape == (3,)
    assert vector.dtype == np.float32


def test_a_full_cache_is_reused_without_a_call() -> None:
    view = _view()
    first = _fill(view, empty_vector_cache(SPACE), RecordingEmbedder(SPACE))
    embedder = RecordingEmbedder(SPACE)
    second = _fill(view, first.cache, embedder)
    assert embedder.calls == []
    assert second.counts.reused == 3
    assert second.counts.embedded == 0
    assert second.cache.vectors == first.cache.vectors


def test_limit_holds_texts_back_for_the_next_fill() -> None:
    view = _view()
    embedder = RecordingEmbedder(SPACE)
    first = _fill(view, empty_vector_cache(SPACE), embedder, limit=1)
    assert embedder.calls == [["The twin claim. Body."]]
    assert (first.counts.embedded, first.remaining) == (1, 1)
    second = _fill(view, first.cache, embedder, limit=1)
    assert embedder.calls[1] == ["Another claim."]
    assert (second.counts.embedded, second.counts.reused, second.remaining) == (1, 2, 0)
    idle = RecordingEmbedder(SPACE)
    nothing = _fill(view, empty_vector_cache(SPACE), idle, limit=0)
    assert idle.calls == []
    assert (nothing.counts.embedded, nothing.remaining) == (0, 2)


def test_vectors_for_hashes_the_view_lacks_are_kept() -> None:
    stale = np.ones(3, dtype=np.float32)
    cache = VectorCache(SPACE, empty_vector_cache(SPACE).vectors.set("sha256:gone", stale))
    result = _fill(_view(), cache, RecordingEmbedder(SPACE))
    assert result.cache.vectors["sha256:gone"] is stale
    assert len(result.cache) == 3


@pytest.mark.parametrize("embedder", [RecordingEmbedder(SPACE, drop_one=True),
                                      RecordingEmbedder(SPACE, width=4)],
                         ids=["wrong-count", "wrong-width"])
def test_a_wrong_answer_is_refused_and_nothing_stored(embedder: RecordingEmbedder) -> None:
    cache = empty_vector_cache(SPACE)
    error = _failure(_view(), cache, embedder)
    assert error.model_id == "test-model"
    assert len(embedder.calls) == 1
    assert len(cache) == 0


def test_a_space_mismatch_is_refused_before_any_call() -> None:
    embedder = RecordingEmbedder(VectorSpace("test-model", 4))
    _failure(_view(), empty_vector_cache(SPACE), embedder)
    other = RecordingEmbedder(VectorSpace("other-model", 3))
    _failure(_view(), empty_vector_cache(SPACE), other)
    assert embedder.calls == other.calls == []


def test_the_cache_survives_a_move_and_a_head_only_edit() -> None:
    view = _view()
    filled = _fill(view, empty_vector_cache(SPACE), RecordingEmbedder(SPACE))
    retitled = memory("A brand new title", "Another claim.", at="2026-08-01T00:00:00Z")
    moved = with_overlay(view, [Move("areas/a.html", "areas/z.html"),
                                Label("areas/b.html", "team:sre"),
                                Put("areas/c.html", retitled)]).unwrap()
    for path in ("areas/z.html", "areas/b.html", "areas/c.html"):
        record = moved.get(path)
        assert record is not None
        assert record.content_hash in filled.cache.vectors
    embedder = RecordingEmbedder(SPACE)
    again = _fill(moved, filled.cache, embedder)
    assert embedder.calls == []
    assert again.counts.reused == 3


def test_vector_text_is_the_trimmed_article_without_the_title() -> None:
    record = record_at("a.html", memory("Title words", "Claim words.", "Body words."))
    assert vector_text_of(record) == "Claim words. Body words."
    long = dataclasses.replace(record, body_text="  " + "x" * 5000 + "  ")
    assert vector_text_of(long) == "x" * VECTOR_TEXT_MAX_CHARS


def test_vector_text_cut_counts_utf16_code_units() -> None:
    record = record_at("a.html", memory("T", "Claim."))
    astral = dataclasses.replace(record, body_text="𝄞" * 1000)
    assert len(vector_text_of(astral).encode("utf-16-le")) // 2 <= VECTOR_TEXT_MAX_CHARS
