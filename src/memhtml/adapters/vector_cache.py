"""The vector cache on disk as the ``VectorCacheStore`` port: the handle every command
that opens a store wires, kept light. The file sets' format, healing and merge live in
``vector_files`` (numpy, temporary files), imported when a cache is loaded or saved,
so a command that never touches vectors does not pay for them at start-up.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from returns.io import IOResult

from memhtml.adapters.vector_layout import DEFAULT_COMPACTION, MANIFEST, Compaction
from memhtml.contracts.local_files import read_regular
from memhtml.contracts.services import VectorSpace
from memhtml.contracts.vectors import Covering, LoadedVectors, VectorCache, VectorCacheFault

if TYPE_CHECKING:
    from memhtml.adapters.vector_files import WarmSets


class _Warm:
    """What one handle read or wrote last (``vector_files.WarmSets``), made on first
    use so that wiring a handle imports nothing more."""

    __slots__ = ("_lock", "_sets")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sets: WarmSets | None = None

    def sets(self) -> WarmSets:
        from memhtml.adapters.vector_files import WarmSets

        with self._lock:
            if self._sets is None:
                self._sets = WarmSets()
            return self._sets


@dataclass(frozen=True, slots=True)
class VectorFiles:
    """The vector cache under ``root`` as a ``VectorCacheStore``: one file set per space.

    ``load`` heals (``load_or_heal``) and ``save`` merges (``save_cache``); either's
    failure is a ``VectorCacheFault`` whose reason names the folder. A handle keeps
    the sets it read or wrote last (a holder outside equality and hashing): kept by
    a long-lived process, a load whose manifest has not changed reads nothing more,
    and one that finds segments added reads just those. ``compaction`` says when a
    save folds segments (``vector_layout.Compaction``).
    """

    root: Path
    compaction: Compaction = DEFAULT_COMPACTION
    _warm: _Warm = field(default_factory=_Warm, init=False, repr=False, compare=False,
                         hash=False)

    def load(self, space: VectorSpace) -> IOResult[LoadedVectors, VectorCacheFault]:
        from memhtml.adapters.vector_files import fault_of, load_or_heal

        loaded: IOResult[LoadedVectors, VectorCacheFault] = load_or_heal(
            self.root, space, warm=self._warm.sets()).alt(fault_of)
        return loaded

    def save(self, cache: VectorCache, covering: Covering | None = None
             ) -> IOResult[int, VectorCacheFault]:
        from memhtml.adapters.vector_files import fault_of, save_cache

        saved: IOResult[int, VectorCacheFault] = save_cache(
            self.root, cache, warm=self._warm.sets(), compaction=self.compaction,
            covering=covering).map(lambda counts: counts.stored).alt(fault_of)
        return saved

    def mark_covered(self, space: VectorSpace, covering: Covering
                     ) -> IOResult[bool, VectorCacheFault]:
        from memhtml.adapters.vector_files import fault_of, mark_covered

        marked: IOResult[bool, VectorCacheFault] = mark_covered(
            self.root, space, covering, warm=self._warm.sets()).alt(fault_of)
        return marked

    def compact(self, space: VectorSpace) -> IOResult[int, VectorCacheFault]:
        """Fold the set of ``space`` into one base; the vectors it holds. What loads
        does not change; saves fold by ``compaction`` on their own."""
        from memhtml.adapters.vector_files import compact, fault_of

        folded: IOResult[int, VectorCacheFault] = compact(
            self.root, space, warm=self._warm.sets()).alt(fault_of)
        return folded

    def saved_spaces(self) -> tuple[VectorSpace, ...]:
        """The spaces the manifests under ``root`` name, read without judging the
        sets: a set that does not add up is the next load's to repair. A manifest
        that is not JSON naming a model and a width is passed over."""
        try:
            manifests = sorted(self.root.glob(f"*/{MANIFEST}"))
        except OSError:
            return ()
        found: list[VectorSpace] = []
        for manifest in manifests:
            try:
                # Only a regular file: a FIFO at a manifest's name must not hold the
                # command (the load that follows judges and clears it).
                data = json.loads(read_regular(manifest).decode("utf-8"))
            except (OSError, ValueError):
                continue
            if not isinstance(data, dict):
                continue
            model_id, dimension = data.get("model_id"), data.get("dimension")
            if isinstance(model_id, str) and isinstance(dimension, int) \
                    and not isinstance(dimension, bool) and dimension >= 1:
                found.append(VectorSpace(model_id, dimension))
        return tuple(sorted(found, key=lambda space: space.key))
