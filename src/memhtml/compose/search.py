"""One search for both edges: the lexical arm always, the vector arm when it covers.

The CLI's ``search`` and the MCP server's ``memory_search`` both call
``search_memories``, so a store configured for hybrid search is searched the same
way through either door.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from returns.io import IOResult
from returns.result import Failure, Success

from memhtml.head.when import holds_of

if TYPE_CHECKING:
    from memhtml.compose.services import Services
    from memhtml.compose.vectors import Arm
    from memhtml.head import HeadVersion, SearchHit
    from memhtml.store import Store, StoreError


NO_EMBEDDER = "no embedder configured (memhtml embed --embedder local)"
"""The hint names the local model alone: the hashing embedder matches words BM25 already
matches, and fused with it the hybrid falls below lexical (docs/benchmarks.md)."""


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
    when: When | None = None
    """The span of time the query named and the moment ``as_of`` searched at."""


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


@dataclass(frozen=True, slots=True)
class When:
    """What a search understood about time, for the answer: the span it read (and
    from which words), and the moment ``as_of`` searched at."""

    phrase: str | None = None
    start: str | None = None
    end: str | None = None
    as_of: str | None = None


def search_memories(
    services: Services,
    store: Store,
    query: str,
    *,
    at: str | None = None,
    as_of: str | None = None,
    types: Sequence[str] = (),
    entities: Sequence[str] = (),
    tags: Sequence[str] = (),
    prefix: str | None = None,
    limit: int = 10,
) -> IOResult[Searched, StoreError]:
    """Search ``store`` (at its tip, at ``at``, or as it held at ``as_of``), hybrid
    when the vector arm covers; a time the query names moves the memories of that
    time ahead (``head.when``)."""
    from returns.io import IOFailure, IOSuccess

    from memhtml.head.timed import candidates, in_time, placed
    from memhtml.head.when import read_time
    from memhtml.store import Refused, search
    from memhtml.store.as_of import as_of_moment, commit_as_of
    from memhtml.store.reads import SearchScope, version_of

    weight, weight_note = vector_weight_of(services.settings.vector_weight)
    asked = read_time(query, store.deps.clock.now())

    def ranked(version: HeadVersion, rev: str | None, moment: str | None
               ) -> IOResult[Searched, StoreError]:
        where = placed(version, asked)
        scope = SearchScope.of(types, entities, tags, prefix, moment)
        arm: IOResult[Arm, StoreError] = services.vector_arm(version, query)

        def timed(hits: list[SearchHit]) -> list[SearchHit]:
            return [held(hit) for hit in in_time(version, hits, query, where, limit,
                                                 scope.admit)]

        def held(hit: SearchHit) -> SearchHit:
            record = version.get(hit.path)
            return hit if record is None else replace(hit, holds=holds_of(record))

        span = where.span
        when = When(None if span is None else span.phrase,
                    None if span is None else span.start,
                    None if span is None else span.end, moment)
        return arm.bind(lambda chosen: search(
            store, query, at=rev, limit=candidates(limit, where),
            vectors=chosen.hybrid.cache if chosen.hybrid else None,
            query_vector=chosen.hybrid.query_vector if chosen.hybrid else None,
            vector_weight=weight, scope=scope,
        ).map(lambda hits: Searched(
            timed(hits), "hybrid" if chosen.hybrid else "lexical", version.sha,
            _joined(chosen.note, weight_note if chosen.hybrid else None, where.note),
            arms_of(services.embedder_name, chosen.hybrid is not None, chosen.note),
            when)))

    def at_rev(rev: str | None, moment: str | None) -> IOResult[Searched, StoreError]:
        return version_of(store, rev).bind(lambda version: ranked(version, rev, moment))

    if as_of is None:
        return at_rev(at, None)
    if at is not None:
        return IOFailure(Refused("give --at (a commit) or --as-of (a time), not both"))
    match as_of_moment(as_of):
        case Success(moment):
            return commit_as_of(store, moment).bind(lambda sha: at_rev(sha, moment))
        case Failure(error):
            return IOFailure(error)
        case _:
            return IOSuccess(Searched([], "lexical", None))
