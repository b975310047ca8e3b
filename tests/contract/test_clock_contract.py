"""The ``Clock`` contract, on the system clock and both test clocks."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from memhtml.adapters.clock import FixedClock, ManualClock, SystemClock
from memhtml.contracts.services import Clock
from tests.contract.git_backends import AT

CLOCKS: dict[str, Callable[[], Clock]] = {
    "system": SystemClock,
    "fixed": lambda: FixedClock(AT),
    "manual": lambda: ManualClock(AT),
}


@pytest.mark.parametrize("make", CLOCKS.values(), ids=list(CLOCKS))
def test_every_clock_tells_an_aware_time_that_a_sleep_never_turns_back(
    make: Callable[[], Clock],
) -> None:
    clock = make()
    before = clock.now()
    assert before.utcoffset() is not None
    clock.sleep(0.001)
    clock.sleep(0)
    assert clock.now() >= before
    with pytest.raises(ValueError, match="non-negative"):
        clock.sleep(-1)


def test_the_system_clock_is_now_in_utc() -> None:
    now = SystemClock().now()
    assert now.utcoffset() == timedelta(0)
    assert abs(now - datetime.now(UTC)) < timedelta(seconds=5)


@pytest.mark.parametrize("make", [FixedClock, ManualClock])
def test_test_clocks_refuse_a_naive_time(make: Callable[[datetime], Clock]) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        make(datetime(2026, 1, 1))


def test_the_fixed_clock_stands_still() -> None:
    clock = FixedClock(AT)
    clock.sleep(0.001)
    assert clock.now() == AT


def test_a_manual_sleep_advances_now_and_is_recorded() -> None:
    clock = ManualClock(AT)
    clock.sleep(0.5)
    clock.sleep(0.25)
    clock.advance(60)
    assert clock.now() == AT + timedelta(seconds=60.75)
    assert clock.sleeps == (0.5, 0.25)
    assert clock.now().tzinfo == AT.tzinfo


def test_a_manual_clock_shared_by_threads_loses_no_sleep() -> None:
    clock = ManualClock(AT)

    def sleeper() -> None:
        for _ in range(200):
            clock.sleep(0.001)

    threads = [threading.Thread(target=sleeper) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(clock.sleeps) == 800
    assert clock.now() - AT == timedelta(seconds=0.8)
