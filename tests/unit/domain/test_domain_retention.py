"""Retention scorer: profiles, half-lives, signals, bands."""

from __future__ import annotations

import math
from dataclasses import fields, replace

import pytest
from returns.result import Failure, Success

from memhtml.contracts.vocabulary import MEMORY_TYPES, MemoryType
from memhtml.domain.errors import InvalidProfile
from memhtml.domain.retention import (
    DEFAULT_IMPORTANCE,
    HALF_LIVES_DAYS,
    NEUTRAL_RECENCY,
    SIGNAL_NAMES,
    WEIGHT_PROFILES,
    RetentionInput,
    Signals,
    WeightProfile,
    band_for,
    composite_score,
    compute_signals,
    half_life_for,
    in_grace,
    profile_weight_sum,
    recency_signal,
    retention_verdict,
    score_retention,
    weight_profile,
)
from memhtml.domain.thresholds import EVICT_THRESHOLD, RETENTION_GRACE_DAYS

BASE = RetentionInput(
    memory_type="semantic",
    age_days=0.0,
    access_count=0,
    confidence=0.5,
    graph_rank=0.0,
    max_graph_rank=0.0,
    bridge_count=0,
    reinforcement_count=0,
    importance=None,
    contradiction_count=0,
)


def test_dataclass_fields_follow_signal_order() -> None:
    assert tuple(f.name for f in fields(Signals)) == SIGNAL_NAMES
    assert tuple(f.name for f in fields(WeightProfile)) == SIGNAL_NAMES


def test_every_type_has_a_profile_and_a_half_life_entry() -> None:
    assert set(WEIGHT_PROFILES) == set(MEMORY_TYPES)
    assert set(HALF_LIVES_DAYS) == set(MEMORY_TYPES)


@pytest.mark.parametrize("memory_type", MEMORY_TYPES)
def test_every_profile_sums_to_exactly_one(memory_type: MemoryType) -> None:
    assert profile_weight_sum(WEIGHT_PROFILES[memory_type]) == 1.0


def test_procedural_and_task_read_a_neutral_recency_at_every_age() -> None:
    assert half_life_for("procedural") is None
    assert half_life_for("task") is None
    assert NEUTRAL_RECENCY == 0.5
    for age in (-3.0, 0.0, 1.0, 10_000.0, math.inf, math.nan):
        assert recency_signal("procedural", age) == NEUTRAL_RECENCY
        assert recency_signal("task", age) == NEUTRAL_RECENCY
    # The signal counts: a null half-life is not a zero weight.
    assert WEIGHT_PROFILES["procedural"].recency > 0.0


@pytest.mark.parametrize("memory_type", MEMORY_TYPES)
def test_a_memory_written_a_minute_ago_scores_above_the_evict_band(
        memory_type: MemoryType) -> None:
    """Nothing read, linked or corroborated yet, confidence as written: a fresh
    procedure used to score exactly 0.30, the band's edge."""
    fresh = RetentionInput(memory_type, 0.0007, 0, 1.0, 0, 0, 0, 0, None, 0)
    assert score_retention(fresh).score > EVICT_THRESHOLD
    assert score_retention(RetentionInput("procedural", 0, 0, 1.0, 0, 0, 0, 0, None, 0)
                           ).score == 0.35


def test_the_grace_period_is_an_age_below_the_setting() -> None:
    assert RETENTION_GRACE_DAYS == 30.0
    assert in_grace(29.999)
    assert not in_grace(30.0)
    assert not in_grace(400.0)
    assert in_grace(-2.0)
    assert in_grace(math.nan)
    assert not in_grace(0.0, grace_days=0.0)
    assert in_grace(4.0, grace_days=5.0)


def test_the_verdict_withholds_only_the_young_evict_band() -> None:
    evict = score_retention(replace(BASE, memory_type="episodic", age_days=400.0,
                                    confidence=0.0, importance=1))
    keep = score_retention(replace(BASE, access_count=10, confidence=1.0, importance=10,
                                   graph_rank=1.0, max_graph_rank=1.0, bridge_count=5,
                                   reinforcement_count=5))
    assert (evict.band, keep.band) == ("evict", "keep")
    assert retention_verdict(evict, 31.0) == "archive"
    assert retention_verdict(evict, 3.0) == "graced"
    assert retention_verdict(evict, math.nan) == "graced"
    assert retention_verdict(evict, 3.0, grace_days=0.0) == "archive"
    assert retention_verdict(keep, 400.0) == "kept"


