"""How the arms' rankings combine into one: the fusion rules measured, and the one used.

Each arm hands over its capped list, best first, as ``(path, rank, score)``: BM25 for
the lexical arm, cosine (of the best passage) for the vector arm. A rule turns the
lists into one fused score per path; ``search_head`` orders by it, ties by recency.

Pure and total.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

RRF_K = 60

FusionRule = Literal["rrf", "minmax", "confidence"]


@dataclass(frozen=True, slots=True)
class ArmList:
    """One arm's capped ranking: its name, its weight, and ``(path, rank, score)``
    best first (ranks shared by equal scores)."""

    name: str
    weight: float
    ranked: Sequence[tuple[str, int, float]]


def _rrf_shares(arm: ArmList, k: int = RRF_K) -> dict[str, float]:
    return {path: arm.weight / (k + rank) for path, rank, _score in arm.ranked}


def _minmax(ranked: Sequence[tuple[str, int, float]]) -> dict[str, float]:
    """Each score mapped onto [0, 1] by the list's own best and worst; 1 for every
    entry of a list whose scores are all equal."""
    if not ranked:
        return {}
    scores = [score for _, _, score in ranked]
    high, low = max(scores), min(scores)
    span = high - low
    return {path: (score - low) / span if span > 0 else 1.0 for path, _, score in ranked}


def _minmax_shares(arm: ArmList) -> dict[str, float]:
    return {path: arm.weight * value for path, value in _minmax(arm.ranked).items()}


CONFIDENCE_DEPTH = 10
"""The depth a list's margin is read at."""


def margin(ranked: Sequence[tuple[str, int, float]], depth: int = CONFIDENCE_DEPTH) -> float:
    """How far an arm's best stands above its ``depth``-th, relative to the spread of
    its whole list: 1 when the best is as far above the ``depth``-th as the list
    reaches, 0 when the first ``depth`` are tied. A confident arm has a clear head."""
    if len(ranked) < 2:
        return 0.0
    scores = [score for _, _, score in ranked]
    top, low = scores[0], scores[-1]
    at = scores[min(depth, len(scores)) - 1]
    span = top - low
    return (top - at) / span if span > 0 else 0.0


def _confidence_shares(arm: ArmList) -> dict[str, float]:
    """Reciprocal-rank shares with the arm's weight scaled by its margin on this
    query: an arm whose head stands out counts for more."""
    return _rrf_shares(ArmList(arm.name, arm.weight * (0.5 + margin(arm.ranked)), arm.ranked))


def shares(arm: ArmList, rule: FusionRule = "rrf") -> dict[str, float]:
    """What ``arm`` adds to each path's fused score under ``rule``."""
    if rule == "minmax":
        return _minmax_shares(arm)
    if rule == "confidence":
        return _confidence_shares(arm)
    return _rrf_shares(arm)


def fuse(arms: Sequence[ArmList], rule: FusionRule = "rrf") -> dict[str, float]:
    """The fused score of every path any arm ranked: the sum of its arms' shares,
    added in arm order."""
    fused: dict[str, float] = {}
    for arm in arms:
        for path, share in shares(arm, rule).items():
            fused[path] = fused.get(path, 0.0) + share
    return fused


def rrf(arms: Sequence[ArmList]) -> dict[str, float]:
    """Reciprocal-rank fusion: each arm adds ``weight / (RRF_K + rank)``."""
    return fuse(arms, "rrf")


def minmax(arms: Sequence[ArmList]) -> dict[str, float]:
    """Weighted sum of min-max normalized scores (CombSUM): each arm's scores are
    mapped onto [0, 1] by its own capped list's best and worst, so BM25 and cosine meet
    on one scale; a path an arm did not rank gets nothing from it."""
    return fuse(arms, "minmax")


def confidence(arms: Sequence[ArmList]) -> dict[str, float]:
    """Reciprocal-rank fusion, each arm's weight scaled by ``0.5 + margin``."""
    return fuse(arms, "confidence")


def finite_weight(weight: float, default: float) -> float:
    """``weight`` when it is a finite number 0 or more, else ``default``."""
    return weight if math.isfinite(weight) and weight >= 0 else default
