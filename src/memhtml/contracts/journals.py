"""The marks of writes in flight: what one holds, and the port that keeps them.

Every write to a store with a checkout leaves a mark before it moves the branch, and
rewrites it once it has landed (``store.checkout``, ``store.recovery``): a process
killed between the two, or a person's commit made from an index read before the
write, is noticed from the mark by the next command and finished or undone. The marks
are this clone's own state (``<git-dir>/memhtml/pending/`` on disk), never the tree's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from returns.io import IOResult


@dataclass(frozen=True, slots=True)
class PathStep:
    """One path of a write: its blob before and the blob the write commits (None:
    absent). The checkout is brought to the branch's blob, which may be a later
    writer's; ``after`` is what a revert check compares against."""

    path: str
    before: str | None
    after: str | None = None


@dataclass(frozen=True, slots=True)
class Journal:
    """The durable mark of one write, under its ``name`` in the ``Journals`` that
    holds it.

    Written before the branch moves (``commit`` None, ``parent`` the expected tip);
    rewritten with ``commit`` once the write has landed, and kept a while after, so
    a person's commit made from an index read before the write (which would undo
    it) is noticed and undone in turn.
    """

    name: str
    ref: str
    steps: tuple[PathStep, ...]
    parent: str | None = None
    commit: str | None = None
    at: float = 0.0
    """When the mark was written (the injected clock's time, as a POSIX timestamp)."""
    synced: bool = False
    """The checkout's index has been brought up to date for this write."""
    target: str | None = None
    """Set for a fast-forward (the sleep merge): the existing commit the branch is
    moved to from ``parent``, rather than a new commit made on it. Such a write has
    landed once the branch holds ``target``."""
    merge_parent: str | None = None
    """Set for a merge (``memhtml sync``): the commit's second parent, so the write is
    recognised by both of its parents when the process died before marking it landed."""
    received: tuple[str, ...] | None = ()
    """The paths whose index entry bringing the checkout up to date set to the write's
    blobs (every follow adds to it; a checkout on another branch counts as all of
    them). A path never there is one the person's index never held as written, which
    is what tells a commit from a stale index (``recovery``). None: a mark an earlier
    release wrote, read as all of them."""


@dataclass(frozen=True, slots=True)
class JournalUnrecorded:
    """A mark could not be written: where, and why (a write then commits nothing)."""

    reason: str


class Journals(Protocol):
    """This clone's marks of writes in flight.

    ``put`` is durable when it answers (a kill after it finds the mark), and atomic (a
    kill during it leaves the older mark or none, never half of one). Reading is
    total: a mark that cannot be read is passed over, never an error, since the next
    command must still run (``doctor`` names what stands where a mark belongs).
    """

    def new_name(self) -> str:
        """A name no mark of this clone holds, for a new write's mark."""
        ...

    def put(self, journal: Journal) -> IOResult[Journal, JournalUnrecorded]:
        """Write ``journal`` under its name, replacing the mark there."""
        ...

    def drop(self, journal: Journal) -> None:
        """Remove the mark (one already gone is fine; one that cannot be removed is
        only looked at again, harmlessly)."""
        ...

    def read_all(self) -> tuple[Journal, ...]:
        """Every mark, oldest first."""
        ...

    def sweep(self, now: float) -> None:
        """Remove what killed writers left half-written, once it is old enough that
        no live writer can still be writing it (``now``: a POSIX timestamp)."""
        ...
