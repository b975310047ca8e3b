"""``VectorCacheStore`` in memory: the test double of ``VectorFiles``, held to the same
contract by ``tests/contract/test_vector_cache_contract.py``.

It keeps the disk's semantics where the port can see them: one set per space key (so
two spaces whose keys collide displace each other, as their folders do), the same
merge and no-op rule on save, the same refusal of a hash the hash list cannot hold
and of a vector that is not a finite row of the space's width, and float32 read-only
copies, so a caller cannot change a saved vector through the array it saved. One
lock serializes every call, so threads may share an instance.
"""

from __future__ import annotations

import threading

import numpy as np
from immutables import Map
from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.adapters.vector_marks import stands
from memhtml.adapters.vector_parts import storable_hash
from memhtml.contracts.services import Vector, VectorSpace
from memhtml.contracts.vectors import (
    NO_SET,
    Covering,
    LoadedVectors,
    SetStamp,
    VectorCache,
    VectorCacheFault,
    empty_vector_cache,
)
from memhtml.head.passages import group_sizes


def _frozen_copy(vector: Vector) -> Vector:
    copy = np.array(vector, dtype=np.float32).ravel()
    copy.setflags(write=False)
    return copy


class MemoryVectors:
    """Sets of vectors by space key, in this process only."""

    def __init__(self, *caches: VectorCache) -> None:
        """Start with ``caches`` as saved sets (an empty one too: the disk can hold a
        set of no vectors)."""
        self._sets: dict[str, VectorCache] = {}
        self.aside: list[VectorCache] = []
        """Sets displaced by a space whose key collides with theirs, oldest first
        (the disk moves such a set aside rather than deleting it)."""
        self._lock = threading.Lock()
        self._parts: dict[str, tuple[str, ...]] = {}
        """Each set's parts, as a disk set's: a new name for every save that adds
        rows; a displaced set's names go with it, never given again."""
        self._marks: dict[str, Covering] = {}
        self._made = 0
        for cache in caches:
            self._put(cache.space.key, VectorCache(
                cache.space, Map({h: _frozen_copy(v) for h, v in cache.vectors.items()})))

    def _put(self, key: str, cache: VectorCache) -> None:
        self._made += 1
        self._parts[key] = (*(self._parts.get(key, ()) if key in self._sets else ()),
                            f"part-{self._made}")
        self._sets[key] = cache

    def _stamp(self, key: str) -> SetStamp:
        held = self._sets.get(key)
        return NO_SET if held is None else SetStamp(self._parts[key])

    def _loaded(self, key: str, held: VectorCache) -> LoadedVectors:
        stamp = self._stamp(key)
        mark = self._marks.get(key)
        return LoadedVectors(held, covers=mark.commit if mark is not None and stands(
            mark, stamp) else None, stamp=stamp)

    def load(self, space: VectorSpace) -> IOResult[LoadedVectors, VectorCacheFault]:
        with self._lock:
            held = self._sets.get(space.key)
            if held is None:
                return IOSuccess(LoadedVectors(empty_vector_cache(space), stamp=NO_SET))
            if held.space == space:
                return IOSuccess(self._loaded(space.key, held))
            self._set_aside(space.key)
            return IOSuccess(LoadedVectors(
                empty_vector_cache(space),
                f"vector cache {space.key}: the set is for {held.space}, not {space}; "
                f"set aside", stamp=NO_SET))

    def save(self, cache: VectorCache, covering: Covering | None = None
             ) -> IOResult[int, VectorCacheFault]:
        space = cache.space
        with self._lock:
            held = self._sets.get(space.key)
            if held is not None and held.space != space:
                self._set_aside(space.key)
                old: Map[str, Vector] | None = None  # a foreign set is never merged with
            else:
                old = held.vectors if held is not None else Map()
            claim = covering if covering is not None and stands(
                covering, self._stamp(space.key)) else None
            base: Map[str, Vector] = Map() if old is None else old
            added = sum(1 for h in cache.vectors if h not in base)
            if added == 0 and old is not None:
                if claim is not None and held is not None:
                    self._marks[space.key] = Covering(claim.commit, self._stamp(space.key))
                return IOSuccess(len(base))
            for content_hash in cache.vectors:
                if not storable_hash(content_hash):
                    return IOFailure(VectorCacheFault(
                        f"vector cache {space.key}: refusing malformed hash {content_hash!r}"))
            copies = {h: _frozen_copy(v) for h, v in cache.vectors.items()}
            for content_hash, copy in copies.items():
                if copy.shape != (space.dimension,):
                    return IOFailure(VectorCacheFault(
                        f"vector cache {space.key}: refusing a vector of {copy.size} values "
                        f"for {content_hash!r} in {space}"))
                if not np.isfinite(copy).all():
                    return IOFailure(VectorCacheFault(
                        f"vector cache {space.key}: refusing a non-finite vector for "
                        f"{content_hash!r}"))
            merged = base.update(copies)
            gaps = group_sizes(list(merged))
            if isinstance(gaps, str):
                return IOFailure(VectorCacheFault(
                    f"vector cache {space.key}: refusing a partial {gaps}"))
            self._put(space.key, VectorCache(space, merged))
            if claim is not None:
                self._marks[space.key] = Covering(claim.commit, self._stamp(space.key))
            return IOSuccess(len(merged))

    def mark_covered(self, space: VectorSpace, covering: Covering
                     ) -> IOResult[bool, VectorCacheFault]:
        with self._lock:
            held = self._sets.get(space.key)
            if held is None or held.space != space or not stands(
                    covering, self._stamp(space.key)):
                return IOSuccess(False)
            self._marks[space.key] = Covering(covering.commit, self._stamp(space.key))
            return IOSuccess(True)

    def saved_spaces(self) -> tuple[VectorSpace, ...]:
        with self._lock:
            return tuple(sorted((held.space for held in self._sets.values()),
                                key=lambda space: space.key))

    def _set_aside(self, key: str) -> None:
        self.aside.append(self._sets.pop(key))
        self._marks.pop(key, None)

    def compact(self, space: VectorSpace) -> IOResult[int, VectorCacheFault]:
        """What ``VectorFiles.compact`` answers: the vectors the set holds. A set in
        memory has no parts to fold."""
        with self._lock:
            held = self._sets.get(space.key)
            return IOSuccess(len(held) if held is not None and held.space == space else 0)
