"""The retention scorer: eight normalized signals, one weight profile per memory type.

Retention triage archives what scores in the evict band, so the score has to be
a function of the corpus alone and has to stay inside [0, 1] whatever a row
holds. Both follow from the construction: every signal is clamped to [0, 1]
before weighting, and every profile is a convex combination (non-negative
weights whose exact sum is 1.0), so the composite cannot leave the unit
interval.

The eight signals, and why each is there:

``recency``
    Exponential decay of age over the type's half-life. Time is what makes an
    episode stale. A type with no half-life (procedural, task) reads the neutral
    ``NEUTRAL_RECENCY`` at every age: age says nothing about it, which is neither
    "fresh" nor "stale", and a signal it cannot earn must not sit at the floor.
``access_frequency``
    How often a reader actually retrieved the memory. Use is the most direct
    evidence that a memory still earns its place. Saturates at 10 reads.
``confidence``
    The stored (already decayed) confidence. An unreinforced, uncertain claim
    is the cheapest one to lose.
``pagerank``
    Graph centrality relative to the run's most central memory. A memory many
    others lean on is structural even when nobody reads it directly.
``bridge_importance``
    Edges that cross between two communities. A bridge is the only path
    between two clusters of knowledge, so evicting it disconnects them even
    when its own rank is modest. Saturates at 5 bridges.
``reinforcement``
    Inbound ``supports`` edges: how many other memories corroborate this one.
    Saturates at 5.
``importance``
    The author's own 1-10 statement of how much the memory matters, divided by
    10 as the format defines it; a file that states none takes the documented
    default of 5, so 0.5. Every other signal is inferred from behavior or
    structure, and this one records intent: a memory can be rarely read and
    thinly linked and still be one its author marked as essential.
``contested_status``
    Inverted count of authored contradictions: a memory contradicted three
    times scores 0 here. Only human- or agent-authored contradictions count, so
    a machine's suspicion can never push a memory out.

Importance also leads the reprieve score (see ``reprieve``). The two decide
different questions: retention asks whether a live memory keeps its place,
reprieve asks whether one whose validity has lapsed earns more time. Each
score reads the number once, for its own decision, so neither counts it twice.

Content length was considered and left out. A body's word count says how much
was written, not how much it is worth, so weighting it would favor the
long-winded memory over a terse one that says the same thing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal, TypeAlias, get_args

from returns.result import Failure, Result, Success

from memhtml.contracts.vocabulary import MEMORY_TYPES, MemoryType
from memhtml.domain.errors import InvalidProfile
from memhtml.domain.thresholds import EVICT_THRESHOLD, KEEP_THRESHOLD, RETENTION_GRACE_DAYS

SignalName: TypeAlias = Literal[
    "recency",
    "access_frequency",
    "confidence",
    "pagerank",
    "bridge_importance",
    "reinforcement",
    "importance",
    "contested_status",
]
SIGNAL_NAMES: Final[tuple[SignalName, ...]] = get_args(SignalName)

Band: TypeAlias = Literal["keep", "compress", "evict"]
BANDS: Final[tuple[Band, ...]] = ("keep", "compress", "evict")

LN2: Final = math.log(2)
"""The decay constant. With it ``recency(half_life) == 0.5`` holds exactly, so the
half-life *is* the curve's definition and a test asserts equality, not closeness."""

SCORE_PRECISION: Final = 4
"""Decimal places of the composite, so a last-bit float difference cannot move a band."""

ACCESS_SATURATION: Final = 10
BRIDGE_SATURATION: Final = 5
REINFORCEMENT_SATURATION: Final = 5
CONTESTED_SATURATION: Final = 3
IMPORTANCE_SCALE: Final = 10
"""The format's divisor: ``importance`` is a 1-10 ordinal and the scorer reads it over 10."""
DEFAULT_IMPORTANCE: Final = 5
"""The documented importance of a file that states none."""


@dataclass(frozen=True, slots=True)
class SignalVector:
    """One float per signal, in ``SIGNAL_NAMES`` order: the shape shared by a memory's
    signals and a profile's weights, so the two can never disagree on the order."""

    recency: float
    access_frequency: float
    confidence: float
    pagerank: float
    bridge_importance: float
    reinforcement: float
    importance: float
    contested_status: float

    def values(self) -> tuple[float, ...]:
        """The eight floats in ``SIGNAL_NAMES`` order."""
        return tuple(getattr(self, name) for name in SIGNAL_NAMES)


@dataclass(frozen=True, slots=True)
class Signals(SignalVector):
    """One value per signal, each unitless in [0, 1]."""


@dataclass(frozen=True, slots=True)
class WeightProfile(SignalVector):
    """One coefficient per signal. Shipped profiles sum to exactly 1.0 under ``math.fsum``."""


def profile_weight_sum(profile: WeightProfile) -> float:
    """The exact-then-rounded sum of a profile's weights; 1.0 for every shipped profile."""
    return math.fsum(profile.values())


