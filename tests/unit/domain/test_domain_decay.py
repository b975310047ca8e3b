"""Confidence decay and the commit delta."""

from __future__ import annotations

from memhtml.domain.decay import (
    CONFIDENCE_FLOOR,
    ConfidenceRewrite,
    decay_confidence,
    is_committable_change,
    plan_decay,
)


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


def test_plan_decay_is_sorted_and_skips_sub_delta_changes() -> None:
    plan = plan_decay({"b.html": 0.9, "a.html": 0.8, "c.html": 0.22})
    assert plan == (
        ConfidenceRewrite("a.html", 0.8, 0.74),
        ConfidenceRewrite("b.html", 0.9, 0.83),
    )
