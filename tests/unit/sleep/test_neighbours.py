"""Corpus order and the neighbour scan: a golden case, the laws (block size and input
order never change the answer; a naive full matrix agrees), what is left out, and the
memory a scan holds."""

from __future__ import annotations

import random
import tracemalloc
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.unit.sleep.sleep_support import AUTHOR, World, ok, world

from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import PathChange, VectorSpace
from memhtml.contracts.vocabulary import MemoryType
from memhtml.head import VectorCache, cache_from
from memhtml.sleep.neighbours import (
    SCAN_BLOCK_ROWS,
    Neighbour,
    Neighbours,
    corpus_order,
    scan_neighbours,
)
from memhtml.store import WriteInput, write

Vectors = Sequence[Sequence[float] | None]


def record(n: int, *, path: str | None = None, body: str = "some text") -> MemoryRecord:
    return MemoryRecord(
        path=path or f"areas/m{n:03d}.html", blob_sha=f"{n:040x}",
        content_hash=f"sha256:{n:064x}", frame_key=f"frame-{n}", archived=False, html="",
        title=f"M{n}", claim=f"claim {n}", body_text=body, memory_type="semantic",
        status="active", created_at="2026-01-01T00:00:00Z",
        updated_at="2026-01-01T00:00:00Z")


def corpus(vectors: Vectors, dimension: int) -> tuple[list[MemoryRecord], VectorCache]:
    """One record per entry, in order; a None entry has no vector cached."""
    members = [record(n) for n in range(len(vectors))]
    cached = {m.content_hash: np.asarray(v, dtype=np.float32)
              for m, v in zip(members, vectors, strict=True) if v is not None}
    return members, cache_from(VectorSpace("test", dimension), cached)


def by_path(members: Sequence[MemoryRecord], found: Neighbours
            ) -> list[tuple[str, str, float]]:
    """The pairs as path pairs (smaller path first), sorted: the order-free answer."""
    out = []
    for p in found.pairs:
        a, b = sorted((members[p.i].path, members[p.j].path))
        out.append((a, b, p.similarity))
    return sorted(out)


def naive(members: Sequence[MemoryRecord], cache: VectorCache, *, floor: float, k: int,
          strict: bool, sources: set[int] | None = None) -> tuple[Neighbour, ...]:
    """The whole n x n matrix, row by row: the reference the blocked scan must equal.
    Cosines of the float32 unit vectors, summed in float64, as the scan defines them."""
    rows: dict[int, npt.NDArray[np.float64]] = {}
    for n, member in enumerate(members):
        vector = cache.get(member.content_hash)
        if vector is None or not member.body_text.strip():
            continue
        wide = np.asarray(vector, dtype=np.float64)
        norm = np.sqrt((wide * wide).sum())
        if norm > 0:
            rows[n] = (wide / norm).astype(np.float32).astype(np.float64)
    pairs: dict[tuple[int, int], float] = {}
    for a, row in rows.items():
        if sources is not None and a not in sources:
            continue
        scored = [(float((row * other).sum()), b) for b, other in rows.items() if b != a]
        passing = [(s, b) for s, b in scored if (s > floor if strict else s >= floor)]
        passing.sort(key=lambda item: (-item[0], members[item[1]].path))
        for s, b in passing[:k]:
            pairs[(min(a, b), max(a, b))] = s
    return tuple(Neighbour(i, j, s) for (i, j), s in sorted(pairs.items()))


# -- corpus order ----------------------------------------------------------------------


def test_corpus_order_is_oldest_first_then_by_path_without_tasks_or_archived() -> None:
    w: World = world(memories=0)
    # z first; five minutes on, a task; five more, b then a in the same second.
    writes: list[tuple[int, str | None, MemoryType]] = [
        (0, "areas/z.html", "semantic"), (5, None, "task"), (5, "areas/b.html", "semantic"),
        (0, "areas/a.html", "semantic")]
    for minutes, path, kind in writes:
        w.clock.advance(minutes * 60.0)
        ok(write(w.store, WriteInput(title=f"Memory {path}", claim=f"Claim of {path}.",
                                     path=path, memory_type=kind)))
    z = w.blob(w.main(), "areas/z.html")
    ok(w.git.commit("main", w.main(), [PathChange("archive/2026/areas/old.html", z)],
                    "an archived copy", AUTHOR, w.clock.now()))
    version = ok(w.store.version_at(w.main()))
    assert sum(r.memory_type == "task" for r in version.records()) == 1
    assert version.get("archive/2026/areas/old.html") is not None
    assert [r.path for r in corpus_order(version)] == [
        "areas/z.html", "areas/a.html", "areas/b.html"]


# -- a golden case ------------------------------------------------------------------------


def rounded(found: Neighbours) -> list[tuple[int, int, float]]:
    return [(p.i, p.j, round(p.similarity, 6)) for p in found.pairs]


def test_a_small_scan_pinned() -> None:
    # m0 and m1 point the same way (cosine 1), m2 is 0.6 from both and 0.8 from m3, m3
    # is orthogonal to m0 and m1, m4 has no vector, and m5 is an empty article whose
    # hash has one anyway.
    members, cache = corpus([[1, 0], [2, 0], [0.6, 0.8], [0, 1], None, [1, 0]], 2)
    members[5] = replace(members[5], body_text="  ")
    found = scan_neighbours(members, cache, floor=0.5, k=1)
    assert rounded(found) == [(0, 1, 1.0), (2, 3, 0.8)]
    assert (found.with_vector, found.without_vector, found.scanned) == (4, 2, 4)
    # With k 2, m2's second place is a tie at 0.6 between m0 and m1: m0 has the smaller
    # path; m0 and m1 each keep m2 as their own second.
    assert rounded(scan_neighbours(members, cache, floor=0.5, k=2)) == [
        (0, 1, 1.0), (0, 2, 0.6), (1, 2, 0.6), (2, 3, 0.8)]
    only_m2 = scan_neighbours(members, cache, floor=0.6, k=1, sources=[2, 4, 99])
    assert rounded(only_m2) == [(2, 3, 0.8)]
    assert only_m2.scanned == 1