def weight_profile(weights: Mapping[str, float]) -> Result[WeightProfile, InvalidProfile]:
    """Build a profile from a name-to-weight map, refusing one that is not convex."""
    names = set(weights)
    expected = set(SIGNAL_NAMES)
    if names != expected:
        missing = sorted(expected - names)
        extra = sorted(names - expected)
        return Failure(InvalidProfile(f"signals missing {missing}, unknown {extra}"))
    for name in SIGNAL_NAMES:
        weight = weights[name]
        if not (math.isfinite(weight) and 0.0 <= weight <= 1.0):
            return Failure(InvalidProfile(f"weight of {name} is {weight!r}, not in [0, 1]"))
    profile = WeightProfile(**{name: float(weights[name]) for name in SIGNAL_NAMES})
    total = profile_weight_sum(profile)
    if total != 1.0:
        return Failure(InvalidProfile(f"weights sum to {total!r}, not exactly 1.0"))
    return Success(profile)


DEFAULT_WEIGHTS: Final = WeightProfile(
    recency=0.15,
    access_frequency=0.15,
    confidence=0.15,
    pagerank=0.15,
    bridge_importance=0.1,
    reinforcement=0.1,
    importance=0.1,
    contested_status=0.1,
)
"""The profile of every type without a dedicated one: no signal dominates."""

# Positional weights follow ``SIGNAL_NAMES`` order.
_DEDICATED_PROFILES: Final[Mapping[MemoryType, WeightProfile]] = {
    # An episode is defined by when it happened, so recency leads.
    "episodic": WeightProfile(0.25, 0.15, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1),
    # A fact's worth is how much else rests on it and how sure it is, not its age.
    "semantic": WeightProfile(0.05, 0.15, 0.2, 0.2, 0.15, 0.1, 0.1, 0.05),
    # A procedure that still works does not go stale: use and corroboration lead, and
    # recency carries a small weight over its neutral value. At weight 0 the share
    # went to signals a memory written minutes ago cannot have (reads, supports), and
    # a fresh procedure scored exactly the evict band's edge, 0.30.
    "procedural": WeightProfile(0.1, 0.2, 0.15, 0.1, 0.05, 0.2, 0.1, 0.1),
    # An arc is a synthesis: its links and its support are what it is for.
    "arc": WeightProfile(0.1, 0.1, 0.15, 0.15, 0.15, 0.15, 0.1, 0.1),
    # A failure pattern matters while it recurs, and a contested one misleads.
    "error_pattern": WeightProfile(0.2, 0.15, 0.1, 0.05, 0.05, 0.2, 0.1, 0.15),
}

WEIGHT_PROFILES: Final[Mapping[MemoryType, WeightProfile]] = MappingProxyType(
    {kind: _DEDICATED_PROFILES.get(kind, DEFAULT_WEIGHTS) for kind in MEMORY_TYPES}
)
"""Total over the ten memory types, so a new type cannot be scored without a profile."""

DEFAULT_HALF_LIFE_DAYS: Final = 30.0

_DEDICATED_HALF_LIVES: Final[Mapping[MemoryType, float | None]] = {
    "episodic": 10.0,
    "semantic": 90.0,
    # A working procedure does not go stale with age.
    "procedural": None,
    "arc": 30.0,
    "error_pattern": 14.0,
    # Age is actively misleading about intended work: the untouched task is the
    # one most likely still owed. Tasks are excluded before scoring; this entry
    # keeps the answer right should one ever be scored.
    "task": None,
}

HALF_LIVES_DAYS: Final[Mapping[MemoryType, float | None]] = MappingProxyType(
    {kind: _DEDICATED_HALF_LIVES.get(kind, DEFAULT_HALF_LIFE_DAYS) for kind in MEMORY_TYPES}
)
"""Recency half-life in days per type; ``None`` means age never lowers the score."""

NEUTRAL_RECENCY: Final = 0.5
"""The recency of a type with no half-life, at any age: the curve's value at one
half-life, its midpoint. Age says nothing about such a memory, so the signal neither
lifts it as fresh (1) nor sinks it as stale (0); 0 would read "as old as can be" for
a memory written a minute ago."""


@dataclass(frozen=True, slots=True)
class RetentionInput:
    """The raw per-memory facts the phase gathers; normalization happens only here.

    Counts are lifetime quantities; ``graph_rank`` and ``max_graph_rank`` come
    from the same PageRank run, so the ratio is relative to this corpus.
    ``contradiction_count`` counts authored contradictions only. ``importance``
    is the authored 1-10 ordinal as the file states it; ``None`` means it
    states none and ``DEFAULT_IMPORTANCE`` applies.
    """

    memory_type: MemoryType
    age_days: float
    access_count: float
    confidence: float
    graph_rank: float
    max_graph_rank: float
    bridge_count: float
    reinforcement_count: float
    importance: float | None
    contradiction_count: float


@dataclass(frozen=True, slots=True)
class RetentionScore:
    """The composite, its band, and the signals behind it."""

    score: float
    band: Band
    signals: Signals


def _unit(value: float) -> float:
    # A NaN reaching the scorer is an unknown, and an unknown contributes nothing.
    if math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, value))


