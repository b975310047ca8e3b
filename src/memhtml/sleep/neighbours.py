"""Corpus order and the neighbour scan the cosine phases share.

**Corpus order** is the active non-task records, oldest first by ``created_at``.
``memhtml-created`` is a fixed-width UTC instant (``YYYY-MM-DDTHH:MM:SSZ``), so text
order is time order. Two files written in one second tie; when the caller hands in how
long each has been on the branch (dedup-merge does, from git), the file committed first
comes first, and the path settles what is left, so two runs number the corpus alike. A
record's index in it is the offset ``domain.merge.CorpusMember`` takes: the keeper of a
fold is the older file, and the offset is how older is told.

**The scan** compares unit vectors (cosine) in row blocks of at most
``SCAN_BLOCK_ROWS`` source rows against every row, so the memory it holds is one block
of ``block x n`` similarities, never the ``n x n`` matrix: 5,000 memories would need
100 MB for it, 50,000 ten gigabytes. Each source row keeps its ``k`` best neighbours at
or above the floor (strictly above when asked), ties going to the smaller path.

The result must not depend on the block size or on the order the members came in, and
a float32 matrix product cannot promise that: the same dot product may round
differently in another block shape. So the product only nominates: a row's entries
within a slack of the floor, and when more than ``k`` are, those within the slack of its
k-th best. Each nominee's similarity is then recomputed on its own, in float64 over the
float32 unit vectors (each product of two float32s is exact in float64, and the sum runs
over one row in one fixed order), and that value is the one compared, ranked and
returned. Two rows meeting in a pair compute
the same number, so an unordered pair found from both ends agrees with itself.

A member with no usable vector (none cached for its content hash, an empty article, a
zero or non-finite vector, one of another width) is left out of the scan and counted.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.view import HeadView
from memhtml.domain.merge import keeper_key
from memhtml.head import VectorCache, is_active

SCAN_BLOCK_ROWS: Final = 512
"""Most source rows compared with the whole matrix at once."""
_UNIT_ROUNDING: Final = 2.0**-22
"""A float32 dot product of two unit vectors is off by at most about ``d`` units in
the last place (2**-24 each); four times that per dimension is the nomination margin."""
_MIN_SLACK: Final = 1e-5

_Ints = npt.NDArray[np.intp]
_Floats = npt.NDArray[np.float64]


def corpus_order(view: HeadView, arrivals: Mapping[str, int] | None = None
                 ) -> tuple[MemoryRecord, ...]:
    """The active non-task records, oldest first by ``domain.merge.keeper_key``: the
    creation stamp, then (for stamps that tie) how long the file has been on the branch
    (``arrivals``, from ``Repository.arrivals``; a path it lacks counts as just
    arrived), then the path."""
    on_branch = arrivals or {}
    return tuple(sorted((r for r in view.records()
                         if is_active(r) and r.memory_type != "task"),
                        key=lambda r: keeper_key(r.created_at, on_branch.get(r.path, 0),
                                                 r.path)))


def tied_paths(view: HeadView) -> tuple[str, ...]:
    """The active non-task records whose creation stamp another one shares, sorted:
    the only paths whose place in ``corpus_order`` needs their history."""
    by_stamp: dict[str, list[str]] = {}
    for r in view.records():
        if is_active(r) and r.memory_type != "task":
            by_stamp.setdefault(r.created_at, []).append(r.path)
    return tuple(sorted(p for paths in by_stamp.values() if len(paths) > 1 for p in paths))


@dataclass(frozen=True, slots=True, order=True)
class Neighbour:
    """One unordered pair, written once: ``i`` < ``j`` are indices into the members
    the scan was given (corpus offsets when those came from ``corpus_order``)."""

    i: int
    j: int
    similarity: float


@dataclass(frozen=True, slots=True)
class Neighbours:
    """What a scan found: the pairs sorted by ``(i, j)``, and what it could compare."""

    pairs: tuple[Neighbour, ...]
    with_vector: int
    """Members with a usable vector: the rows every source was compared with."""
    without_vector: int
    """Members left out for want of one."""
    scanned: int
    """Source rows compared (the sources asked for that have a vector)."""


def usable_vector(record: MemoryRecord, cache: VectorCache) -> npt.NDArray[np.float32] | None:
    """The record's cached vector when the scan can use it, else None."""
    if not record.body_text.strip():
        return None
    vector = cache.get(record.content_hash)
    if vector is None or vector.shape != (cache.space.dimension,):
        return None
    wide = np.asarray(vector, dtype=np.float64)
    norm = float(np.sqrt(wide @ wide))
    return np.asarray(vector, dtype=np.float32) if np.isfinite(norm) and norm > 0 else None


