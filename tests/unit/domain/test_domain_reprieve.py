"""The reprieve score and gate."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from memhtml.domain.reprieve import (
    ReprieveInput,
    reprieve_score,
    reprieved_until,
    should_reprieve,
)
from memhtml.domain.thresholds import MAX_REPRIEVES, REPRIEVE_FLOOR


def test_score_terms() -> None:
    fresh = ReprieveInput(importance=10, access_count=0, outcome_score=1.0, hours_since_access=0)
    assert math.isclose(reprieve_score(fresh), 0.4 + 0.2 + 0.1)


def test_negative_outcome_is_not_a_penalty() -> None:
    bad = ReprieveInput(importance=5, access_count=3, outcome_score=-1.0, hours_since_access=5)
    neutral = ReprieveInput(importance=5, access_count=3, outcome_score=0.0, hours_since_access=5)
    assert reprieve_score(bad) == reprieve_score(neutral)


def test_importance_is_clamped_to_its_ordinal_range() -> None:
    low = ReprieveInput(importance=-5, access_count=0, outcome_score=0, hours_since_access=1e9)
    assert math.isclose(reprieve_score(low), 0.04)


def test_gate_needs_the_floor_and_room_under_the_cap() -> None:
    assert should_reprieve(REPRIEVE_FLOOR, 0)
    assert not should_reprieve(REPRIEVE_FLOOR - 1e-9, 0)
    assert should_reprieve(0.9, MAX_REPRIEVES - 1)
    assert not should_reprieve(0.9, MAX_REPRIEVES)
    assert not should_reprieve(5.0, 0, max_reprieves=0)


def test_reprieve_extends_validity_by_fourteen_days() -> None:
    start = datetime(2026, 1, 30, 12, tzinfo=UTC)
    assert reprieved_until(start) == datetime(2026, 2, 13, 12, tzinfo=UTC)
