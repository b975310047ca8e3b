"""Confidence decay and the commit delta."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memhtml.domain.decay import (
    CONFIDENCE_FLOOR,
    DECAY_PERIOD,
    ConfidenceRewrite,
    decay_confidence,
    decay_steps,
    decayed_stored,
    is_committable_change,
    periods_between,
    plan_decay,
    stored_after,
)

ORIGIN = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def test_one_cycle_closes_a_tenth_of_the_distance_to_the_floor() -> None:
    assert decay_confidence(0.9) == 0.83
    assert decay_confidence(0.2) == 0.2


def test_zero_or_negative_cycles_change_nothing() -> None:
    assert decay_confidence(0.9, cycles=0) == 0.9
    assert decay_confidence(0.9, cycles=-4) == 0.9


def test_decay_never_raises_a_value_below_the_floor() -> None:
    assert decay_confidence(0.05) == 0.05
    assert decay_confidence(0.05, cycles=50) == 0.05


def test_decay_settles_at_the_floor_and_does_not_pass_it() -> None:
    assert decay_confidence(1.0, cycles=1000) >= CONFIDENCE_FLOOR
    assert decay_confidence(1.0, cycles=1000) <= CONFIDENCE_FLOOR + 0.001


def test_n_cycles_equal_n_single_cycles() -> None:
    value = 0.97
    for _ in range(7):
        value = decay_confidence(value)
    assert decay_confidence(0.97, cycles=7) == value


def test_commit_delta_boundary_is_exact() -> None:
    assert is_committable_change(0.5, 0.495)
    assert is_committable_change(0.495, 0.5)
    assert not is_committable_change(0.5, 0.4951)
    assert not is_committable_change(0.3, 0.3)


def test_plan_decay_is_sorted_and_writes_what_the_files_will_store() -> None:
    plan = plan_decay({"b.html": 0.9, "a.html": 0.8, "c.html": 0.22, "d.html": 0.2})
    assert plan == (
        ConfidenceRewrite("a.html", 0.8, 0.74),
        ConfidenceRewrite("b.html", 0.9, 0.83),
        # 0.218 rounds toward the floor, so the step is stored rather than lost.
        ConfidenceRewrite("c.html", 0.22, 0.21),
    )
    assert plan_decay({"b.html": 0.9}, cycles=25) == (ConfidenceRewrite("b.html", 0.9, 0.2),)


# The nightly sequence from 0.90 as stored: each night's value read back at two
# decimals and decayed again. Rounding to nearest stopped at 0.24 after 25 nights.
FROM_090 = [n / 100 for n in (90, 83, 76, 70, 65, 60, 56, 52, 48, 45, 42, 39, 37, 35, 33,
                                31, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20)]  # fmt: skip


def test_stored_decay_from_090_reaches_the_floor_in_25_nights() -> None:
    value, seen = 0.9, [0.9]
    while (after := decayed_stored(value)) is not None:
        value = after
        seen.append(value)
    assert seen == FROM_090


@pytest.mark.parametrize("value", [0.2, 0.19, 0.05, 0.0])
def test_a_value_at_or_below_the_floor_is_not_rewritten(value: float) -> None:
    assert decayed_stored(value) is None


def test_stored_decay_rounds_down_and_stops_on_the_floor() -> None:
    assert decayed_stored(1.0) == 0.92
    assert decayed_stored(0.767) == 0.71  # 0.7103 rounded toward the floor
    assert decayed_stored(0.21) == CONFIDENCE_FLOOR  # 0.209 would round back to 0.21
    assert decayed_stored(0.25) == 0.24


def test_a_change_below_the_commit_delta_is_not_written() -> None:
    # Only a value held off the two-decimal grid can move by less than the delta.
    assert decayed_stored(0.2049) is None
    assert decayed_stored(0.205) == CONFIDENCE_FLOOR


def test_a_period_is_a_whole_day_of_the_files_own_grid() -> None:
    assert DECAY_PERIOD == DAY
    assert periods_between(ORIGIN, ORIGIN) == 0
    assert periods_between(ORIGIN, ORIGIN + DAY - timedelta(microseconds=1)) == 0
    assert periods_between(ORIGIN, ORIGIN + DAY) == 1
    assert periods_between(ORIGIN, ORIGIN + 30 * DAY + timedelta(hours=23)) == 30
    assert periods_between(ORIGIN, ORIGIN - 5 * DAY) == 0


def test_steps_count_the_periods_since_the_last_application() -> None:
    # Never applied: every whole day since the origin.
    assert decay_steps(ORIGIN, None, ORIGIN + 3 * DAY + timedelta(hours=5)) == 3
    # Applied at day 2.5: days 3 ends since; day 2 was paid then.
    assert decay_steps(ORIGIN, ORIGIN + 2.5 * DAY, ORIGIN + 3 * DAY) == 1
    # Applied earlier the same grid day: nothing new has ended.
    assert decay_steps(ORIGIN, ORIGIN + 3.1 * DAY, ORIGIN + 3.9 * DAY) == 0
    # An application before the origin (a read restarted the clock since) counts
    # from the origin; one after the run's stamp owes nothing.
    assert decay_steps(ORIGIN, ORIGIN - 9 * DAY, ORIGIN + 2 * DAY) == 2
    assert decay_steps(ORIGIN, ORIGIN + 5 * DAY, ORIGIN + 4 * DAY) == 0


def test_three_runs_in_a_day_owe_what_one_run_owes() -> None:
    runs = [ORIGIN + 6 * DAY + timedelta(hours=h) for h in (1, 9, 17)]
    last = ORIGIN + 5 * DAY + timedelta(hours=20)
    owed = []
    for at in runs:
        owed.append(decay_steps(ORIGIN, last, at))
        last = at
    assert sum(owed) == decay_steps(ORIGIN, ORIGIN + 5 * DAY + timedelta(hours=20),
                                    runs[-1]) == 1


def test_stored_after_steps_from_the_stored_value() -> None:
    assert stored_after(0.9, 0) is None
    assert stored_after(0.9, 1) == 0.83
    assert stored_after(0.9, 2) == stored_after(0.83, 1) == 0.76
    assert stored_after(0.9, 25) == CONFIDENCE_FLOOR
    assert stored_after(0.9, 10_000) == CONFIDENCE_FLOOR
    assert stored_after(0.2, 3) is None
    assert stored_after(0.05, 3) is None
