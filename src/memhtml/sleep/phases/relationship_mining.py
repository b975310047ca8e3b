"""Phase 5, relationship-mining: derived ``relates_to`` edges between memories that are
close in the vector space. It commits nothing.

Each of at most ``MINING_SAMPLE`` source memories keeps its ``MINING_K`` nearest
neighbours at cosine ``>= MINING_COSINE``; a neighbour may be any active non-task memory
with a vector. Tasks are left out at both ends: a mined edge feeds PageRank and the
retention scorer's bridge count, and an edge reaching a task would let a task be scored
(the firewall every phase keeps). The edges are no file's links: they live in the run
(``PhaseResult.mined``, handed to later phases as ``env.mined``) and in the state plane.

**The sample** is the memories with the lowest sha256 of ``MINING_SEED`` + path. A
digest, not a draw: the same store gives the same sample on every machine and every
night, and a memory added or removed moves at most one other in or out of it.

**The cache.** The edges are a function of the commit the phase runs at and of the
basis (the vector space and the mining parameters), so they are kept in the state plane
under both, and a resume or a second invocation at that commit reads them back instead
of scanning again. A dry run reads the cache but its state plane drops the write. A
cache that cannot be read or written costs a scan and a warning, never the phase.

Whether the edges came from the cache is a reading of this invocation, not of the
branch, so ``cached`` is ``observed``: a resumed run writes the report the
uninterrupted one would. With no vector cache (embedder ``none``) the phase mines
nothing and says so in its counts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from returns.io import IOResult, IOSuccess

from memhtml.contracts.errors import StateError
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import MinedRow
from memhtml.domain.thresholds import MINING_COSINE, MINING_K, MINING_SAMPLE
from memhtml.head import VectorCache
from memhtml.sleep.neighbours import corpus_order, scan_neighbours, usable_vector
from memhtml.sleep.phase import CountValue, MinedEdge, PhaseEnv, PhaseFault, PhaseResult

MINING_SEED: Final = "memhtml/relationship-mining/1"
"""Prefixed to each path before hashing. Changing it draws another sample."""
NO_VECTORS: Final = "no vector cache: the embedder is none"


def sample_digest(path: str) -> bytes:
    """A path's place in the sample order: the lowest digests are sampled."""
    return hashlib.sha256(f"{MINING_SEED}{path}".encode()).digest()


def mining_basis(cache: VectorCache) -> str:
    """What the edges depend on besides the commit: a change to any of it (another
    embedder, another width, new constants) must not read an old set back."""
    return (f"{cache.space.key};cosine={MINING_COSINE};k={MINING_K};"
            f"sample={MINING_SAMPLE};seed={MINING_SEED}")


@dataclass(frozen=True)
class MiningInput:
    """The members in corpus order, those with a usable vector, and the sample."""

    members: tuple[MemoryRecord, ...]
    with_vector: int
    sources: tuple[int, ...]
    """Indices into ``members``, in corpus order."""


def mining_input(members: Sequence[MemoryRecord], cache: VectorCache,
                 limit: int = MINING_SAMPLE) -> MiningInput:
    """The sample: the ``limit`` members with a vector whose digests are lowest."""
    candidates = [n for n, record in enumerate(members)
                  if usable_vector(record, cache) is not None]
    chosen = sorted(candidates, key=lambda n: sample_digest(members[n].path))[:limit]
    return MiningInput(tuple(members), len(candidates), tuple(sorted(chosen)))


def mine_edges(mining: MiningInput, cache: VectorCache) -> tuple[MinedEdge, ...]:
    """The sample's neighbours as edges, each pair once (``source`` < ``target`` by
    path), sorted."""
    found = scan_neighbours(mining.members, cache, floor=MINING_COSINE, k=MINING_K,
                            sources=mining.sources)
    paths = [record.path for record in mining.members]
    return tuple(sorted(_edge(paths[pair.i], paths[pair.j], pair.similarity)
                        for pair in found.pairs))


def _edge(a: str, b: str, similarity: float) -> MinedEdge:
    return MinedEdge(a, b, similarity) if a < b else MinedEdge(b, a, similarity)


def relationship_mining(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    """The phase body: the run's mined edges, from the cache at this commit or a scan."""
    cache = env.vectors
    if cache is None:
        return IOSuccess(PhaseResult(counts={"sources": 0, "pairs": 0, "skipped": NO_VECTORS},
                                     mined=()))
    mining = mining_input(corpus_order(env.version), cache)
    commit = env.version.sha
    if commit is None:
        return IOSuccess(_result(mining, mine_edges(mining, cache), cached=False))
    basis = mining_basis(cache)

    def scanned(warnings: tuple[str, ...]) -> IOResult[PhaseResult, PhaseFault]:
        edges = mine_edges(mining, cache)
        saved = env.state.save_mined_edges(
            commit, basis, [MinedRow(e.source, e.target, e.similarity) for e in edges])
        return saved.map(lambda _: warnings).lash(lambda error: IOSuccess(
            (*warnings, f"mined edges not cached: {_reason(error)}"))).map(
            lambda notes: _result(mining, edges, cached=False, warnings=notes))

    def looked(rows: tuple[MinedRow, ...] | str | None) -> IOResult[PhaseResult, PhaseFault]:
        if isinstance(rows, str):
            return scanned((f"mined edges cache unread: {rows}",))
        if rows is None:
            return scanned(())
        edges = tuple(MinedEdge(r.source, r.target, r.similarity) for r in rows)
        return IOSuccess(_result(mining, edges, cached=True))

    read: IOResult[tuple[MinedRow, ...] | None, StateError] = env.state.mined_edges(
        commit, basis)
    # A cache that cannot be read is a scan, not a failure: carried on as its reason.
    outcome: IOResult[tuple[MinedRow, ...] | str | None, PhaseFault] = read.map(
        _widen).lash(lambda error: IOSuccess(_reason(error)))
    return outcome.bind(looked)


def _widen(rows: tuple[MinedRow, ...] | None) -> tuple[MinedRow, ...] | str | None:
    return rows


def _reason(error: object) -> str:
    return str(getattr(error, "reason", error))


def _result(mining: MiningInput, edges: tuple[MinedEdge, ...], *, cached: bool,
            warnings: tuple[str, ...] = ()) -> PhaseResult:
    counts: dict[str, CountValue] = {
        "memories": len(mining.members), "with_vector": mining.with_vector,
        "without_vector": len(mining.members) - mining.with_vector,
        "sources": len(mining.sources), "pairs": len(edges),
    }
    return PhaseResult(counts=counts, warnings=warnings, mined=edges,
                       observed={"cached": cached})
