"""search_head: shared ranks, arm caps, admit before the cap, limits, the recency arm."""

from __future__ import annotations

import numpy as np
from tests.property.head_support import memory, memory_with, record_at

from memhtml.head import (
    DEFAULT_LIMIT,
    LEXICAL_ARM_LIMIT,
    LEXICAL_WEIGHT,
    RRF_K,
    VECTOR_ARM_LIMIT,
    VECTOR_WEIGHT,
    HeadVersion,
    SearchHeadInput,
    search_head,
    version_from_records,
)
from memhtml.head.search import arm_ranks


def test_the_constants() -> None:
    assert (DEFAULT_LIMIT, LEXICAL_ARM_LIMIT, VECTOR_ARM_LIMIT, RRF_K) == (10, 40, 40, 60)
    assert LEXICAL_WEIGHT == VECTOR_WEIGHT == 1.0


def test_arm_ranks_share_the_best_rank_of_a_run() -> None:
    scored = [("c", 1.0), ("b", 2.0), ("a", 2.0), ("d", 0.5), ("e", 0.5), ("f", 0.5)]
    assert arm_ranks(scored, 10) == [("a", 1), ("b", 1), ("c", 3), ("d", 4), ("e", 4),
                                     ("f", 4)]
    assert arm_ranks([("x", 1.0), ("y", 1.0), ("z", 1.0)], 2) == [("x", 1), ("y", 1)]
    assert arm_ranks([], 5) == []


def _many(count: int) -> HeadVersion:
    """``count`` records matching ``needle`` with strictly falling strength: record i
    says needle once among i filler words, so a lower i ranks higher."""
    records = []
    for i in range(count):
        filler = " ".join(f"w{i}x{j}" for j in range(i + 1))
        records.append(record_at(f"areas/n{i:02d}.html",
                                 memory(f"Note {i}", f"The needle sits in {filler}.")))
    return version_from_records(records, "sha")


def test_the_lexical_arm_keeps_its_best_forty() -> None:
    hits = search_head(_many(45), SearchHeadInput("needle", limit=100))
    assert [h.path for h in hits] == [f"areas/n{i:02d}.html" for i in range(40)]
    assert hits[-1].score == 1.0 / (RRF_K + 40)


def test_admit_narrows_before_the_cap() -> None:
    version = _many(45)
    late = "areas/n44.html"
    hits = search_head(version, SearchHeadInput(
        "needle", admit=lambda r: r.path in {late, "areas/n43.html"}))
    # Outside the best forty unadmitted, first among the admitted.
    assert [(h.path, h.score) for h in hits] == [
        ("areas/n43.html", 1.0 / (RRF_K + 1)), (late, 1.0 / (RRF_K + 2))]


def test_default_and_explicit_limits() -> None:
    version = _many(15)
    assert len(search_head(version, SearchHeadInput("needle"))) == DEFAULT_LIMIT
    assert len(search_head(version, SearchHeadInput("needle", limit=3))) == 3
    assert search_head(version, SearchHeadInput("needle", limit=0)) == []
    assert search_head(version, SearchHeadInput("needle", limit=-1)) == []


def test_no_match_and_stop_words_return_nothing() -> None:
    version = _many(3)
    assert search_head(version, SearchHeadInput("haystack")) == []
    assert search_head(version, SearchHeadInput("")) == []
    assert search_head(version, SearchHeadInput("the and of")) == []


def test_hits_carry_the_claim() -> None:
    version = version_from_records([record_at("a.html", memory("T", "The needle claim."))], "s")
    (hit,) = search_head(version, SearchHeadInput("needle"))
    assert hit.claim == "The needle claim."
    assert hit.arms == ("lexical",)


def test_recency_names_a_tie_even_with_the_other_party_cut_by_the_limit() -> None:
    twin = ("Twin", "The needle twin.")
    version = version_from_records([
        record_at("areas/old.html", memory(*twin, at="2025-01-01T00:00:00Z")),
        record_at("areas/new.html", memory(*twin, at="2026-01-01T00:00:00Z")),
    ], "s")
    (hit,) = search_head(version, SearchHeadInput("needle", limit=1))
    assert (hit.path, hit.arms) == ("areas/new.html", ("lexical", "recency"))


def test_path_breaks_a_tie_recency_cannot() -> None:
    twin = ("Twin", "The needle twin.")
    version = version_from_records([
        record_at("areas/b.html", memory(*twin)),
        record_at("areas/a.html", memory(*twin)),
    ], "s")
    assert [h.path for h in search_head(version, SearchHeadInput("needle"))] == [
        "areas/a.html", "areas/b.html"]


