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

Decay is counted in time, not in runs: one step per whole ``DECAY_PERIOD`` (a day)
that the file spent in the store with nothing reinforcing it (``decay_steps``, from
``decay_origin``). The periods are whole periods of
the file's own grid (its clock's origin, plus one day, plus two, ...), and a run owes
only those that ended since the last run that applied decay. Counted so, the steps of
successive runs telescope: runs at any instants owe, together, exactly the periods
from the first to the last, so three runs in a day decay a file as much as one, and
each step is the same stored step from the same stored value, so the file ends on the
very same two-decimal confidence. Counting runs instead decayed a store curated three
times a day three times as fast as one curated daily.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
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

DECAY_PERIOD: Final = timedelta(days=1)
"""The time one decay step stands for. ``CONFIDENCE_DECAY_ALPHA`` was set as a night's
step for a store curated nightly; a day keeps that pace whatever the cadence."""

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


def periods_between(origin: datetime, until: datetime) -> int:
    """Whole ``DECAY_PERIOD``s from ``origin`` to ``until``; 0 when ``until`` is not
    later. Exact: ``timedelta`` floor division works on whole microseconds."""
    if until <= origin:
        return 0
    return (until - origin) // DECAY_PERIOD


def decay_origin(created: datetime | None, arrived: datetime | None,
                 read: datetime | None) -> datetime | None:
    """Where a file's decay clock starts: the latest of when it was written
    (``created``), when it came onto the store's branch (``arrived``) and its last read.

    Decay models time a memory spends in the store unreinforced. A note written two
    years before it was imported spent those years where nothing could read or
    corroborate it, so they are not owed: counting from ``created`` alone decayed every
    imported file by its whole age on its first night. ``None`` when ``created``
    cannot be read: then nothing is owed, as an unknown age must never be what lowers
    a claim. An unknown arrival or read just does not move the origin.
    """
    if created is None:
        return None
    return max(t for t in (created, arrived, read) if t is not None)


def decay_steps(origin: datetime, applied_at: datetime | None, now: datetime) -> int:
    """The steps a run at ``now`` owes a file whose decay clock started at ``origin``
    (``decay_origin``: its creation, its arrival in the store, or the last thing that
    reinforced it, whichever is latest), when decay was last applied
    by a run at ``applied_at`` (None: never).

    The file owes the whole periods of its own grid that end after ``applied_at`` and
    no later than ``now``: ``periods(origin, now) - periods(origin, applied_at)``. So
    for runs at t0 < t1 < ... < tn, each applying since the one before, the steps sum
    to ``periods(origin, tn) - periods(origin, t0)``, what one run at tn owes since t0.
    A run stamped before the last application owes nothing (never a negative step).
    """
    done = 0 if applied_at is None else periods_between(origin, applied_at)
    return max(0, periods_between(origin, now) - done)


def stored_after(confidence: float, steps: int,
                 alpha: float = CONFIDENCE_DECAY_ALPHA,
                 floor: float = CONFIDENCE_FLOOR) -> float | None:
    """The two-decimal confidence ``steps`` periods of decay leave a file with, each
    step ``decayed_stored`` from the value the step before stored; ``None`` when no
    step changes it (no steps owed, at or below the floor, or a change below the
    commit delta). Stepping from the stored value is what makes ``k`` then ``m``
    steps land exactly where ``k + m`` do."""
    value = confidence
    changed = False
    for _ in range(max(0, steps)):
        stepped = decayed_stored(value, alpha, floor)
        if stepped is None:
            break
        value = stepped
        changed = True
    return value if changed else None


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
        after = stored_after(before, cycles)
        if after is not None and after != before:
            rewrites.append(ConfidenceRewrite(path, before, after))
    return tuple(rewrites)