def _unit_rows(members: Sequence[MemoryRecord], cache: VectorCache
               ) -> tuple[_Ints, npt.NDArray[np.float32]]:
    """Indices of the members with a usable vector, and their vectors as unit rows."""
    found = [(n, usable_vector(record, cache)) for n, record in enumerate(members)]
    kept = [(n, vector) for n, vector in found if vector is not None]
    rows = np.fromiter((n for n, _ in kept), dtype=np.intp, count=len(kept))
    if not kept:
        return rows, np.zeros((0, cache.space.dimension), dtype=np.float32)
    matrix = np.stack([vector for _, vector in kept])
    # Normalised once, in float64 and stored as float32: each row alone, so a row's
    # unit vector is the same whatever rows sit beside it.
    wide = matrix.astype(np.float64)
    unit = wide / np.sqrt((wide * wide).sum(axis=1))[:, None]
    return rows, unit.astype(np.float32)


def _path_ranks(members: Sequence[MemoryRecord], rows: _Ints) -> _Ints:
    order = sorted(range(len(rows)), key=lambda r: members[int(rows[r])].path)
    ranks = np.empty(len(rows), dtype=np.intp)
    ranks[np.asarray(order, dtype=np.intp)] = np.arange(len(rows), dtype=np.intp)
    return ranks


def _exact(unit: npt.NDArray[np.float32], left: _Ints, right: _Ints) -> _Floats:
    """Similarities of the row pairs ``(left[n], right[n])``, each summed on its own.
    The elementwise product is symmetric bit for bit, so (a, b) and (b, a) agree."""
    products = unit[left].astype(np.float64) * unit[right].astype(np.float64)
    return np.asarray(products.sum(axis=1), dtype=np.float64)


def _top_per_row(src: _Ints, dst: _Ints, sims: _Floats, ranks: _Ints, k: int
                 ) -> tuple[_Ints, _Ints, _Floats]:
    """Each source row's ``k`` best: highest similarity first, then smaller path."""
    order = np.lexsort((ranks[dst], -sims, src))
    src, dst, sims = src[order], dst[order], sims[order]
    positions = np.arange(len(src))
    starts = np.ones(len(src), dtype=bool)
    starts[1:] = src[1:] != src[:-1]
    first = np.maximum.accumulate(np.where(starts, positions, 0))
    keep = positions - first < k
    return src[keep], dst[keep], sims[keep]


def scan_neighbours(members: Sequence[MemoryRecord], cache: VectorCache, *, floor: float,
                    k: int, strict: bool = False, sources: Collection[int] | None = None,
                    block: int = SCAN_BLOCK_ROWS) -> Neighbours:
    """Each source's ``k`` nearest members at cosine ``>= floor`` (``> floor`` when
    ``strict``), as unordered pairs deduplicated and sorted by ``(i, j)``.

    ``sources`` are indices into ``members`` whose neighbours are sought (default:
    every member); a neighbour may be any member with a vector. ``block`` (at most
    ``SCAN_BLOCK_ROWS``) changes the memory held, never the answer.
    """
    if k < 1 or block < 1:
        raise ValueError(f"a scan needs k >= 1 and block >= 1, not k={k}, block={block}")
    block = min(block, SCAN_BLOCK_ROWS)
    rows, unit = _unit_rows(members, cache)
    wanted = rows if sources is None else rows[np.isin(rows, np.fromiter(
        sources, dtype=np.intp, count=len(sources)))]
    count = len(rows)
    if count < 2 or not len(wanted):
        return Neighbours((), count, len(members) - count, len(wanted))
    source_rows = np.searchsorted(rows, wanted)
    ranks = _path_ranks(members, rows)
    slack = max(_MIN_SLACK, _UNIT_ROUNDING * unit.shape[1])
    best = min(k, count - 1)
    found: list[tuple[_Ints, _Ints, _Floats]] = []
    for start in range(0, len(source_rows), block):
        chunk = source_rows[start:start + block]
        sims = unit[chunk] @ unit.T
        sims[np.arange(len(chunk)), chunk] = -np.inf
        nominated = sims >= floor - slack
        # Only a row with more than k nominees needs its k-th best: at a high floor,
        # few do, and the partition is most of a block's cost after the product.
        crowded = np.flatnonzero(np.count_nonzero(nominated, axis=1) > best)
        if len(crowded):
            some = sims if len(crowded) == len(chunk) else sims[crowded]
            kth = np.partition(some, count - best, axis=1)[:, count - best]
            nominated[crowded] &= some >= (kth - slack)[:, None]
        near, dst = np.divmod(np.flatnonzero(nominated), count)
        src = chunk[near].astype(np.intp)
        dst = dst.astype(np.intp)
        exact = _exact(unit, src, dst)
        passing = exact > floor if strict else exact >= floor
        found.append(_top_per_row(src[passing], dst[passing], exact[passing], ranks, k))
    return Neighbours(_pairs(rows, found), count, len(members) - count, len(wanted))


def _pairs(rows: _Ints, found: Iterable[tuple[_Ints, _Ints, _Floats]]
           ) -> tuple[Neighbour, ...]:
    unique: dict[tuple[int, int], float] = {}
    for src, dst, sims in found:
        for a, b, sim in zip(rows[src].tolist(), rows[dst].tolist(), sims.tolist(),
                             strict=True):
            unique[(a, b) if a < b else (b, a)] = sim
    return tuple(Neighbour(i, j, sim) for (i, j), sim in sorted(unique.items()))