def test_now_clamps_a_future_event_time_to_a_tie() -> None:
    claim = ("Freeze", "The needle freeze.")
    version = version_from_records([
        record_at("areas/a.html", memory_with(*claim, event_at="2030-01-01T00:00:00Z")),
        record_at("areas/b.html", memory_with(*claim, event_at="2031-01-01T00:00:00Z")),
        # An update time far past now but no event time: updated_at is clamped too.
        record_at("areas/c.html", memory(*claim, at="2029-01-01T00:00:00Z")),
    ], "s")
    unclamped = search_head(version, SearchHeadInput("needle"))
    assert [h.path for h in unclamped] == ["areas/b.html", "areas/a.html", "areas/c.html"]
    clamped = search_head(version, SearchHeadInput("needle", now="2026-11-01T00:00:00Z"))
    assert [h.path for h in clamped] == ["areas/a.html", "areas/b.html", "areas/c.html"]


def test_vector_arm_needs_both_vectors_and_a_query_vector() -> None:
    record = record_at("areas/a.html", memory("Alpha", "An alpha claim."))
    version = version_from_records([record], "s")
    vectors = {record.content_hash: np.array([1.0, 0.0], dtype=np.float32)}
    query = np.array([1.0, 0.0], dtype=np.float32)
    assert search_head(version, SearchHeadInput("beta", vectors=vectors)) == []
    assert search_head(version, SearchHeadInput("beta", query_vector=query)) == []
    (hit,) = search_head(version, SearchHeadInput("beta", vectors=vectors, query_vector=query))
    # Two arms fuse by normalized score: the vector arm's only hit brings its weight.
    assert (hit.path, hit.arms, hit.score) == ("areas/a.html", ("vector",), 1.0)


def test_vector_arm_ranks_by_cosine_and_skips_records_without_a_vector() -> None:
    records = [record_at(f"areas/{name}.html", memory(name.title(), f"The {name} claim."))
               for name in ("near", "far", "none")]
    version = version_from_records(records, "s")
    vectors = {
        records[0].content_hash: np.array([3.0, 0.1], dtype=np.float32),  # length ignored
        records[1].content_hash: np.array([0.0, 1.0], dtype=np.float32),
    }
    hits = search_head(version, SearchHeadInput(
        "unrelated", vectors=vectors, query_vector=np.array([1.0, 0.0], dtype=np.float32)))
    assert [(h.path, h.arms) for h in hits] == [("areas/near.html", ("vector",)),
                                                ("areas/far.html", ("vector",))]
    assert [h.score for h in hits] == [1.0, 0.0], "the arm's best and worst, normalized"


def test_admit_reaches_the_vector_arm() -> None:
    records = [record_at(f"areas/{name}.html", memory(name.title(), f"The {name} claim."))
               for name in ("near", "far")]
    version = version_from_records(records, "s")
    vectors = {records[0].content_hash: np.array([1.0, 0.0], dtype=np.float32),
               records[1].content_hash: np.array([0.6, 0.8], dtype=np.float32)}
    hits = search_head(version, SearchHeadInput(
        "unrelated", vectors=vectors, query_vector=np.array([1.0, 0.0], dtype=np.float32),
        admit=lambda r: r.path == "areas/far.html"))
    assert [(h.path, h.score) for h in hits] == [("areas/far.html", 1.0)]


def _two_arms() -> tuple[HeadVersion, dict[str, np.ndarray], np.ndarray]:
    """Two records the arms disagree on: the lexical arm prefers ``words``, the vector
    arm ``meaning``."""
    records = [record_at("areas/words.html", memory("Words", "The needle needle needle.")),
               record_at("areas/meaning.html", memory("Meaning", "A needle and much more "
                                                      "text about other things entirely."))]
    vectors = {records[0].content_hash: np.array([0.0, 1.0], dtype=np.float32),
               records[1].content_hash: np.array([1.0, 0.0], dtype=np.float32)}
    return version_from_records(records, "s"), vectors, np.array([1.0, 0.0], dtype=np.float32)


def test_the_vector_weight_moves_the_hybrid_between_its_arms() -> None:
    version, vectors, query = _two_arms()

    def order(weight: float) -> list[str]:
        return [h.path for h in search_head(version, SearchHeadInput(
            "needle", vectors=vectors, query_vector=query, vector_weight=weight))]

    lexical = [h.path for h in search_head(version, SearchHeadInput("needle"))]
    assert lexical == ["areas/words.html", "areas/meaning.html"]
    assert order(0.0) == lexical, "weight 0: the lexical arm's order"
    assert order(3.0) == ["areas/meaning.html", "areas/words.html"], "the vector arm leads"
    assert order(VECTOR_WEIGHT) == [h.path for h in search_head(version, SearchHeadInput(
        "needle", vectors=vectors, query_vector=query))], "the default is the spec's"
    for bad in (float("nan"), float("inf"), -1.0):
        assert order(bad) == order(VECTOR_WEIGHT), "an unusable weight fuses plainly"
