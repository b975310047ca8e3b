"""The marks of writes in flight, in memory (``Journals``): the twin of
``JournalFiles``, for stores whose checkout is the in-memory git's.

A put replaces the mark whole and makes it the newest, as rewriting a mark's file
gives it a new time on disk; ``read_all`` answers oldest first.
"""

from __future__ import annotations

import itertools
import threading

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.journals import Journal, JournalUnrecorded


class MemoryJournals:
    """Marks by name, in the order they were last put. ``refuse`` makes every put
    fail, as a disk that cannot be written does."""

    def __init__(self, *, refuse: str | None = None) -> None:
        self._lock = threading.Lock()
        self._marks: dict[str, Journal] = {}
        self._names = itertools.count(1)
        self.refuse = refuse

    def new_name(self) -> str:
        with self._lock:
            return f"mark-{next(self._names):06d}.json"

    def put(self, journal: Journal) -> IOResult[Journal, JournalUnrecorded]:
        with self._lock:
            if self.refuse is not None:
                return IOFailure(JournalUnrecorded(f"cannot record the write: {self.refuse}"))
            self._marks.pop(journal.name, None)
            self._marks[journal.name] = journal
            return IOSuccess(journal)

    def drop(self, journal: Journal) -> None:
        with self._lock:
            self._marks.pop(journal.name, None)

    def read_all(self) -> tuple[Journal, ...]:
        with self._lock:
            return tuple(self._marks.values())

    def sweep(self, now: float) -> None:
        """Nothing is ever half-written here."""
