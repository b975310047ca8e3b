"""relationship-mining on the doubles: the edges it derives, tasks kept out at both ends,
the seeded sample, and the state-plane cache (read back at the same commit, never
written by a dry run, a broken one shrugged off)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from tests.unit.sleep.sleep_support import RUN_AT, World, ok, world

from memhtml.adapters.memory_state import InMemoryState
from memhtml.contracts.errors import StateUnusable
from memhtml.contracts.services import PathChange, StatePlane, VectorSpace
from memhtml.domain.thresholds import MINING_COSINE, MINING_K, MINING_SAMPLE
from memhtml.head import HeadVersion, VectorCache, cache_from
from memhtml.sleep.deps import DryState
from memhtml.sleep.neighbours import corpus_order
from memhtml.sleep.phase import MinedEdge, PhaseEnv, PhaseResult, TaskBudget
from memhtml.sleep.phases.relationship_mining import (
    NO_VECTORS,
    mine_edges,
    mining_basis,
    mining_input,
    relationship_mining,
    sample_digest,
)
from memhtml.store import WriteInput, write

SPACE = VectorSpace("scripted", 4)
# A-B at 0.9 and C-D at 0.86 are edges; C-E at 0.84 is under the floor, D-E at 0.9993
# is one. The task points where A does, F has no vector, G is orthogonal to everyone.
VECTORS: Mapping[str, Sequence[float]] = {
    "areas/a.html": [1, 0, 0, 0],
    "areas/b.html": [0.9, np.sqrt(1 - 0.81), 0, 0],
    "areas/c.html": [0, 0, 1, 0],
    "areas/d.html": [0, 0, 0.86, np.sqrt(1 - 0.86**2)],
    "areas/e.html": [0, 0, 0.84, np.sqrt(1 - 0.84**2)],
    "areas/g.html": [0, -1, 0, 0],
    "areas/tasks/chase.html": [1, 0, 0, 0],
}
EDGES = [("areas/a.html", "areas/b.html", 0.9), ("areas/c.html", "areas/d.html", 0.86),
         ("areas/d.html", "areas/e.html", 0.9993)]


def store() -> tuple[World, HeadVersion]:
    w = world(memories=0)
    for path in ["areas/a.html", "areas/b.html", "areas/c.html", "areas/d.html",
                 "areas/e.html", "areas/f.html", "areas/g.html"]:
        ok(write(w.store, WriteInput(title=f"Memory {path}", claim=f"What {path} says.",
                                     path=path)))
    ok(write(w.store, WriteInput(title="Chase the vendor", claim="Chase the vendor.",
                                 memory_type="task", path="areas/tasks/chase.html")))
    return w, ok(w.store.version_at(w.main()))


def vectors_for(version: HeadVersion, vectors: Mapping[str, Sequence[float]] = VECTORS,
                space: VectorSpace = SPACE) -> VectorCache:
    by_hash = {}
    for path, vector in vectors.items():
        found = version.get(path)
        assert found is not None, path
        by_hash[found.content_hash] = np.asarray(vector, dtype=np.float32)
    return cache_from(space, by_hash)


def env(w: World, version: HeadVersion, state: StatePlane, vectors: VectorCache | None, *,
        dry_run: bool = False) -> PhaseEnv:
    return PhaseEnv(phase="relationship-mining", run_id="2026-11-29", stamp=RUN_AT,
                    base=w.main(), base_version=version, version=version, git=w.git,
                    state=DryState(state) if dry_run else state, budget=TaskBudget(),
                    dry_run=dry_run, vectors=vectors)


def mined(result: PhaseResult) -> list[tuple[str, str, float]]:
    assert result.mined is not None
    return [(e.source, e.target, round(e.similarity, 4)) for e in result.mined]


def test_the_spec_mines_at_085_k5_over_2000_sources() -> None:
    assert (MINING_COSINE, MINING_K, MINING_SAMPLE) == (0.85, 5, 2000)


def test_edges_at_the_floor_each_pair_once_sorted_and_no_task_at_either_end() -> None:
    w, version = store()
    state = InMemoryState()
    result = ok(relationship_mining(env(w, version, state, vectors_for(version))))
    assert mined(result) == EDGES
    assert result.commits == () and result.marks == () and result.warnings == ()
    assert result.counts == {"memories": 7, "with_vector": 6, "without_vector": 1,
                             "sources": 6, "pairs": 3}
    assert result.observed == {"cached": False}
    assert all(e.source < e.target for e in result.mined or ())


def test_a_second_invocation_at_the_commit_reads_the_cache_back() -> None:
    w, version = store()
    state = InMemoryState()
    first = ok(relationship_mining(env(w, version, state, vectors_for(version))))
    # Vectors that would mine nothing: an answer equal to the first is the cache's.
    apart = {path: np.eye(4)[n % 4] * (1 if n < 4 else -1)
             for n, path in enumerate(VECTORS)}
    second = ok(relationship_mining(env(w, version, state, vectors_for(version, apart))))
    assert second.mined == first.mined
    assert second.counts == first.counts  # the report a resumed run writes is the same
    assert second.observed == {"cached": True}


def test_another_commit_or_another_space_is_mined_afresh() -> None:
    w, version = store()
    state = InMemoryState()
    ok(relationship_mining(env(w, version, state, vectors_for(version))))
    wider = VectorSpace("scripted", 5)
    other = {path: [*vector, 0.0] for path, vector in VECTORS.items()}
    again = ok(relationship_mining(env(w, version, state, vectors_for(version, other, wider))))
    assert again.observed == {"cached": False}
    assert mining_basis(vectors_for(version)) != mining_basis(vectors_for(version, other, wider))
    w.raw([PathChange("areas/a.html", None)])
    later = ok(w.store.version_at(w.main()))
    moved = ok(relationship_mining(env(w, later, state, vectors_for(
        later, {p: v for p, v in VECTORS.items() if p != "areas/a.html"}))))
    assert moved.observed == {"cached": False}
    assert mined(moved) == EDGES[1:]


def test_a_dry_run_reads_the_cache_and_never_writes_it() -> None:
    w, version = store()
    state = InMemoryState()
    dry = ok(relationship_mining(env(w, version, state, vectors_for(version), dry_run=True)))
    assert mined(dry) == EDGES
    assert dry.observed == {"cached": False}
    sha = version.sha
    assert sha is not None
    assert ok(state.mined_edges(sha, mining_basis(vectors_for(version)))) is None
    ok(relationship_mining(env(w, version, state, vectors_for(version))))
    again = ok(relationship_mining(env(w, version, state, vectors_for(version), dry_run=True)))
    assert again.observed == {"cached": True}
    assert again.mined == dry.mined


def test_without_a_vector_cache_it_mines_nothing_and_says_why() -> None:
    w, version = store()
    result = ok(relationship_mining(env(w, version, InMemoryState(), None)))
    assert result.counts == {"sources": 0, "pairs": 0, "skipped": NO_VECTORS}
    assert result.mined == ()


def test_a_broken_state_plane_costs_a_scan_and_warnings_not_the_phase() -> None:
    w, version = store()
    broken = InMemoryState(failing=StateUnusable("state.db", "state.db is not a database"))
    result = ok(relationship_mining(env(w, version, broken, vectors_for(version))))
    assert mined(result) == EDGES
    assert result.warnings == (
        "mined edges cache unread: state.db is not a database",
        "mined edges not cached: state.db is not a database")


# -- the sample ---------------------------------------------------------------------------


def test_the_sample_digest_is_pinned() -> None:
    # A changed seed draws another sample on every store: it must be a decision.
    assert sample_digest("areas/a.html").hex()[:16] == "c8c0a8edb3742d1e"


def test_the_sample_is_the_lowest_digests_and_stable_as_the_corpus_grows() -> None:
    w, version = store()
    members = corpus_order(version)
    cache = vectors_for(version)
    chosen = mining_input(members, cache, limit=3)
    with_vector = [m.path for m in members if m.path in VECTORS]
    expected = sorted(with_vector, key=sample_digest)[:3]
    assert sorted(members[n].path for n in chosen.sources) == sorted(expected)
    assert list(chosen.sources) == sorted(chosen.sources)
    # One more memory moves at most one other out of the sample.
    ok(write(w.store, WriteInput(title="Late", claim="A late memory.", path="areas/h.html")))
    grown = ok(w.store.version_at(w.main()))
    more = dict(VECTORS, **{"areas/h.html": [0.5, 0.5, 0.5, 0.5]})
    later = mining_input(corpus_order(grown), vectors_for(grown, more), limit=3)
    after = {corpus_order(grown)[n].path for n in later.sources}
    assert len(set(expected) - after) <= 1


def test_only_the_sample_are_sources_and_any_memory_a_target() -> None:
    _, version = store()
    members = corpus_order(version)
    chosen = mining_input(members, vectors_for(version), limit=1)
    [source] = [members[n].path for n in chosen.sources]
    edges = mine_edges(chosen, vectors_for(version))
    assert (source, len(edges)) == ("areas/d.html", 2)  # d's digest is the lowest
    assert all(source in (e.source, e.target) for e in edges)
    assert sorted((e.source, e.target) for e in edges) == sorted(
        (a, b) for a, b, _ in EDGES if source in (a, b))
    assert all(isinstance(e, MinedEdge) for e in edges)