@pytest.mark.parametrize("memory_type", [t for t in MEMORY_TYPES if HALF_LIVES_DAYS[t] is not None])
def test_recency_is_exactly_half_at_one_half_life(memory_type: MemoryType) -> None:
    half_life = HALF_LIVES_DAYS[memory_type]
    assert half_life is not None
    assert recency_signal(memory_type, half_life) == 0.5
    assert recency_signal(memory_type, 2 * half_life) == 0.25


def test_recency_of_a_fresh_or_future_memory_is_one() -> None:
    assert recency_signal("episodic", 0.0) == 1.0
    assert recency_signal("episodic", -3.0) == 1.0


def test_signal_saturation_points() -> None:
    signals = compute_signals(
        replace(
            BASE,
            access_count=10,
            graph_rank=2.0,
            max_graph_rank=4.0,
            bridge_count=5,
            reinforcement_count=7,
            importance=10,
            contradiction_count=3,
        )
    )
    assert signals.access_frequency == 1.0
    assert signals.pagerank == 0.5
    assert signals.bridge_importance == 1.0
    assert signals.reinforcement == 1.0
    assert signals.importance == 1.0
    assert signals.contested_status == 0.0


@pytest.mark.parametrize("importance", range(1, 11))
def test_importance_is_the_authored_ordinal_over_ten(importance: int) -> None:
    assert compute_signals(replace(BASE, importance=importance)).importance == importance / 10


def test_unstated_importance_takes_the_documented_default() -> None:
    assert DEFAULT_IMPORTANCE == 5
    assert compute_signals(BASE).importance == 0.5
    assert compute_signals(BASE) == compute_signals(replace(BASE, importance=5))


@pytest.mark.parametrize(
    ("importance", "expected"),
    [(0, 0.0), (-3, 0.0), (11, 1.0), (1e9, 1.0), (math.inf, 1.0), (-math.inf, 0.0)],
)
def test_importance_outside_the_ordinal_is_clamped(importance: float, expected: float) -> None:
    assert compute_signals(replace(BASE, importance=importance)).importance == expected


def test_importance_raises_the_score_and_stays_monotone() -> None:
    scores = [score_retention(replace(BASE, importance=i)).score for i in range(1, 11)]
    assert scores == sorted(scores)
    assert scores[0] < scores[-1]


def test_importance_weighs_a_tenth_in_every_profile() -> None:
    assert all(profile.importance == 0.1 for profile in WEIGHT_PROFILES.values())


def test_no_graph_means_no_pagerank_signal() -> None:
    assert compute_signals(replace(BASE, graph_rank=0.3, max_graph_rank=0.0)).pagerank == 0.0


def test_nan_inputs_contribute_nothing() -> None:
    signals = compute_signals(
        replace(BASE, confidence=math.nan, access_count=math.nan, importance=math.nan)
    )
    assert signals.confidence == 0.0
    assert signals.access_frequency == 0.0
    assert signals.importance == 0.0


def test_bands_boundaries_belong_to_the_lower_band() -> None:
    assert band_for(0.7) == "compress"
    assert band_for(0.7001) == "keep"
    assert band_for(0.3) == "evict"
    assert band_for(0.3001) == "compress"
    assert band_for(0.0) == "evict"
    assert band_for(1.0) == "keep"


def test_all_signals_full_scores_one_and_band_keep() -> None:
    ones = Signals(*([1.0] * 8))
    for profile in WEIGHT_PROFILES.values():
        assert composite_score(ones, profile) == 1.0


def test_score_retention_reports_signals_and_band() -> None:
    scored = score_retention(replace(BASE, memory_type="episodic", age_days=400.0))
    assert scored.signals.recency < 1e-9
    assert scored.band == band_for(scored.score)
    assert scored.score == composite_score(scored.signals, WEIGHT_PROFILES["episodic"])


def test_weight_profile_accepts_a_convex_profile() -> None:
    weights: dict[str, float] = dict.fromkeys(SIGNAL_NAMES, 0.125)
    assert weight_profile(weights) == Success(WeightProfile(*([0.125] * 8)))


def test_weight_profile_refuses_a_non_convex_one() -> None:
    weights: dict[str, float] = dict.fromkeys(SIGNAL_NAMES, 0.125)
    weights["recency"] = 0.2
    assert isinstance(weight_profile(weights), Failure)
    del weights["recency"]
    result = weight_profile(weights)
    assert isinstance(result, Failure)
    assert isinstance(result.failure(), InvalidProfile)
    assert "recency" in result.failure().reason
