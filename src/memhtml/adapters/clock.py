"""The clocks: the system's, a fixed one for golden commit ids, and a manual one for tests."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta


@dataclass(frozen=True, slots=True)
class SystemClock:
    """Now, in UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


@dataclass(frozen=True, slots=True)
class FixedClock:
    """Always ``at``: commits made through it get the same ids on every run."""

    at: datetime

    def __post_init__(self) -> None:
        # A naive time would be read in the host's zone and break commit-id determinism.
        if self.at.utcoffset() is None:
            raise ValueError("FixedClock needs a timezone-aware datetime")

    def now(self) -> datetime:
        return self.at

    def sleep(self, seconds: float) -> None:
        # Real waiting: a fixed stamp pins commit ids, but processes racing for a
        # ref still need the back-off to spread out.
        time.sleep(seconds)


class ManualClock:
    """A test clock: ``sleep`` advances ``now`` instead of waiting, and is recorded.

    Mutable on purpose, being a test double: a retry loop's back-off runs through it
    with no real time passing, and ``sleeps`` shows what was asked for. A lock keeps
    it consistent when threads share it.
    """

    def __init__(self, start: datetime) -> None:
        # Naive times would be read in the host's zone, as FixedClock refuses them too.
        if start.utcoffset() is None:
            raise ValueError("ManualClock needs a timezone-aware datetime")
        self._now = start
        self._sleeps: list[float] = []
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def sleep(self, seconds: float) -> None:
        # time.sleep refuses a negative wait; so does this, or a bad back-off would pass.
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        with self._lock:
            self._sleeps.append(seconds)
            self._now += timedelta(seconds=seconds)

    def advance(self, seconds: float) -> None:
        """Move ``now`` on by hand, as if time passed outside any sleep (not recorded)."""
        with self._lock:
            self._now += timedelta(seconds=seconds)

    @property
    def sleeps(self) -> tuple[float, ...]:
        """Every ``sleep`` asked for, in order."""
        with self._lock:
            return tuple(self._sleeps)
