"""The snapshot port in memory: the twin of ``SnapshotFiles``, held to the same
contract (``tests/contract/test_snapshot_contract.py``).

It keeps each version as it was saved (a snapshot of a version is that version), so
a store over it runs the same cold-start path as one over disk (keys newest first,
a miss discarded, a save keeping the newest two) without a file. ``damage`` and
``plant`` stand for what a disk can hold that a save never wrote: a damaged file,
something under a commit's name that is no snapshot; ``failing_saves`` for a full
disk.
"""

from __future__ import annotations

import threading

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.head import HeadVersion
from memhtml.store.snapshot import SNAPSHOTS_KEPT, SnapshotMiss


class MemorySnapshots:
    """``SnapshotCache`` as a dict, newest saved last; one lock serializes calls."""

    def __init__(self, *, failing_saves: bool = False) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, HeadVersion | str] = {}
        """A version saved, or (a string) why what stands under that key is no snapshot."""
        self.failing_saves = failing_saves
        self.loads = 0
        """How many loads were asked for, for a test of what a cold start reads."""

    def saved(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(reversed(self._kept))

    def load(self, key: str) -> IOResult[HeadVersion, SnapshotMiss]:
        with self._lock:
            self.loads += 1
            found = self._kept.get(key)
        if found is None:
            return IOFailure(SnapshotMiss(key, "no snapshot"))
        if isinstance(found, str):
            return IOFailure(SnapshotMiss(key, found))
        return IOSuccess(found)

    def save(self, version: HeadVersion) -> IOResult[None, SnapshotMiss]:
        if version.sha is None:
            return IOFailure(SnapshotMiss("", "an empty version has no commit"))
        if self.failing_saves:
            return IOFailure(SnapshotMiss(version.sha, "not written: no space left"))
        with self._lock:
            self._kept.pop(version.sha, None)
            self._kept[version.sha] = version
            for stale in list(self._kept)[:-SNAPSHOTS_KEPT]:
                del self._kept[stale]
        return IOSuccess(None)

    def discard(self, key: str) -> None:
        with self._lock:
            self._kept.pop(key, None)

    # -- what a disk can hold that no save wrote ----------------------------------------

    def damage(self, key: str, reason: str = "unreadable: damaged") -> None:
        """Make the snapshot under ``key`` one that will not load."""
        with self._lock:
            if key in self._kept:
                self._kept[key] = reason

    def plant(self, key: str, reason: str) -> None:
        """Put something that is no snapshot under ``key``, newest."""
        with self._lock:
            self._kept.pop(key, None)
            self._kept[key] = reason
