"""When each memory came onto the store's branch: its age in this store.

A memory's ``memhtml-created`` says when its author wrote it, which for notes
brought in by ``memhtml import markdown``, a store cloned from elsewhere or files
committed by hand can be years before memhtml held them. Decay models time spent in
memory unreinforced, and time before memhtml held a file was not time memhtml could
have reinforced it; a grace period exists because a memory new to the store has had
no time to be read, linked or corroborated. So both count from the later of
``memhtml-created`` and the file's arrival: the committer time of the first-parent
commit of the run's base that brought the path (``Repository.arrived``), which is when
the branch took it, whatever date its author or its frontmatter gives.

A path the move door moved (``Memhtml-Op: move``), or placement-triage filed
(``Memhtml-Phase: placement-triage``), keeps the arrival of the path it came from when
its bytes did not change on the way; any other move (``git mv`` by hand, a move that
rewrote the file's own links) counts from the move, which only ever makes a memory
younger. A path the base does not hold arrived in this run: now.

Read once a run, for every live memory of the base, by whichever of confidence-decay
and retention-triage asks first: one walk down the base's first-parent history, which
``docs/benchmarks.md`` measures against ``load_head``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Final

from returns.io import IOResult, IOSuccess

from memhtml.contracts.services import Arrival, Repository
from memhtml.head import HeadVersion
from memhtml.sleep.contract import TRAILER_OP, TRAILER_PHASE
from memhtml.store.errors import describe

MOVE_TRAILERS: Final[tuple[tuple[str, str], ...]] = (
    (TRAILER_OP, "move"), (TRAILER_PHASE, "placement-triage"))
"""The commits whose moves an arrival follows back: the move door's and the phase that
files inbox memories under a topic."""


class ArrivalBook:
    """The base's arrivals, read on first demand and kept for the rest of the run.

    Made once by the runner and handed to every phase, as ``TaskBudget`` is; a phase
    environment built without one reads its own."""

    def __init__(self, git: Repository, base: str, base_version: HeadVersion) -> None:
        self._git = git
        self._base = base
        self._version = base_version
        self._found: Mapping[str, Arrival] | None = None

    def read(self) -> IOResult[Mapping[str, Arrival], str]:
        """Every live memory's arrival at the base, or why git could not say."""
        if self._found is not None:
            return IOSuccess(self._found)
        paths = [r.path for r in self._version.records() if not r.archived]

        def kept(found: Mapping[str, Arrival]) -> Mapping[str, Arrival]:
            self._found = MappingProxyType(dict(found))
            return self._found

        read: IOResult[Mapping[str, Arrival], str] = self._git.arrived(
            self._base, paths, MOVE_TRAILERS).map(kept).alt(describe)
        return read


def arrived_at(found: Mapping[str, Arrival], path: str, stamp: datetime) -> datetime:
    """When ``path`` came onto the branch, in UTC: its arrival at the base, or the
    run's stamp for a path the base does not hold (this run brought it)."""
    arrival = found.get(path)
    return stamp if arrival is None else arrival.at.astimezone(UTC)