def test_a_tie_goes_to_the_smaller_path_whatever_the_input_order() -> None:
    members, cache = corpus([[1, 0], [1, 0], [1, 0]], 2)
    members = [replace(members[0], path="areas/q.html"),
               replace(members[1], path="areas/c.html"),
               replace(members[2], path="areas/x.html")]
    found = scan_neighbours(members, cache, floor=0.9, k=1, sources=[0])
    assert [(members[p.i].path, members[p.j].path) for p in found.pairs] == [
        ("areas/q.html", "areas/c.html")]


def test_strict_floor_leaves_out_a_pair_exactly_at_it() -> None:
    members, cache = corpus([[1, 0], [1, 0]], 2)
    assert scan_neighbours(members, cache, floor=1.0, k=1).pairs == (Neighbour(0, 1, 1.0),)
    assert scan_neighbours(members, cache, floor=1.0, k=1, strict=True).pairs == ()


def test_zero_and_wrong_width_vectors_are_left_out_and_counted() -> None:
    members, cache = corpus([[0, 0], [1, 0], [1, 0]], 2)
    wide = cache_from(cache.space, {**dict(cache.vectors.items()),
                                    members[2].content_hash: np.ones(3, dtype=np.float32)})
    found = scan_neighbours(members, wide, floor=0.0, k=3)
    assert (found.pairs, found.with_vector, found.without_vector) == ((), 1, 2)


def test_a_bad_argument_is_refused() -> None:
    members, cache = corpus([[1, 0]], 2)
    with pytest.raises(ValueError, match="k >= 1"):
        scan_neighbours(members, cache, floor=0.5, k=0)
    with pytest.raises(ValueError, match="block >= 1"):
        scan_neighbours(members, cache, floor=0.5, k=1, block=0)


# -- the laws -------------------------------------------------------------------------------

# Small integer coordinates, so duplicates, parallel vectors and ties are common.
_VECTORS = st.integers(2, 5).flatmap(lambda d: st.tuples(st.just(d), st.lists(
    st.one_of(st.none(), st.lists(st.integers(-3, 3), min_size=d, max_size=d)),
    max_size=24)))
_FLOORS = st.sampled_from([-1.0, 0.0, 0.5, 0.8, 0.92, 1.0])


@given(_VECTORS, _FLOORS, st.integers(1, 4), st.booleans())
def test_block_size_never_changes_the_answer_and_a_full_matrix_agrees(
        drawn: tuple[int, list[list[int] | None]], floor: float, k: int, strict: bool) -> None:
    dimension, vectors = drawn
    members, cache = corpus(vectors, dimension)
    answers = [scan_neighbours(members, cache, floor=floor, k=k, strict=strict, block=b)
               for b in (SCAN_BLOCK_ROWS, 7, 1)]
    assert answers[0] == answers[1] == answers[2]
    assert answers[0].pairs == naive(members, cache, floor=floor, k=k, strict=strict)
    assert all(p.i < p.j for p in answers[0].pairs)


@given(_VECTORS, _FLOORS, st.integers(1, 4), st.booleans(), st.randoms(use_true_random=False))
def test_the_order_of_the_members_never_changes_the_answer(
        drawn: tuple[int, list[list[int] | None]], floor: float, k: int, strict: bool,
        shuffler: random.Random) -> None:
    dimension, vectors = drawn
    members, cache = corpus(vectors, dimension)
    shuffled = list(members)
    shuffler.shuffle(shuffled)
    first = scan_neighbours(members, cache, floor=floor, k=k, strict=strict, block=7)
    second = scan_neighbours(shuffled, cache, floor=floor, k=k, strict=strict, block=7)
    assert by_path(members, first) == by_path(shuffled, second)


@given(_VECTORS, _FLOORS, st.integers(1, 4), st.sets(st.integers(0, 30)))
def test_sources_limit_the_rows_scanned_never_the_neighbours(
        drawn: tuple[int, list[list[int] | None]], floor: float, k: int, sources: set[int]
) -> None:
    dimension, vectors = drawn
    members, cache = corpus(vectors, dimension)
    found = scan_neighbours(members, cache, floor=floor, k=k, sources=sources, block=3)
    assert found.pairs == naive(members, cache, floor=floor, k=k, strict=False,
                                sources=sources)


def test_random_wide_vectors_agree_with_the_full_matrix() -> None:
    generator = np.random.default_rng(15)
    vectors = generator.standard_normal((300, 64)).astype(np.float32)
    vectors[150:] = vectors[:150] + 0.3 * generator.standard_normal((150, 64))
    members, cache = corpus(vectors.tolist(), 64)
    found = scan_neighbours(members, cache, floor=0.85, k=5, block=64)
    assert found.pairs  # the perturbed copies are near their originals
    assert found.pairs == naive(members, cache, floor=0.85, k=5, strict=False)


# -- memory --------------------------------------------------------------------------------


def test_a_scan_never_holds_the_whole_matrix() -> None:
    n = 4000
    vectors = np.random.default_rng(7).standard_normal((n, 8)).astype(np.float32)
    members, cache = corpus(vectors.tolist(), 8)
    tracemalloc.start()
    try:
        scan_neighbours(members, cache, floor=0.99, k=5)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n * n * 4 // 2  # the n x n float32 matrix would be 64 MB
