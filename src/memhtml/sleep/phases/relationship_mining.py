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

**The grouping band** (``--deep`` only). A deep run also keeps the pairs at cosine in
[``LATERAL_COSINE``, ``MINING_COSINE``) as derived ``laterally_related`` edges, handed on
in ``PhaseResult.lateral`` (``env.lateral`` later), never in ``mined``: their one reader
is the deep phases' community grouping, so retention, PageRank, bridges, edge-typing
and arc-synthesis, which read ``env.mined`` alone, never see them. The band uses the
same sample and the same ``MINING_K``: each source's ``MINING_K`` nearest at or above
``LATERAL_COSINE``, those under ``MINING_COSINE`` kept. A source with ``MINING_K``
neighbours above the mining floor so adds no band edge (it has its community), and one
with none, the memory the band is for, adds its ``MINING_K`` nearest in the band: no
source adds more than ``MINING_K`` however crowded its neighbourhood. The band
is cached apart, under its own basis (``lateral_basis``), so the two sets never mix
and a run without ``--deep`` reads and writes exactly what it did before; its counts
then gain ``lateral`` and its observations ``lateral_cached``. Without ``--deep``
``lateral`` is None and nothing of the band is computed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Final

from returns.io import IOResult, IOSuccess

from memhtml.contracts.errors import StateError
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import MinedRow
from memhtml.domain.thresholds import LATERAL_COSINE, MINING_COSINE, MINING_K, MINING_SAMPLE
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


def lateral_basis(cache: VectorCache) -> str:
    """The grouping band's basis: its own, so a band set is never read back as mined
    edges (or the other way round) at the same commit."""
    return (f"lateral;{cache.space.key};band=[{LATERAL_COSINE},{MINING_COSINE});"
            f"k={MINING_K};sample={MINING_SAMPLE};seed={MINING_SEED}")


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


def mine_lateral(mining: MiningInput, cache: VectorCache) -> tuple[MinedEdge, ...]:
    """The sample's grouping-band edges (module docstring), each pair once, sorted."""
    return neighbour_edges(mining.members, cache, mining.sources)[1]


def neighbour_edges(members: Sequence[MemoryRecord], cache: VectorCache,
                    sources: Collection[int]) -> tuple[tuple[MinedEdge, ...],
                                                       tuple[MinedEdge, ...]]:
    """``sources``' edges in both bands from one scan: (mined, lateral), each sorted.

    One scan at ``LATERAL_COSINE`` serves both: a source's ``MINING_K`` nearest at or
    above the mining floor are exactly those of its ``MINING_K`` nearest at or above the
    band's floor that reach the mining floor (both lists are one ranking cut at ``k``),
    so the mined half equals what ``mine_edges`` finds for the same sources."""
    found = scan_neighbours(members, cache, floor=LATERAL_COSINE, k=MINING_K,
                            sources=sources)
    paths = [record.path for record in members]
    edges = sorted(_edge(paths[pair.i], paths[pair.j], pair.similarity)
                   for pair in found.pairs)
    return (tuple(e for e in edges if e.similarity >= MINING_COSINE),
            tuple(e for e in edges if e.similarity < MINING_COSINE))


def _edge(a: str, b: str, similarity: float) -> MinedEdge:
    return MinedEdge(a, b, similarity) if a < b else MinedEdge(b, a, similarity)


@dataclass(frozen=True)
class _Found:
    """One set of edges, whether the cache held it, and what went wrong on the way."""

    edges: tuple[MinedEdge, ...]
    cached: bool
    warnings: tuple[str, ...] = ()


def _edges(env: PhaseEnv, basis: str, what: str,
           scan: Callable[[], tuple[MinedEdge, ...]]) -> IOResult[_Found, PhaseFault]:
    """One set of edges from the cache at this commit on ``basis``, or a scan saved
    there. ``what`` names the set in a warning."""
    commit = env.version.sha
    if commit is None:
        return IOSuccess(_Found(scan(), cached=False))
    at: str = commit

    def scanned(warnings: tuple[str, ...]) -> IOResult[_Found, PhaseFault]:
        edges = scan()
        saved = env.state.save_mined_edges(
            at, basis, [MinedRow(e.source, e.target, e.similarity) for e in edges])
        return saved.map(lambda _: warnings).lash(lambda error: IOSuccess(
            (*warnings, f"{what} edges not cached: {_reason(error)}"))).map(
            lambda notes: _Found(edges, cached=False, warnings=notes))

    def looked(rows: tuple[MinedRow, ...] | str | None) -> IOResult[_Found, PhaseFault]:
        if isinstance(rows, str):
            return scanned((f"{what} edges cache unread: {rows}",))
        if rows is None:
            return scanned(())
        edges = tuple(MinedEdge(r.source, r.target, r.similarity) for r in rows)
        return IOSuccess(_Found(edges, cached=True))

    read: IOResult[tuple[MinedRow, ...] | None, StateError] = env.state.mined_edges(
        at, basis)
    # A cache that cannot be read is a scan, not a failure: carried on as its reason.
    outcome: IOResult[tuple[MinedRow, ...] | str | None, PhaseFault] = read.map(
        _widen).lash(lambda error: IOSuccess(_reason(error)))
    return outcome.bind(looked)


def relationship_mining(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    """The phase body: the run's mined edges (and under ``--deep`` the grouping band),
    each from the cache at this commit or a scan."""
    cache = env.vectors
    if cache is None:
        counts: dict[str, CountValue] = {"sources": 0, "pairs": 0, "skipped": NO_VECTORS}
        if env.deep:
            counts["lateral"] = 0
        return IOSuccess(PhaseResult(counts=counts, mined=(),
                                     lateral=() if env.deep else None))
    held: VectorCache = cache
    mining = mining_input(corpus_order(env.version), held)
    mined = _edges(env, mining_basis(held), "mined", lambda: mine_edges(mining, held))
    if not env.deep:
        return mined.map(lambda found: _result(mining, found, None))
    return mined.bind(lambda found: _edges(
        env, lateral_basis(held), "lateral", lambda: mine_lateral(mining, held)).map(
        lambda band: _result(mining, found, band)))


def _widen(rows: tuple[MinedRow, ...] | None) -> tuple[MinedRow, ...] | str | None:
    return rows


def _reason(error: object) -> str:
    return str(getattr(error, "reason", error))


def _result(mining: MiningInput, found: _Found, band: _Found | None) -> PhaseResult:
    counts: dict[str, CountValue] = {
        "memories": len(mining.members), "with_vector": mining.with_vector,
        "without_vector": len(mining.members) - mining.with_vector,
        "sources": len(mining.sources), "pairs": len(found.edges),
    }
    observed: dict[str, CountValue] = {"cached": found.cached}
    if band is None:
        return PhaseResult(counts=counts, warnings=found.warnings, mined=found.edges,
                           observed=observed)
    counts["lateral"] = len(band.edges)
    observed["lateral_cached"] = band.cached
    return PhaseResult(counts=counts, warnings=(*found.warnings, *band.warnings),
                       mined=found.edges, lateral=band.edges, observed=observed)
