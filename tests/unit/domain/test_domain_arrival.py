"""A memory's age in the store: the decay clock's origin and the grace period's age,
over generated timelines (written, arrived, read, last applied)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.domain.decay import DECAY_PERIOD, decay_origin, decay_steps
from memhtml.domain.retention import (
    RetentionInput,
    grace_age_days,
    retention_verdict,
    score_retention,
)

T0 = datetime(2024, 1, 1, tzinfo=UTC)
moments = st.integers(0, 900 * 86_400).map(lambda s: T0 + timedelta(seconds=s))
maybe = st.none() | moments


def test_the_origin_is_the_latest_of_written_arrived_and_read() -> None:
    written, arrived, read = T0, T0 + timedelta(days=700), T0 + timedelta(days=3)
    assert decay_origin(written, arrived, read) == arrived
    assert decay_origin(written, None, read) == read
    assert decay_origin(arrived, written, None) == arrived  # a clock that ran behind
    # An unreadable creation owes nothing, whatever git says.
    assert decay_origin(None, arrived, read) is None


@settings(max_examples=100)
@given(moments, maybe, maybe, moments)
def test_with_no_application_a_file_owes_the_whole_days_since_the_latest(
        written: datetime, arrived: datetime | None, read: datetime | None,
        now: datetime) -> None:
    origin = decay_origin(written, arrived, read)
    assert origin is not None
    latest = max(t for t in (written, arrived, read) if t is not None)
    owed = decay_steps(origin, None, now)
    assert owed == max(0, (now - latest) // DECAY_PERIOD)
    # Never a step for time before the file came onto the branch.
    if arrived is not None:
        assert owed <= max(0, (now - arrived) // DECAY_PERIOD)


@settings(max_examples=100)
@given(moments, maybe, maybe, moments, moments)
def test_after_an_application_a_file_owes_the_days_of_its_clock_ended_since(
        written: datetime, arrived: datetime | None, read: datetime | None,
        applied: datetime, now: datetime) -> None:
    """The days owed are those of the file's own clock (origin, origin + 1 day, ...)
    that ended after the last application and by now: within one of the whole days
    since the later of the two, and exactly those when the origin is the later."""
    origin = decay_origin(written, arrived, read)
    assert origin is not None
    owed = decay_steps(origin, applied, now)
    ends = [origin + k * DECAY_PERIOD
            for k in range(1, max(0, (now - origin) // DECAY_PERIOD) + 1)]
    assert owed == sum(1 for end in ends if applied < end <= now)
    since = max(origin, applied)
    whole = max(0, (now - since) // DECAY_PERIOD)
    assert whole <= owed <= whole + 1 or (now <= since and owed == 0)
    if applied <= origin:
        assert owed == whole


@settings(max_examples=60)
@given(moments, maybe, maybe, moments,
       st.lists(st.integers(0, 86_399), min_size=1, max_size=5, unique=True))
def test_runs_within_a_day_owe_together_what_one_owes(
        written: datetime, arrived: datetime | None, read: datetime | None,
        day: datetime, seconds: list[int]) -> None:
    origin = decay_origin(written, arrived, read)
    assert origin is not None
    start = day.replace(hour=0, minute=0, second=0)
    stamps = [start + timedelta(seconds=s) for s in sorted(seconds)]
    before = start - timedelta(seconds=1)
    many = sum(decay_steps(origin, last, at)
               for last, at in zip([before, *stamps], stamps, strict=False))
    assert many == decay_steps(origin, before, stamps[-1])


@given(st.floats(0, 3_000, allow_nan=False), st.none() | st.floats(0, 3_000, allow_nan=False))
def test_the_grace_period_reads_the_younger_age(created: float,
                                                arrived: float | None) -> None:
    age = grace_age_days(created, arrived)
    assert age == (created if arrived is None else min(created, arrived))
    assert math.isnan(grace_age_days(math.nan, arrived))


def test_a_protected_memory_in_the_evict_band_is_never_archived() -> None:
    weak = score_retention(RetentionInput("semantic", 900.0, 0, 0.2, 0, 0, 0, 0, 1, 0))
    assert weak.band == "evict"
    assert retention_verdict(weak, 900.0) == "archive"
    assert retention_verdict(weak, 900.0, protected=True) == "protected"
    # Young and protected: protected is the reason recorded.
    assert retention_verdict(weak, 1.0, protected=True) == "protected"
    kept = score_retention(RetentionInput("semantic", 1.0, 10, 0.9, 1, 1, 5, 5, 10, 0))
    assert retention_verdict(kept, 900.0, protected=True) == "kept"
    # Imported two years after it was written, yesterday: inside the grace period.
    assert retention_verdict(weak, grace_age_days(730.0, 1.0)) == "graced"
