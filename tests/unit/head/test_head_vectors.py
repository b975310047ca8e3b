"""fill_vectors: one embed call, one text per distinct content hash, and refusals."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
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
    SearchHeadInput,
    VectorCache,
    empty_vector_cache,
    fill_vectors,
    search_head,
    vector_text_of,
    version_from_records,
    with_overlay,
)
from memhtml.head.passages import passages_of, stored_passages
from memhtml.head.vectors import fill_passages, gap_since, passage_coverage, passage_gap

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


# --------------------------------------------------------------------------- passages


LONG_BODY = " ".join(f"Sentence number {i} of the rollout log, with detail." for i in range(60))


def _passage_view() -> HeadVersion:
    return version_from_records([
        record_at("areas/long.html", memory("Rollout log", "The rollout paused.", LONG_BODY)),
        record_at("areas/short.html", memory("Coffee", "Coffee is on floor two.")),
        record_at("areas/twin.html", memory("Coffee", "Coffee is on floor two.")),
        record_at("archive/old.html", archived(memory("Old", "An archived claim."))),
    ], "sha")


def _fill_passages(view: HeadView, cache: VectorCache, embedder: RecordingEmbedder,
                   limit: int | None = None) -> FillResult:
    return unsafe_perform_io(fill_passages(view, cache, embedder, limit).unwrap())


def test_fill_passages_embeds_every_passage_once_in_one_call() -> None:
    view = _passage_view()
    embedder = RecordingEmbedder(SPACE)
    long = view.get("areas/long.html")
    short = view.get("areas/short.html")
    assert long is not None and short is not None
    result = _fill_passages(view, empty_vector_cache(SPACE), embedder)
    expected = [p.text for p in passages_of(long)] + [p.text for p in passages_of(short)]
    assert embedder.calls == [expected], "path order, twins once, archived never"
    assert len(passages_of(long)) > 3
    assert result.counts.embedded == len(expected)
    assert result.remaining == 0
    assert set(result.cache.vectors) == {p.key for r in (long, short) for p in passages_of(r)}
    assert len(stored_passages(long, result.cache)) == len(passages_of(long))
    again = RecordingEmbedder(SPACE)
    reused = _fill_passages(view, result.cache, again)
    assert again.calls == [] and reused.counts.reused == 3 and reused.cache is result.cache


def test_fill_passages_limit_takes_whole_memories() -> None:
    view = _passage_view()
    long = view.get("areas/long.html")
    assert long is not None
    count = len(passages_of(long))
    first = _fill_passages(view, empty_vector_cache(SPACE), RecordingEmbedder(SPACE), limit=1)
    assert first.counts.embedded == count, "a first memory longer than the limit goes whole"
    assert first.remaining == 1
    held = _fill_passages(view, empty_vector_cache(SPACE), RecordingEmbedder(SPACE),
                          limit=count)
    assert held.counts.embedded == count and held.remaining == 1
    none = _fill_passages(view, empty_vector_cache(SPACE), RecordingEmbedder(SPACE), limit=0)
    assert none.counts.embedded == 0 and none.remaining == count + 1


def test_passage_coverage_counts_memories_and_passages() -> None:
    view = _passage_view()
    long = view.get("areas/long.html")
    assert long is not None
    empty = passage_coverage(view, empty_vector_cache(SPACE))
    assert (empty.memories, empty.covered, empty.stored) == (3, 0, 0)
    assert empty.passages == len(passages_of(long)) + 2
    half = _fill_passages(view, empty_vector_cache(SPACE), RecordingEmbedder(SPACE), limit=1)
    found = passage_coverage(view, half.cache)
    assert (found.covered, found.stored, found.complete) == (1, len(passages_of(long)), False)
    full = _fill_passages(view, half.cache, RecordingEmbedder(SPACE))
    assert passage_coverage(view, full.cache).complete


def test_the_vector_arm_scores_a_memory_by_its_best_passage() -> None:
    """A long memory whose last passage answers the query outranks a short one that
    is near it everywhere but nowhere as near: its opening alone would lose."""
    view = _passage_view()
    long = view.get("areas/long.html")
    short = view.get("areas/short.html")
    assert long is not None and short is not None
    rows: dict[str, np.ndarray] = {}
    keys = [p.key for p in passages_of(long)]
    for key in keys:
        rows[key] = np.array([0.0, 1.0, 0.0], dtype=np.float32)
    rows[keys[-1]] = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    rows[passages_of(short)[0].key] = np.array([0.6, 0.8, 0.0], dtype=np.float32)
    query = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    hits = search_head(view, SearchHeadInput("unrelated", vectors=rows, query_vector=query))
    assert [h.path for h in hits] == ["areas/long.html", "areas/short.html", "areas/twin.html"]
    assert hits[0].ranks[0].score == pytest.approx(1.0)
    # The opening passage alone (a cache holding only the memories' own vectors) loses.
    opening = {long.content_hash: rows[keys[0]],
               short.content_hash: rows[passages_of(short)[0].key]}
    hits = search_head(view, SearchHeadInput("unrelated", vectors=opening, query_vector=query))
    assert hits[0].path == "areas/short.html"


_GAP_TITLES = ("Deploys", "Kettle", "Deploys", "Standup", "Billing")
"""Titles drawn with repeats, so some memories are twins sharing a passage group."""


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(_GAP_TITLES) - 1), st.integers(0, 40),
                          st.booleans(), st.booleans()), min_size=0, max_size=8),
       st.integers(0, 12))
def test_passage_gap_agrees_with_the_coverage_count(
        shape: list[tuple[int, int, bool, bool]], bound: int) -> None:
    """The cheap gap (one digest a record) says what the full count says: complete
    exactly when every memory is covered; its passages, when counted, are the ones
    the full count finds missing; and filling just its paths makes it complete."""
    records = []
    for n, (title, sentences, live, embed) in enumerate(shape):
        body = " ".join(f"Sentence {k} of memory {n} says something." for k in range(sentences))
        html = memory(_GAP_TITLES[title], f"Claim {title}.", body)
        records.append((record_at(f"areas/m{n}.html", html if live else archived(html)), embed))
    view = version_from_records([r for r, _ in records], "sha")
    embedded = [r.path for r, embed in records if embed]
    cache = _fill_passages_at(view, embedded)
    gap = passage_gap(view, cache, bound)
    full = passage_coverage(view, cache)
    assert gap.complete == full.complete
    missing_passages = full.passages - full.stored
    if gap.passages is not None:
        assert gap.passages == missing_passages
        assert gap.missing <= bound and gap.passages <= bound
        filled = _fill_passages_at(view, gap.paths, cache)
        assert passage_coverage(view, filled).covered == full.memories
    else:
        assert gap.missing > bound or missing_passages > bound
    assert passage_gap(view, cache, bound) is gap, "remembered for the same two values"


def _fill_passages_at(view: HeadVersion, paths: Collection[str],
                      cache: VectorCache | None = None) -> VectorCache:
    start = cache if cache is not None else empty_vector_cache(SPACE)
    result = unsafe_perform_io(
        fill_passages(view, start, RecordingEmbedder(SPACE), paths=paths).unwrap())
    return result.cache


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(_GAP_TITLES) - 1), st.integers(0, 30),
                          st.booleans()), min_size=0, max_size=6),
       st.lists(st.tuples(st.integers(0, 9), st.sampled_from(["edit", "archive", "remove",
                                                                "retitle", "same"]),
                          st.integers(0, 30)), max_size=6),
       st.integers(0, 12), st.booleans())
def test_the_gap_since_a_covered_version_is_the_walk_s_gap(
        shape: list[tuple[int, int, bool]], changes: list[tuple[int, str, int]], bound: int,
        extra: bool) -> None:
    """``gap_since``, which reads only the paths changed since a version the cache held
    whole, finds what the walk over every record finds: the same missing memories,
    passages and paths (asking about an unchanged path too changes nothing)."""
    def html(title: int, n: int, sentences: int, live: bool) -> str:
        body = " ".join(f"Sentence {k} of memory {n} says something." for k in range(sentences))
        made = memory(_GAP_TITLES[title], f"Claim {title} of {n}.", body)
        return made if live else archived(made)

    before = {f"areas/m{n}.html": record_at(f"areas/m{n}.html", html(title, n, sentences, live))
              for n, (title, sentences, live) in enumerate(shape)}
    old = version_from_records(list(before.values()), "a" * 40)
    cache = _fill_passages_at(old, list(before))
    assert passage_gap(old, cache, 10_000).missing == 0
    after = dict(before)
    for n, (slot, change, sentences) in enumerate(changes):
        path = f"areas/m{slot}.html"
        title = (slot + n) % len(_GAP_TITLES)
        if change == "remove":
            after.pop(path, None)
        elif change == "archive":
            after[path] = record_at(path, html(title, slot, sentences, False))
        elif change == "retitle" and path in after:
            after[path] = dataclasses.replace(after[path], title=f"Retitled {n}")
        elif change == "edit":
            after[path] = record_at(path, html(title, 100 + n, sentences, True))
    new = version_from_records(list(after.values()), "b" * 40)
    changed = {path for path in set(before) | set(after)
               if before.get(path) != after.get(path)}
    if extra and before:
        changed.add(min(before))
    walked, since = passage_gap(new, cache, bound), gap_since(new, cache, changed, bound)
    assert since.memories is None
    assert (since.missing, since.passages, since.paths) == (
        walked.missing, walked.passages, walked.paths)
    assert since.complete == (walked.missing == 0)
