"""The vector cache: the value, the port that keeps it, and the one rule read off it.

Vectors are keyed by content hash inside one ``VectorSpace``, so an unchanged article
keeps its vector across versions, moves and head-only edits, and a vector of one
space is never compared with one of another. Embedding costs a model call (often an
API bill), so the cache outlives any one command: ``VectorCacheStore`` is where a
clone keeps it between runs. The disk adapter (``memhtml.adapters.vector_files``)
and its in-memory double (``memhtml.adapters.memory_vectors``) are held to one
contract suite, ``tests/contract/test_vector_cache_contract.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from immutables import Map
from returns.io import IOResult

from memhtml.contracts.services import Vector, VectorSpace


@dataclass(frozen=True, slots=True)
class VectorCache:
    """Vectors of one space, by content hash."""

    space: VectorSpace
    vectors: Map[str, Vector]

    def get(self, content_hash: str, /) -> Vector | None:
        return self.vectors.get(content_hash)

    def __len__(self) -> int:
        return len(self.vectors)


def empty_vector_cache(space: VectorSpace) -> VectorCache:
    return VectorCache(space, Map())


_FLOAT32 = np.dtype(np.float32)


def cache_from(space: VectorSpace, vectors: Mapping[str, Vector]) -> VectorCache:
    """A cache over vectors loaded from elsewhere (a file): each a flat float32 array,
    read-only. One that is so already (a row of a read-only matrix) is taken as it
    is; any other is viewed (or converted) and the view made read-only, so the
    caller's own array stays writable."""
    frozen: dict[str, Vector] = {}
    for key, value in vectors.items():
        if type(value) is np.ndarray and value.dtype is _FLOAT32 and value.ndim == 1 \
                and not value.flags.writeable:
            frozen[key] = value
            continue
        array = np.asarray(value, dtype=np.float32).ravel()
        array.setflags(write=False)
        frozen[key] = array
    return VectorCache(space, Map(frozen))


@dataclass(frozen=True, slots=True)
class VectorCacheFault:
    """The cache could not be read or written. ``reason`` names where (the disk
    adapter: ``vector cache <folder>: <what failed>``), because the fix is usually
    done by hand at that path."""

    reason: str


@dataclass(frozen=True, slots=True)
class LoadedVectors:
    """A space's saved vectors, and ``note`` when loading them had to repair the cache.

    A set that cannot be used (corrupt, or written for a newer format or another
    space) is not a failure: search, status and a sleep run must carry on, and
    ``memhtml embed`` rebuilds it. So the load repairs the cache (deletes the corrupt
    set, moves the foreign one aside), answers with an empty cache, and says what it
    did in ``note``, once: the load that did the repair gives the note, later loads
    find a clean, empty cache and none.
    """

    cache: VectorCache
    note: str | None = None
    covers: str | None = None
    """A commit whose every active memory with text had all its passages in this set
    when a command found so (``VectorCacheStore.mark_covered``), kept only while the
    set still holds every row it held then; None when no such claim stands. What lets
    a write or a search skip walking every record to learn what the set lacks."""
    stamp: SetStamp | None = field(default=None, compare=False)
    """Which state of the set this load read, for a claim made from it (``Covering``):
    ``NO_SET`` when none was saved (or one was just repaired away); None from a store
    that keeps no claims. Not part of the value: two loads of equal vectors are equal
    whichever files they came from."""


@dataclass(frozen=True, slots=True)
class SetStamp:
    """One state of a space's set: the parts it was read from, by name.

    A part is written once under a name never given again, and its rows never change
    (a save adds a new part; a merge or a fold writes new ones and drops the old
    names). So a set that still lists every part a stamp names holds every row the
    stamped state held, and a claim made about that state still stands; a set that
    lost one (repaired, moved aside, folded, restored from an older copy, merged by a
    save that made no claim) lapses the claim for good, whatever rows it gains later.
    Opaque to callers: only the store that made it reads it."""

    parts: tuple[str, ...]


NO_SET = SetStamp(())
"""The stamp of a load that found no set (none saved yet, or one just repaired away):
it held no rows, so a claim made from it stands of any set later found there."""


@dataclass(frozen=True, slots=True)
class Covering:
    """The claim ``mark_covered`` (or a ``save``) records: at ``commit`` the set as
    ``stamp`` read it (plus, for a save, the rows saved) held every passage of every
    active memory with text."""

    commit: str
    stamp: SetStamp
    """The state the claim is about: a load's (``mark_covered``), or the set as saved
    (what a save records)."""


class VectorCacheStore(Protocol):
    """This clone's vector cache: one set of vectors per vector space."""

    def load(self, space: VectorSpace) -> IOResult[LoadedVectors, VectorCacheFault]:
        """The vectors saved for ``space``; an empty cache when none are. Only a
        store that refuses the read (or the repair) is a failure."""
        ...

    def save(self, cache: VectorCache, covering: Covering | None = None
             ) -> IOResult[int, VectorCacheFault]:
        """Merge ``cache`` into the set of its space; the number of vectors the set
        holds afterwards. With ``covering``, also record its claim for the set as
        saved (see ``mark_covered``), when the set still held what ``covering.stamp``
        read; a save that adds nothing records it as ``mark_covered`` does.

        A merge, not a replace: a caller holds the vectors it embedded this time,
        while the set serves every version of the store (and every clone process that
        saved into it), so a hash the set has and ``cache`` lacks is kept. When the
        save adds a hash, ``cache``'s vector wins where both hold one. A save that
        adds no hash changes nothing: within one space a hash's vector is a function
        of its text, so rewriting the set to swap equal vectors would be work for
        nothing. A hash that cannot be stored, or a vector that is not a finite row of
        the space's width, is refused and nothing is saved.
        """
        ...

    def mark_covered(self, space: VectorSpace, covering: Covering
                     ) -> IOResult[bool, VectorCacheFault]:
        """Record that at ``covering.commit`` the set of ``space`` held every passage of
        every active memory with text, so later loads answer it as ``covers``; False,
        and nothing recorded, when no set is saved for ``space`` or it no longer holds
        every row it held when ``covering.stamp`` was read (it was repaired or rebuilt
        since). One claim is kept per set, the last recorded."""
        ...

    def saved_spaces(self) -> tuple[VectorSpace, ...]:
        """Every space a set is saved for, in ``key`` order. Read without repairing
        anything: a set listed here may still load as empty (and be repaired then)."""
        ...


def widest_space(spaces: Iterable[VectorSpace], model_id: str) -> VectorSpace | None:
    """The widest of ``spaces`` for ``model_id``; None when the model has none.

    A saved set answers for its model's width: an endpoint of unconfigured width
    takes it from there instead of a probe call, and a configured width that differs
    from it is a half-migrated space. When one model has sets at several widths the
    widest is taken, so the answer never depends on the order spaces are listed in.
    """
    found = [space for space in spaces if space.model_id == model_id]
    return max(found, key=lambda space: space.dimension) if found else None