def _nonneg(value: float) -> float:
    return 0.0 if math.isnan(value) else max(0.0, value)


def weights_for(memory_type: MemoryType) -> WeightProfile:
    """The weight profile a memory type is scored under."""
    return WEIGHT_PROFILES[memory_type]


def half_life_for(memory_type: MemoryType) -> float | None:
    """The recency half-life in days; ``None`` when age does not decay the type."""
    return HALF_LIVES_DAYS[memory_type]


def recency_signal(memory_type: MemoryType, age_days: float) -> float:
    """``exp(-ln2 * age / half_life)``: exactly 0.5 at one half-life, 0.25 at two;
    ``NEUTRAL_RECENCY`` at every age for a type with no half-life."""
    half_life = half_life_for(memory_type)
    if half_life is None:
        return NEUTRAL_RECENCY
    if age_days <= 0.0:
        return 1.0
    # The ratio first, so age == half_life gives exactly 1.0 and the curve exactly 0.5.
    return _unit(math.exp(-LN2 * (age_days / half_life)))


def compute_signals(raw: RetentionInput) -> Signals:
    """Normalize the raw inputs to eight values in [0, 1]."""
    importance = DEFAULT_IMPORTANCE if raw.importance is None else raw.importance
    max_rank = _nonneg(raw.max_graph_rank)
    return Signals(
        recency=recency_signal(raw.memory_type, raw.age_days),
        access_frequency=_unit(_nonneg(raw.access_count) / ACCESS_SATURATION),
        confidence=_unit(raw.confidence),
        pagerank=_unit(_nonneg(raw.graph_rank) / max_rank) if max_rank > 0.0 else 0.0,
        bridge_importance=_unit(_nonneg(raw.bridge_count) / BRIDGE_SATURATION),
        reinforcement=_unit(_nonneg(raw.reinforcement_count) / REINFORCEMENT_SATURATION),
        importance=_unit(importance / IMPORTANCE_SCALE),
        contested_status=1.0 - _unit(_nonneg(raw.contradiction_count) / CONTESTED_SATURATION),
    )


def composite_score(signals: Signals, profile: WeightProfile) -> float:
    """The weighted sum, rounded half-up to ``SCORE_PRECISION`` places.

    Each product is at most its weight and ``fsum`` rounds the exact sum once,
    so the result is at most the profile's sum, which is 1.0.
    """
    total = math.fsum(s * w for s, w in zip(signals.values(), profile.values(), strict=True))
    scale = 10**SCORE_PRECISION
    return math.floor(total * scale + 0.5) / scale


def band_for(score: float) -> Band:
    """Keep above 0.7, evict at or below 0.3, compress between: boundaries go down."""
    if score > KEEP_THRESHOLD:
        return "keep"
    if score > EVICT_THRESHOLD:
        return "compress"
    return "evict"


def score_retention(raw: RetentionInput) -> RetentionScore:
    """Normalize, weight by the type's profile, and band one memory."""
    signals = compute_signals(raw)
    score = composite_score(signals, weights_for(raw.memory_type))
    return RetentionScore(score=score, band=band_for(score), signals=signals)


Verdict: TypeAlias = Literal["archive", "graced", "protected", "kept"]
"""What retention-triage does with a scored memory: archive it (the evict band, past
the grace period), leave it because it is young (``graced``: in the evict band, inside
the grace period), leave it because it is of a protected kind (``protected``: in the
evict band, but a person's file, which other memories link to by name), or leave it
because it scored above the band (``kept``)."""


def grace_age_days(created_age_days: float, arrived_age_days: float | None = None) -> float:
    """The age the grace period reads: days since the later of the memory's creation
    and its arrival in the store (``arrived_age_days``; None when not known, and then
    the creation alone). A note written two years ago and imported today is a day old
    here: it has had no more time than a fresh one to be read, linked or corroborated.
    NaN (inside any grace period) when the creation cannot be read."""
    if math.isnan(created_age_days):
        return math.nan
    if arrived_age_days is None or math.isnan(arrived_age_days):
        return created_age_days
    return min(created_age_days, arrived_age_days)


def in_grace(created_age_days: float, grace_days: float = RETENTION_GRACE_DAYS) -> bool:
    """Whether a memory ``created_age_days`` old (``grace_age_days``) is inside the
    grace period.

    An age that cannot be read (NaN) or lies in the future (a clock ahead of the
    run's) is inside it: an unknown age must never be what archives a memory.
    """
    return not created_age_days >= grace_days


def retention_verdict(scored: RetentionScore, created_age_days: float,
                      grace_days: float = RETENTION_GRACE_DAYS,
                      protected: bool = False) -> Verdict:
    """The evict band archives, except a memory of a protected kind or one younger
    than the grace period (``created_age_days``, as ``grace_age_days`` reads it).

    The score is left as it is (the record of why shows the band such a memory sits
    in); only the action is withheld.
    """
    if scored.band != "evict":
        return "kept"
    if protected:
        return "protected"
    return "graced" if in_grace(created_age_days, grace_days) else "archive"
