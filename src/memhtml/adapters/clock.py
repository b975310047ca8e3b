"""The two clocks: the system's, and a fixed one for tests and golden commit ids."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime


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
