"""The vector arm's wiring: the cache on disk, its coverage, and a query's vector.

Search turns hybrid only when the cache holds a vector for every active record
with text: a partly filled cache would rank the embedded half above the rest for
no reason a reader could see. Both edges ask here, so the CLI and the MCP server
search the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from returns.io import IOResult, IOSuccess

from memhtml.compose.settings import SettingsError
from memhtml.contracts.local_files import read_regular
from memhtml.contracts.services import QueryEmbedder, Vector, VectorSpace

if TYPE_CHECKING:
    from memhtml.contracts.view import HeadView
    from memhtml.head import VectorCache


@dataclass(frozen=True, slots=True)
class LoadedVectors:
    """A space's saved vectors, and a note when loading them had to repair the cache
    (a corrupt set deleted, a newer or foreign one moved aside). The note is given
    once, by the load that did the repair; later loads find a clean, empty cache."""

    cache: VectorCache
    note: str | None = None


@dataclass(frozen=True, slots=True)
class VectorFiles:
    """The vector cache under ``root``: one file set per vector space."""

    root: Path

    def load(self, space: VectorSpace) -> IOResult[VectorCache, SettingsError]:
        """The saved vectors of ``space`` (empty when none are saved). A set that
        cannot be used is repaired and loads as empty (see ``load_noted``, which also
        says so); only a file system that refuses the read is a failure."""
        return self.load_noted(space).map(lambda loaded: loaded.cache)

    def load_noted(self, space: VectorSpace) -> IOResult[LoadedVectors, SettingsError]:
        """``load``, with the note a repair leaves for the caller to show."""
        from memhtml.adapters.vector_files import load_or_heal

        loaded: IOResult[LoadedVectors, SettingsError] = load_or_heal(self.root, space).map(
            lambda healed: LoadedVectors(healed.cache, healed.discarded)).alt(
            lambda e: SettingsError(f"vector cache {e.path}: {e.reason}"))
        return loaded

    def save(self, cache: VectorCache) -> IOResult[int, SettingsError]:
        """Merge ``cache`` into its space's file set; the number of vectors stored."""
        from memhtml.adapters.vector_files import save_cache

        saved: IOResult[int, SettingsError] = save_cache(self.root, cache).map(
            lambda counts: counts.stored).alt(
            lambda e: SettingsError(f"vector cache {e.path}: {e.reason}"))
        return saved

    def saved_space(self, model_id: str) -> VectorSpace | None:
        """The space of a file set already saved for ``model_id``, widest first."""
        found: list[VectorSpace] = []
        try:
            manifests = sorted(self.root.glob("*/manifest.json"))
        except OSError:
            return None
        for manifest in manifests:
            try:
                # Only a regular file: a FIFO at a manifest's name must not hold the
                # command (the load that follows judges and clears it).
                data = json.loads(read_regular(manifest).decode("utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(data, dict) and data.get("model_id") == model_id \
                    and isinstance(data.get("dimension"), int):
                found.append(VectorSpace(model_id, data["dimension"]))
        found.sort(key=lambda space: -space.dimension)
        return found[0] if found else None


@dataclass(frozen=True, slots=True)
class Coverage:
    """How much of a version the cache covers, in one space; ``note`` says when the
    load behind it repaired the cache (see ``LoadedVectors``)."""

    embedder: str
    space: str | None
    have: int
    total: int
    note: str | None = None

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


def coverage_of(vectors: VectorFiles, embedder: QueryEmbedder | None, name: str,
                space: VectorSpace | None, view: HeadView
                ) -> IOResult[Coverage | None, SettingsError]:
    """The cache's coverage of ``view`` in ``space``; None with no embedder."""
    from memhtml.head import coverage

    if embedder is None:
        return IOSuccess(None)
    if space is None:
        return IOSuccess(Coverage(name, None, 0, 0))

    def counted(loaded: LoadedVectors) -> Coverage | None:
        have, total = coverage(view, loaded.cache)
        return Coverage(name, space.key, have, total, loaded.note)

    return vectors.load_noted(space).map(counted)


def vector_arm(vectors: VectorFiles, embedder: QueryEmbedder | None,
               space: VectorSpace | None, view: HeadView, query: str
               ) -> IOResult[Arm, SettingsError]:
    """The vector arm's inputs when the cache covers ``view``, else the reason not.

    Never a failure: search always has its lexical arm, so a cache that does not
    load or a query the embedder refuses turns into a note, not a failed search.
    """
    from memhtml.head import coverage

    if embedder is None:
        return IOSuccess(Arm(None))
    if space is None:
        return IOSuccess(Arm(None, "no vectors saved yet; run memhtml embed"))
    missing = missing_extra(embedder)
    if missing is not None:
        return IOSuccess(Arm(None, f"{missing.reason}; searched lexically"))

    def armed(loaded: LoadedVectors) -> IOResult[Arm, SettingsError]:
        cache = loaded.cache
        have, total = coverage(view, cache)
        if total == 0 or have < total:
            covered = f"vectors cover {have} of {total} memories; run memhtml embed"
            return IOSuccess(Arm(None, f"{loaded.note}; {covered}" if loaded.note else covered))
        return embedder.embed_query(query).map(lambda vector: Arm(Hybrid(cache, vector))).lash(
            lambda failure: IOSuccess(Arm(None, f"query not embedded ({failure.reason}); "
                                                "searched lexically")))

    return vectors.load_noted(space).bind(armed).lash(
        lambda error: IOSuccess(Arm(None, f"{error.reason}; searched lexically")))
