"""Laws of the retention scorer."""

from __future__ import annotations

import math
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.contracts.vocabulary import MEMORY_TYPES, MemoryType
from memhtml.domain.reprieve import ReprieveInput, reprieve_score
from memhtml.domain.retention import (
    BANDS,
    DEFAULT_IMPORTANCE,
    WEIGHT_PROFILES,
    RetentionInput,
    band_for,
    profile_weight_sum,
    score_retention,
)

anything = st.floats(allow_nan=True, allow_infinity=True)
counts = st.floats(min_value=-5, max_value=1e6, allow_nan=False)

inputs = st.builds(
    RetentionInput,
    memory_type=st.sampled_from(MEMORY_TYPES),
    age_days=anything,
    access_count=anything,
    confidence=anything,
    graph_rank=anything,
    max_graph_rank=anything,
    bridge_count=anything,
    reinforcement_count=anything,
    importance=st.none() | anything,
    contradiction_count=anything,
)


def test_every_profile_weight_sum_is_exactly_one() -> None:
    assert all(profile_weight_sum(p) == 1.0 for p in WEIGHT_PROFILES.values())


@settings(max_examples=500)
@given(inputs)
def test_composite_is_in_the_unit_interval(raw: RetentionInput) -> None:
    scored = score_retention(raw)
    assert 0.0 <= scored.score <= 1.0
    assert all(0.0 <= v <= 1.0 for v in scored.signals.values())


@settings(max_examples=500)
@given(st.floats(min_value=0.0, max_value=1.0))
def test_bands_partition_the_unit_interval(score: float) -> None:
    in_band = [score > 0.7, 0.3 < score <= 0.7, score <= 0.3]
    assert sum(in_band) == 1
    assert band_for(score) == BANDS[in_band.index(True)]


@given(st.sampled_from(MEMORY_TYPES), st.floats(0, 1e4), st.floats(0, 1e4))
def test_older_never_scores_higher(memory_type: MemoryType, age: float, more: float) -> None:
    def at(age_days: float) -> float:
        return score_retention(
            RetentionInput(memory_type, age_days, 1.0, 0.5, 0.1, 0.2, 1.0, 1.0, 7.0, 0.0)
        ).score

    younger, older = at(age), at(age + more)
    assert older <= younger


@given(
    st.sampled_from(MEMORY_TYPES),
    st.none() | st.integers(1, 10),
    st.floats(0, 10),
)
def test_more_importance_never_scores_lower(
    memory_type: MemoryType, importance: int | None, extra: float
) -> None:
    base = RetentionInput(memory_type, 3.0, 1.0, 0.5, 0.1, 0.2, 1.0, 1.0, importance, 0.0)
    stated = DEFAULT_IMPORTANCE if importance is None else importance
    lower = score_retention(base).score
    higher = score_retention(replace(base, importance=stated + extra)).score
    assert lower <= higher


@given(st.floats(1, 10), counts, st.floats(-1, 1), st.floats(0, 1e6), st.floats(0, 10))
def test_reprieve_score_is_monotone_in_access(
    importance: float, access: float, outcome: float, hours: float, extra: float
) -> None:
    less = reprieve_score(ReprieveInput(importance, access, outcome, hours))
    more = reprieve_score(ReprieveInput(importance, max(access, 0) + extra, outcome, hours))
    assert math.isfinite(less)
    assert more >= less > 0
