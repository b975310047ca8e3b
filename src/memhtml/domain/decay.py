"""Confidence decay for memories nothing reinforced since the last run.

The arithmetic runs on an integer grid of 1/10,000. Every claim made about
decay is a boundary claim (it stops at the floor, ``alpha=0`` is a fixed point,
it never raises a value) and in floats a convex combination of two equal
numbers can land one ulp below both; on the grid those hold exactly, so the
tests assert equality.

A file stores its confidence at two decimals, and the night's step is taken from
what the file holds. Rounding each step to the nearest hundredth stalls short of
the floor: once a tenth of the remaining distance is under half a hundredth, the
stored value rounds back to itself (from 0.90 it stops at 0.24 for good after 25
nights). So the stored step rounds toward the floor instead (``decayed_stored``):
every night moves an unreinforced file down at least one hundredth until it sits
exactly on the floor, and no night takes it past.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from memhtml.domain.thresholds import CONFIDENCE_COMMIT_DELTA

SCALE: Final = 10_000
"""Grid points per unit: the fourth decimal place, the grain decay computes at."""

STORED_STEP_FP: Final = 100
"""The stored grain on the grid: the format keeps confidence at two decimals."""

CONFIDENCE_FLOOR: Final = 0.2
"""Where decay comes to rest. An old, uncorroborated claim is weak evidence, not no
evidence; at 0 it would read like a retracted one."""

CONFIDENCE_DECAY_ALPHA: Final = 0.1
"""Fraction of the remaining distance to the floor closed per run: erosion over many
unreinforced nights rather than a collapse after one missed reinforcement."""

COMMIT_DELTA_FP: Final = round(CONFIDENCE_COMMIT_DELTA * SCALE)
"""The commit delta on the grid (50), so exactly 0.005 commits with no float doubt."""


def to_fp(value: float) -> int:
    """A value onto the grid, rounded to the nearest point."""
    return round(value * SCALE)


def from_fp(value_fp: int) -> float:
    """A grid value back to a float."""
    return value_fp / SCALE


def ewma_step_fp(alpha_fp: int, prev_fp: int, signal_fp: int) -> int:
    """``alpha*signal + (1-alpha)*prev`` with floor division.

    Floor is the one rounding whose repeated application needs no rounding-mode
    argument to reproduce, and its drift against exact arithmetic stays under
    one grid step per fold.
    """
    return (alpha_fp * signal_fp + (SCALE - alpha_fp) * prev_fp) // SCALE


def decay_confidence_fp(alpha_fp: int, conf_fp: int, floor_fp: int) -> int:
    """One decay step toward the floor, never upward.

    The ``min`` matters for a claim already below the floor (a correction pushed
    it there): the same step that erodes a healthy claim would otherwise lift a
    discredited one back up.
    """
    return min(conf_fp, ewma_step_fp(alpha_fp, conf_fp, floor_fp))


def decay_confidence(
    confidence: float,
    cycles: int = 1,
    alpha: float = CONFIDENCE_DECAY_ALPHA,
    floor: float = CONFIDENCE_FLOOR,
) -> float:
    """``confidence`` after ``cycles`` unreinforced runs; ``cycles <= 0`` changes nothing."""
    alpha_fp = min(SCALE, max(0, to_fp(alpha)))
    floor_fp = to_fp(floor)
    value = to_fp(confidence)
    for _ in range(max(0, cycles)):
        stepped = decay_confidence_fp(alpha_fp, value, floor_fp)
        if stepped == value:
            break
        value = stepped
    return from_fp(value)


def is_committable_change(before: float, after: float) -> bool:
    """True when the change is at least ``CONFIDENCE_COMMIT_DELTA``.

    Decay restamps a meta line in every eligible file, the widest commit of a
    run; a change below the delta is left unwritten so the diff stays readable.
    Compared on the grid so the boundary is exact.
    """
    return abs(to_fp(before) - to_fp(after)) >= COMMIT_DELTA_FP


def decayed_stored(
    confidence: float,
    alpha: float = CONFIDENCE_DECAY_ALPHA,
    floor: float = CONFIDENCE_FLOOR,
) -> float | None:
    """The two-decimal confidence one unreinforced night leaves a file with, or
    ``None`` when the file is not to be rewritten.

    The decayed value is rounded down to the stored grain, but never below the
    floor; a value at or below the floor is left alone (decay never lifts one, and a
    claim a correction pushed under the floor stays where it was put). ``None`` also
    when the change is below ``CONFIDENCE_COMMIT_DELTA``, which on the two-decimal
    grid only a value stored off the grid can meet.
    """
    alpha_fp = min(SCALE, max(0, to_fp(alpha)))
    floor_fp = to_fp(floor)
    before_fp = to_fp(confidence)
    if before_fp <= floor_fp:
        return None
    stepped = decay_confidence_fp(alpha_fp, before_fp, floor_fp)
    after_fp = max(floor_fp, stepped // STORED_STEP_FP * STORED_STEP_FP)
    after = from_fp(after_fp)
    if after_fp >= before_fp or not is_committable_change(confidence, after):
        return None
    return after


@dataclass(frozen=True, slots=True)
class ConfidenceRewrite:
    """One file's confidence to rewrite: from what it holds to the decayed value."""

    path: str
    before: float
    after: float


def plan_decay(confidences: Mapping[str, float], cycles: int = 1) -> tuple[ConfidenceRewrite, ...]:
    """The rewrites one run commits, sorted by path, as the files will store them:
    ``cycles`` nights of ``decayed_stored``, each taken from the stored value.
    A file no night changes is omitted."""
    rewrites = []
    for path, before in sorted(confidences.items()):
        after = before
        for _ in range(max(0, cycles)):
            stepped = decayed_stored(after)
            if stepped is None:
                break
            after = stepped
        if after != before:
            rewrites.append(ConfidenceRewrite(path, before, after))
    return tuple(rewrites)
