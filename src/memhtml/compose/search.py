"""One search for both edges: the lexical arm always, the vector arm when it covers.

The CLI's ``search`` and the MCP server's ``memory_search`` both call
``search_memories``, so a store configured for hybrid search is searched the same
way through either door.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from returns.io import IOResult

if TYPE_CHECKING:
    from memhtml.compose.services import Services
    from memhtml.compose.vectors import Arm
    from memhtml.head import HeadVersion, SearchHit
    from memhtml.store import Store, StoreError


NO_EMBEDDER = "no embedder configured (memhtml embed --embedder hashing|local|openai)"


@dataclass(frozen=True, slots=True)
class ArmRun:
    """One arm of a search: whether it ran, what scored with it (``bm25``, or the
    embedder's name), and why not when it did not."""

    arm: Literal["lexical", "vector"]
    ran: bool
    by: str
    reason: str | None = None


@dataclass(frozen=True)
class Searched:
    """Hits, best first, with how they were found."""

    hits: list[SearchHit]
    mode: Literal["lexical", "hybrid"]
    commit: str | None
    note: str | None = None
    """Why search stayed lexical when an embedder is configured, for a person to read."""
    arms: tuple[ArmRun, ...] = ()
    """Every arm, run or not: the lexical one always, the vector one with its embedder
    or the reason it sat out (no embedder configured, vectors that do not cover)."""


def arms_of(embedder: str, hybrid: bool, note: str | None) -> tuple[ArmRun, ...]:
    """The arms a search ran with embedder ``embedder`` configured (``none``: none)."""
    if hybrid:
        vector = ArmRun("vector", True, embedder)
    elif embedder == "none":
        vector = ArmRun("vector", False, embedder, NO_EMBEDDER)
    else:
        vector = ArmRun("vector", False, embedder, note)
    return ArmRun("lexical", True, "bm25"), vector


def vector_weight_of(text: str) -> tuple[float, str | None]:
    """The ``vector_weight`` setting as a number, or the spec's 1 and why: the setting
    may come from a store's committed config, so a bad value is told, not fatal."""
    from memhtml.head import VECTOR_WEIGHT

    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if math.isfinite(value) and value >= 0:
        return value, None
    return VECTOR_WEIGHT, (f"vector_weight {text!r} is not a number 0 or more; the "
                           "hybrid fused with weight 1")


def _joined(*notes: str | None) -> str | None:
    present = [note for note in notes if note]
    return "; ".join(present) if present else None


def search_memories(
    services: Services,
    store: Store,
    query: str,
    *,
    at: str | None = None,
    types: Sequence[str] = (),
    entities: Sequence[str] = (),
    tags: Sequence[str] = (),
    prefix: str | None = None,
    limit: int = 10,
) -> IOResult[Searched, StoreError]:
    """Search ``store`` (at its tip, or at ``at``), hybrid when the vector arm covers."""
    from memhtml.store import search
    from memhtml.store.reads import version_of

    weight, weight_note = vector_weight_of(services.settings.vector_weight)

    def ranked(version: HeadVersion) -> IOResult[Searched, StoreError]:
        arm: IOResult[Arm, StoreError] = services.vector_arm(version, query)
        return arm.bind(lambda chosen: search(
            store, query, at=at, types=types, entities=entities, tags=tags, prefix=prefix,
            limit=limit, vectors=chosen.hybrid.cache if chosen.hybrid else None,
            query_vector=chosen.hybrid.query_vector if chosen.hybrid else None,
            vector_weight=weight,
        ).map(lambda hits: Searched(
            hits, "hybrid" if chosen.hybrid else "lexical", version.sha,
            _joined(chosen.note, weight_note if chosen.hybrid else None),
            arms_of(services.embedder_name, chosen.hybrid is not None, chosen.note))))

    return version_of(store, at).bind(ranked)
