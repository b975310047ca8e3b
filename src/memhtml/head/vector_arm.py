"""The vector arm: every embedded active record scored against a query vector.

A record's rows are its passages (``head.passages``) when the vectors hold them, and
the record scores as its best passage; the rows of a version and one cache are
stacked once and kept, so a long-lived process pays for the stack once. Pure: the
caller owns the vectors and the query vector.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.vectors import VectorCache
from memhtml.head.indexes import Indexes, is_active
from memhtml.head.passages import stored_passages


class HeadVectors(Protocol):
    """Vectors by key (a content hash, or a passage key). A dict fits; so does a
    long-lived process's cache."""

    def get(self, content_hash: str, /) -> npt.ArrayLike | None: ...


@dataclass(frozen=True, slots=True, eq=False)
class _VectorMatrix:
    """The embedded active records of one version in one vector space, stacked: one
    row per passage, a record's rows together from ``starts[i]``."""

    records: tuple[MemoryRecord, ...]
    matrix: npt.NDArray[np.float32]
    norms: npt.NDArray[np.float32]
    starts: npt.NDArray[np.intp]
    """The first row of each record; ``np.maximum.reduceat`` takes each record's best."""
    passages: int
    """Rows that are passages (the rest are memories' own vectors)."""


_MATRIX_CACHE_SIZE = 4
_matrices: OrderedDict[tuple[int, int], tuple[object, object, _VectorMatrix]] = OrderedDict()


def _build_matrix(indexes: Indexes, vectors: HeadVectors) -> _VectorMatrix:
    """A record's rows are its passages' vectors when ``vectors`` holds them, else its
    own vector (by content hash), else none: a caller's plain mapping of memory vectors
    ranks as it always did, and a store's search, which runs the arm only once every
    memory's passages are held (``compose.vectors``), ranks by passages alone."""
    records: list[MemoryRecord] = []
    rows: list[npt.NDArray[np.float32]] = []
    starts: list[int] = []
    passages = 0
    for record in indexes.records.values():
        if not is_active(record):
            continue
        found = stored_passages(record, vectors)
        if found:
            passages += len(found)
        else:
            vector = vectors.get(record.content_hash)
            if vector is None:
                continue
            found = [vector]
        records.append(record)
        starts.append(len(rows))
        rows.extend(np.asarray(vector, dtype=np.float32).ravel() for vector in found)
    matrix = np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) if rows else np.zeros(0, dtype=np.float32)
    norms[norms == 0.0] = 1.0
    return _VectorMatrix(tuple(records), matrix, norms, np.asarray(starts, dtype=np.intp),
                         passages)


def _vector_matrix(indexes: Indexes, vectors: HeadVectors) -> _VectorMatrix:
    """The stacked vectors of a version, built once per (version, cache) pair.

    Stacking 5,000 vectors cost about 20 ms, far more than the product itself, so a
    long-lived process keeps the last few stacks. Only an immutable ``VectorCache``
    is remembered: a caller's plain mapping may change between two searches.
    """
    if not isinstance(vectors, VectorCache):
        return _build_matrix(indexes, vectors)
    key = (id(indexes.records), id(vectors))
    hit = _matrices.get(key)
    if hit is not None and hit[0] is indexes.records and hit[1] is vectors:
        _matrices.move_to_end(key)
        return hit[2]
    built = _build_matrix(indexes, vectors)
    _matrices[key] = (indexes.records, vectors, built)
    while len(_matrices) > _MATRIX_CACHE_SIZE:
        _matrices.popitem(last=False)
    return built


def vector_scores(
    indexes: Indexes,
    vectors: HeadVectors,
    query_vector: npt.ArrayLike,
    admit: Callable[[MemoryRecord], bool] | None = None,
    cap: int | None = None,
) -> list[tuple[str, float]]:
    """Cosine of every admitted, active, embedded record against the query vector: a
    record with passages scores as its best passage.

    With ``cap`` and no scope, only the best ``cap`` (ties included) are returned,
    picked in numpy, so the arm never turns the whole corpus into Python tuples.
    """
    query = np.asarray(query_vector, dtype=np.float32).ravel()
    query_norm = float(np.linalg.norm(query))
    if query_norm == 0.0:
        return []
    stacked = _vector_matrix(indexes, vectors)
    if not stacked.records:
        return []
    cosines = (stacked.matrix @ query) / (stacked.norms * query_norm)
    if len(cosines) != len(stacked.records):
        # A memory scores as its best passage: the part of it that answers the query.
        cosines = np.maximum.reduceat(cosines, stacked.starts)
    if admit is None and cap is not None and len(cosines) > cap:
        kth = np.partition(cosines, len(cosines) - cap)[len(cosines) - cap]
        keep = np.flatnonzero(cosines >= kth)
        return [(stacked.records[i].path, float(cosines[i])) for i in keep.tolist()]
    return [
        (record.path, float(cosine))
        for record, cosine in zip(stacked.records, cosines.tolist(), strict=True)
        if admit is None or admit(record)
    ]
