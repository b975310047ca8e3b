"""relationship-mining's grouping band (``--deep``): pairs in [0.72, 0.85) go to
``lateral`` and never to ``mined``; without ``--deep`` nothing of the band exists and
the result is what it was; the band is cached under its own basis; and retention-triage
scores the same whether a run carries the band or not."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pytest
from tests.unit.sleep.sleep_support import RUN_AT, WRITTEN, World, blank_world, ok, put_memory

from memhtml.adapters.memory_state import InMemoryState
from memhtml.contracts.errors import StateUnusable
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.services import StatePlane, VectorSpace
from memhtml.domain.thresholds import LATERAL_COSINE, MINING_COSINE, MINING_K
from memhtml.head import HeadVersion, VectorCache, cache_from
from memhtml.sleep.deps import DryState
from memhtml.sleep.neighbours import corpus_order
from memhtml.sleep.phase import MinedEdge, PhaseEnv, PhaseResult, TaskBudget
from memhtml.sleep.phases.relationship_mining import (
    lateral_basis,
    mine_edges,
    mining_basis,
    mining_input,
    neighbour_edges,
    relationship_mining,
)
from memhtml.sleep.phases.retention_triage import retention_inputs, retention_triage
from memhtml.store import WriteInput, write

SPACE = VectorSpace("scripted", 6)
PATHS = tuple(f"areas/{name}.html" for name in "abcdefg")
A, B, C, D, E, F, G = PATHS


def _at(cosine: float, axis: int, lean: int) -> list[float]:
    out = [0.0] * SPACE.dimension
    out[axis] = cosine
    out[lean] = float(np.sqrt(1 - cosine * cosine))
    return out


def _axis(n: int) -> list[float]:
    return [1.0 if i == n else 0.0 for i in range(SPACE.dimension)]


# A-B at 0.90 is mined; C-D at 0.80 is in the band; E-F at 0.70 is under both floors;
# G points nowhere near anyone.
VECTORS: Mapping[str, Sequence[float]] = {
    A: _axis(0), B: _at(0.90, 0, 1),
    C: _axis(2), D: _at(0.80, 2, 3),
    E: _axis(4), F: _at(0.70, 4, 5),
    G: [0.0, -1.0, 0.0, -1.0, 0.0, -1.0],
}


def store() -> tuple[World, HeadVersion]:
    w = blank_world()
    for path in PATHS:
        ok(write(w.store, WriteInput(title=f"Memory {path}", claim=f"What {path} says.",
                                     path=path)))
    ok(write(w.store, WriteInput(title="Chase", claim="Chase the vendor.",
                                 memory_type="task", path="areas/tasks/chase.html")))
    return w, ok(w.store.version_at(w.main()))


def vectors_for(version: HeadVersion, vectors: Mapping[str, Sequence[float]] = VECTORS
                ) -> VectorCache:
    by_hash = {}
    for path, vector in vectors.items():
        found = version.get(path)
        assert found is not None, path
        by_hash[found.content_hash] = np.asarray(vector, dtype=np.float32)
    return cache_from(SPACE, by_hash)


def env(w: World, version: HeadVersion, state: StatePlane, vectors: VectorCache | None, *,
        deep: bool, dry_run: bool = False) -> PhaseEnv:
    return PhaseEnv(phase="relationship-mining", run_id="2026-11-29", stamp=RUN_AT,
                    base=w.main(), base_version=version, version=version, git=w.git,
                    state=DryState(state) if dry_run else state, budget=TaskBudget(),
                    dry_run=dry_run, vectors=vectors, deep=deep)


def pairs(edges: tuple[MinedEdge, ...] | None) -> list[tuple[str, str, float]]:
    assert edges is not None
    return [(e.source, e.target, round(e.similarity, 4)) for e in edges]


def mine(deep: bool, state: StatePlane | None = None, **more: object) -> PhaseResult:
    w, version = store()
    return ok(relationship_mining(env(w, version, state or InMemoryState(),
                                      vectors_for(version), deep=deep,
                                      **more)))  # type: ignore[arg-type]


def test_the_band_is_072_to_085() -> None:
    assert (LATERAL_COSINE, MINING_COSINE) == (0.72, 0.85)


def test_a_pair_at_080_is_lateral_under_deep_and_never_mined() -> None:
    result = mine(deep=True)
    assert pairs(result.mined) == [(A, B, 0.9)]
    assert pairs(result.lateral) == [(C, D, 0.8)]
    assert result.counts["lateral"] == 1
    assert result.counts["pairs"] == 1
    assert result.observed == {"cached": False, "lateral_cached": False}


def test_without_deep_there_is_no_band_and_the_result_is_as_before() -> None:
    result = mine(deep=False)
    assert result.lateral is None
    assert pairs(result.mined) == [(A, B, 0.9)]
    # The counts and observations of a run before the band existed, key for key.
    assert result.counts == {"memories": 7, "with_vector": 7, "without_vector": 0,
                             "sources": 7, "pairs": 1}
    assert result.observed == {"cached": False}
    assert result.warnings == ()
    deep = mine(deep=True)
    assert deep.mined == result.mined
    assert {k: v for k, v in deep.counts.items() if k != "lateral"} == result.counts


def test_no_vectors_under_deep_mines_an_empty_band() -> None:
    w, version = store()
    deep = ok(relationship_mining(env(w, version, InMemoryState(), None, deep=True)))
    assert (deep.mined, deep.lateral, deep.counts["lateral"]) == ((), (), 0)
    plain = ok(relationship_mining(env(w, version, InMemoryState(), None, deep=False)))
    assert plain.lateral is None and "lateral" not in plain.counts


def test_the_band_has_its_own_cache_basis_and_the_sets_never_mix() -> None:
    w, version = store()
    state = InMemoryState()
    cache = vectors_for(version)
    assert lateral_basis(cache) != mining_basis(cache)
    ok(relationship_mining(env(w, version, state, cache, deep=True)))
    sha = version.sha
    assert sha is not None
    kept_mined = ok(state.mined_edges(sha, mining_basis(cache)))
    kept_band = ok(state.mined_edges(sha, lateral_basis(cache)))
    assert kept_mined is not None and kept_band is not None
    assert [(r.source, r.target) for r in kept_mined] == [(A, B)]
    assert [(r.source, r.target) for r in kept_band] == [(C, D)]
    # Both read back at the commit, each from its own set.
    again = ok(relationship_mining(env(w, version, state, cache, deep=True)))
    assert again.observed == {"cached": True, "lateral_cached": True}
    assert pairs(again.lateral) == [(C, D, 0.8)]
    # A run without --deep reads the mined set alone, as it always did.
    plain = ok(relationship_mining(env(w, version, state, cache, deep=False)))
    assert plain.observed == {"cached": True}
    assert pairs(plain.mined) == [(A, B, 0.9)]


def test_a_dry_deep_run_counts_the_band_and_writes_no_cache() -> None:
    w, version = store()
    state = InMemoryState()
    cache = vectors_for(version)
    dry = ok(relationship_mining(env(w, version, state, cache, deep=True, dry_run=True)))
    assert dry.counts["lateral"] == 1
    assert pairs(dry.lateral) == [(C, D, 0.8)]
    sha = version.sha
    assert sha is not None
    assert ok(state.mined_edges(sha, lateral_basis(cache))) is None
    assert ok(state.mined_edges(sha, mining_basis(cache))) is None


def test_a_broken_state_plane_costs_the_band_a_scan_and_warnings() -> None:
    broken = InMemoryState(failing=StateUnusable("state.db", "state.db is not a database"))
    result = mine(deep=True, state=broken)
    assert pairs(result.lateral) == [(C, D, 0.8)]
    assert result.warnings == (
        "mined edges cache unread: state.db is not a database",
        "mined edges not cached: state.db is not a database",
        "lateral edges cache unread: state.db is not a database",
        "lateral edges not cached: state.db is not a database")


def test_the_band_keeps_each_sources_k_nearest_only() -> None:
    """The band uses mining's k: a source with more than k band neighbours keeps its k
    nearest (ties to the smaller path)."""
    w = blank_world()
    hub = "areas/hub.html"
    spokes = tuple(f"areas/spoke-{n}.html" for n in range(MINING_K + 2))
    for path in (hub, *spokes):
        ok(write(w.store, WriteInput(title=f"M {path}", claim=f"{path} says.", path=path)))
    version = ok(w.store.version_at(w.main()))
    dimension = len(spokes) + 1
    space = VectorSpace("spokes", dimension)
    vectors: dict[str, list[float]] = {hub: [1.0] + [0.0] * len(spokes)}
    for n, path in enumerate(spokes):
        cosine = 0.84 - 0.01 * n  # every spoke in the band, nearest first
        row = [cosine] + [0.0] * len(spokes)
        row[n + 1] = float(np.sqrt(1 - cosine * cosine))
        vectors[path] = row
    cache = cache_from(space, {ok_record(version, p).content_hash: np.asarray(v, np.float32)
                               for p, v in vectors.items()})
    members = corpus_order(version)
    source = [n for n, r in enumerate(members) if r.path == hub]
    mined, band = neighbour_edges(members, cache, source)
    assert mined == ()
    assert [e.target for e in band] == list(spokes[:MINING_K])


def ok_record(version: HeadVersion, path: str) -> MemoryRecord:
    found = version.get(path)
    assert found is not None
    return found


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_one_band_scan_finds_exactly_the_mined_edges_above_the_floor(seed: int) -> None:
    """The law compress relies on: the mined half of a scan at the band's floor is the
    scan at the mining floor, for the same sources."""
    w = blank_world()
    paths = tuple(f"areas/n-{n:02}.html" for n in range(24))
    for path in paths:
        ok(write(w.store, WriteInput(title=f"M {path}", claim=f"{path} says.", path=path)))
    version = ok(w.store.version_at(w.main()))
    rng = np.random.default_rng(seed)
    base = rng.normal(size=8)
    space = VectorSpace("law", 8)
    by_hash = {}
    for path in paths:
        # Near a common direction, so pairs fall on both sides of both floors.
        by_hash[ok_record(version, path).content_hash] = np.asarray(
            base + rng.normal(scale=0.7, size=8), dtype=np.float32)
    cache = cache_from(space, by_hash)
    mining = mining_input(corpus_order(version), cache, limit=10)
    mined, band = neighbour_edges(mining.members, cache, mining.sources)
    assert mined and band  # both floors are crossed, or the law says nothing
    assert mined == mine_edges(mining, cache)
    assert all(LATERAL_COSINE <= e.similarity < MINING_COSINE for e in band)


# -- retention never reads the band ----------------------------------------------------

STAMP = datetime(2026, 11, 29, 3, 15, 7, tzinfo=UTC)
STALE = tuple(f"areas/diary/stale-{n}.html" for n in range(4))
FACTS = tuple(f"areas/facts/fact-{n}.html" for n in range(3))


def retention_world() -> World:
    """Doubtful diary entries near the evict line and a few linked facts."""
    w = blank_world()
    for n, path in enumerate(STALE):
        put_memory(w, path, n, memory_type="episodic", confidence=0.45, importance=3)
    for n, path in enumerate(FACTS):
        links = tuple(Link("relates_to", "/" + p) for p in FACTS[:n])
        put_memory(w, path, 10 + n, links=links)
    w.clock.advance((STAMP - WRITTEN).total_seconds())
    return w


BAND = tuple(MinedEdge(a, b, 0.8) for a, b in [
    (STALE[0], STALE[1]), (STALE[1], STALE[2]), (STALE[0], STALE[2]),
    (STALE[2], FACTS[0]), (STALE[3], FACTS[1])])


def test_retention_scores_and_bands_are_equal_with_and_without_the_band() -> None:
    w = retention_world()
    version = ok(w.store.head())
    base = PhaseEnv(phase="retention-triage", run_id="2026-11-29", stamp=STAMP,
                    base=w.main(), base_version=version, version=version, git=w.git,
                    state=w.state, budget=TaskBudget(), dry_run=False, mined=())
    # The corpus is one the band would move, were it read as an edge.
    assert retention_inputs(version, {}, BAND, STAMP) != retention_inputs(
        version, {}, (), STAMP)
    plain = ok(retention_triage(base))
    deep = ok(retention_triage(replace(base, deep=True, lateral=BAND)))
    assert deep.counts == plain.counts
    assert deep.commits == plain.commits
    assert deep.warnings == plain.warnings
