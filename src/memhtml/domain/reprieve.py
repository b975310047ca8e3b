"""The reprieve gate: a memory whose validity has lapsed may earn more time.

A lapsed ``memhtml-valid-until`` would otherwise archive a memory on age alone.
The reprieve score asks whether the memory still matters (authored importance,
use, good outcomes, recent use); clearing the floor extends validity by
``REPRIEVE_DAYS``, and the cap means age wins in the end.

Authored importance is also one of the retention signals (see ``retention``).
The two scores decide different questions, whether a live memory keeps its
place and whether a lapsed one earns more time, so each reads it for its own
decision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from memhtml.domain.thresholds import MAX_REPRIEVES, REPRIEVE_DAYS, REPRIEVE_FLOOR

SALIENCE_DECAY_RATE: Final = 0.01
"""Per hour: the recency term halves after about 69 hours without access."""

REPRIEVE_W_IMPORTANCE: Final = 0.4
REPRIEVE_W_ACCESS: Final = 0.3
REPRIEVE_W_OUTCOME: Final = 0.2
REPRIEVE_W_RECENCY: Final = 0.1


@dataclass(frozen=True, slots=True)
class ReprieveInput:
    """What the reprieve score reads.

    ``importance`` is the authored 1-10 ordinal (clamped); ``outcome_score`` is
    in [-1, 1]; ``hours_since_access`` is fractional hours.
    """

    importance: float
    access_count: float
    outcome_score: float
    hours_since_access: float
    decay_rate: float = SALIENCE_DECAY_RATE


def _finite_or(value: float, fallback: float) -> float:
    return value if math.isfinite(value) else fallback


def reprieve_score(raw: ReprieveInput) -> float:
    """Four non-negative terms, monotone in each input.

    Not confined to [0, 1]: the access term is ``log1p`` and unbounded, so the
    score ranks but is not a probability. A negative outcome contributes 0 rather
    than a penalty, because the outcome average already lowered the memory once.
    """
    importance = min(10.0, max(1.0, _finite_or(raw.importance, 1.0))) / 10.0
    access = math.log1p(max(0.0, _finite_or(raw.access_count, 0.0)))
    outcome = max(0.0, min(1.0, _finite_or(raw.outcome_score, 0.0)))
    hours = max(0.0, _finite_or(raw.hours_since_access, math.inf))
    recency = math.exp(-max(0.0, raw.decay_rate) * hours) if math.isfinite(hours) else 0.0
    return (
        REPRIEVE_W_IMPORTANCE * importance
        + REPRIEVE_W_ACCESS * access
        + REPRIEVE_W_OUTCOME * outcome
        + REPRIEVE_W_RECENCY * recency
    )


def should_reprieve(
    score: float,
    reprieves_so_far: int,
    floor: float = REPRIEVE_FLOOR,
    max_reprieves: int = MAX_REPRIEVES,
) -> bool:
    """Reprieve iff the score clears the floor and the memory is under the cap.

    ``max_reprieves=0`` restores pure-age expiry: the score is always positive,
    so the floor alone could never force it.
    """
    return score >= floor and reprieves_so_far < max_reprieves


def reprieved_until(valid_until: datetime, days: int = REPRIEVE_DAYS) -> datetime:
    """The extended validity bound a reprieve writes."""
    return valid_until + timedelta(days=days)
