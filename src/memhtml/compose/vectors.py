"""The vector arm's wiring: the cache's coverage, and a query's vector.

Search turns hybrid only when the cache holds every passage of every active record
with text (``head.passages``): a partly filled cache would rank the embedded half
above the rest for no reason a reader could see. Both edges ask here, so the CLI and
the MCP server search the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from returns.io import IOResult, IOSuccess

from memhtml.contracts.services import QueryEmbedder, Vector, VectorSpace

if TYPE_CHECKING:
    from memhtml.contracts.vectors import (
        LoadedVectors,
        VectorCache,
        VectorCacheFault,
        VectorCacheStore,
    )
    from memhtml.contracts.view import HeadView


@dataclass(frozen=True, slots=True)
class Coverage:
    """How much of a version the cache covers, in one space; ``note`` says when the
    load behind it repaired the cache (see ``LoadedVectors``)."""

    embedder: str
    space: str | None
    have: int
    """Active memories with text whose every passage has a vector: what search reads."""
    total: int
    """Active memories with text."""
    note: str | None = None
    passages_have: int = 0
    passages_total: int = 0
    """Passages with a vector, and passages in all (``head.passages``)."""
    memory_vectors: int = 0
    """Memories with their own (opening) vector, which the sleep run compares by."""

    @property
    def complete(self) -> bool:
        return self.total > 0 and self.have == self.total


@dataclass(frozen=True)
class Hybrid:
    """What the vector arm needs: the cache, and the query's vector."""

    cache: VectorCache
    query_vector: Vector


@dataclass(frozen=True)
class Arm:
    """The vector arm for one query, or why search stays lexical (``note``)."""

    hybrid: Hybrid | None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class ExtraMissing:
    """An embedder whose optional packages are not installed here; ``reason`` names
    them and the pip command that adds them."""

    embedder: str
    reason: str


def missing_extra(embedder: QueryEmbedder | None) -> ExtraMissing | None:
    """Why ``embedder`` cannot run on this machine (an optional package it imports is
    not installed); None when nothing is missing. Asked before any work starts, so a
    person gets the pip command rather than a failure halfway through."""
    if embedder is None:
        return None  # nothing to import the adapters for
    from memhtml.adapters.embedders import LocalEmbedder

    if not isinstance(embedder, LocalEmbedder):
        return None
    reason = embedder.missing_extra()
    return None if reason is None else ExtraMissing("local", reason)


def coverage_of(vectors: VectorCacheStore, embedder: QueryEmbedder | None, name: str,
                space: VectorSpace | None, view: HeadView
                ) -> IOResult[Coverage | None, VectorCacheFault]:
    """The cache's coverage of ``view`` in ``space``; None with no embedder."""
    from memhtml.head import coverage
    from memhtml.head.vectors import passage_coverage

    if embedder is None:
        return IOSuccess(None)
    if space is None:
        return IOSuccess(Coverage(name, None, 0, 0))

    def counted(loaded: LoadedVectors) -> Coverage | None:
        passages = passage_coverage(view, loaded.cache)
        memory_vectors, _ = coverage(view, loaded.cache)
        return Coverage(name, space.key, passages.covered, passages.memories, loaded.note,
                        passages.stored, passages.passages, memory_vectors)

    return vectors.load(space).map(counted)


def vector_arm(vectors: VectorCacheStore, embedder: QueryEmbedder | None,
               space: VectorSpace | None, view: HeadView, query: str
               ) -> IOResult[Arm, VectorCacheFault]:
    """The vector arm's inputs when the cache covers ``view``, else the reason not.

    Never a failure: search always has its lexical arm, so a cache that does not
    load or a query the embedder refuses turns into a note, not a failed search.
    """
    from memhtml.head.vectors import passage_coverage

    if embedder is None:
        return IOSuccess(Arm(None))
    if space is None:
        return IOSuccess(Arm(None, "no vectors saved yet; run memhtml embed"))
    missing = missing_extra(embedder)
    if missing is not None:
        return IOSuccess(Arm(None, f"{missing.reason}; searched lexically"))

    def armed(loaded: LoadedVectors) -> IOResult[Arm, VectorCacheFault]:
        cache = loaded.cache
        found = passage_coverage(view, cache)
        if not found.complete:
            covered = (f"vectors cover {found.covered} of {found.memories} memories "
                       f"({found.stored} of {found.passages} passages); run memhtml embed")
            return IOSuccess(Arm(None, f"{loaded.note}; {covered}" if loaded.note else covered))
        return embedder.embed_query(query).map(lambda vector: Arm(Hybrid(cache, vector))).lash(
            lambda failure: IOSuccess(Arm(None, f"query not embedded ({failure.reason}); "
                                                "searched lexically")))

    return vectors.load(space).bind(armed).lash(
        lambda error: IOSuccess(Arm(None, f"{error.reason}; searched lexically")))
