"""What a sleep run needs from outside, built by the composition root.

``SleepDeps`` is a frozen value: the git repository, the clock, the author, the state
plane, the embedder and its vector cache, and the merge gate. The gate has no default
here on purpose: this room cannot import the evaluation code a gate is made of, and a
default it picked silently would be a composition nobody can see. The CLI passes one
(``compose.sleep.head_gate``) or merge cannot be called.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from returns.io import IOResult, IOSuccess

from memhtml.contracts.errors import StateError
from memhtml.contracts.journals import Journals
from memhtml.contracts.services import (
    AccessCount,
    AccessKind,
    Clock,
    Counter,
    CounterKey,
    CounterKind,
    Detection,
    DocumentEmbedder,
    GitService,
    LanguageModel,
    MinedRow,
    QuietRun,
    Signature,
    StatePlane,
)
from memhtml.contracts.transcripts import TranscriptSource
from memhtml.contracts.vectors import VectorCacheStore
from memhtml.domain.thresholds import (
    ARCHIVE_SHARE,
    RETENTION_GRACE_DAYS,
    VECTOR_COVERAGE_FLOOR,
)
from memhtml.head import HeadVersion
from memhtml.store.deps import StoreDeps
from memhtml.store.snapshot import SnapshotCache


@dataclass(frozen=True, slots=True)
class GateVerdict:
    """What the merge gate said: passed or not, one line, and its report as data."""

    passed: bool
    summary: str
    detail: Mapping[str, object] = field(default_factory=dict)
    violations: tuple[str, ...] = ()
    """One line per target the gate lost, for a refusal's list."""


Gate = Callable[[HeadVersion, HeadVersion], GateVerdict]
"""The pre-merge gate over the run's base and its tip."""


PhaseProgress = Callable[[int, str, str], None]
"""Told ``(position, phase, what)`` as each phase starts and ends (CLI progress)."""


def _quiet(_position: int, _phase: str, _what: str) -> None:
    pass


@dataclass(frozen=True)
class SleepDeps:
    """Built once by the composition root and handed to every sleep entry point."""

    git: GitService
    clock: Clock
    author: Signature
    state: StatePlane
    gate: Gate
    """No default: see the module docstring."""
    main: str = "main"
    """The branch a run is cut from and merged into."""
    embedder: DocumentEmbedder | None = None
    model: LanguageModel | None = None
    """The language model the model phases ask; None runs them without one."""
    model_notes: Callable[[], tuple[str, ...]] | None = None
    """What the model found out about its endpoint during the run (a structured-output
    form refused, the one used instead), for the run report's notes."""
    transcripts: TranscriptSource | None = None
    """Where trace-consolidation reads session transcripts (None: no source set)."""
    embedder_name: str = "none"
    embedder_problem: str | None = None
    """Why the configured embedder cannot be used on this machine (preflight refuses)."""
    vectors: VectorCacheStore | None = None
    """This clone's vector cache (preflight loads, fills and saves it)."""
    coverage_floor: float = VECTOR_COVERAGE_FLOOR
    retention_grace_days: float = RETENTION_GRACE_DAYS
    """Days from creation during which retention-triage archives nothing (the store
    setting ``retention_grace_days``)."""
    archive_share: float = ARCHIVE_SHARE
    """The most of the base's live memories a run may archive with nothing standing
    for them before merge refuses it (``sleep.loss``)."""
    snapshots: SnapshotCache | None = None
    """This clone's snapshots, which a cold load on main starts from."""
    worktree: Path | None = None
    git_dir: Path | None = None
    journals: Journals | None = None
    """The checkout's marks of writes in flight (``StoreDeps.journals``), which the
    merge leaves before it moves main."""
    progress: PhaseProgress = _quiet

    @property
    def main_ref(self) -> str:
        return self.main if self.main.startswith("refs/") else f"refs/heads/{self.main}"

    def main_deps(self) -> StoreDeps:
        """The store on main, with the checkout merge brings up to date."""
        return StoreDeps(git=self.git, clock=self.clock, author=self.author, branch=self.main,
                         worktree=self.worktree, git_dir=self.git_dir,
                         journals=self.journals, snapshots=self.snapshots)

    def branch_deps(self, branch: str, stamp: datetime) -> StoreDeps:
        """The store on a run branch: every commit stamped with the run's one clock
        reading, and no checkout (the checkout is on main; a run never touches it)."""
        return StoreDeps(git=self.git, clock=StampClock(stamp, self.clock), author=self.author,
                         branch=branch)


class StampClock:
    """A clock that always reads the run's stamp (its waits are the real clock's), so a
    run's commits carry one time and a resume reproduces them."""

    def __init__(self, stamp: datetime, clock: Clock) -> None:
        self._stamp = stamp
        self._clock = clock

    def now(self) -> datetime:
        return self._stamp

    def sleep(self, seconds: float) -> None:
        self._clock.sleep(seconds)


class DryState:
    """The state plane as a dry run sees it: reads pass through, writes are answered as
    if made and never made. A counter a dry run bumped would let the next real run
    promote on one reading."""

    def __init__(self, plane: StatePlane) -> None:
        self._plane = plane

    def bump(self, counter: CounterKey, run_id: str, threshold: int, at: datetime
             ) -> IOResult[Detection, StateError]:
        def would(current: int) -> Detection:
            return Detection(current + 1, counted=True, promotes=current + 1 == threshold)

        return self._plane.detections(counter).map(would)

    def detections(self, counter: CounterKey) -> IOResult[int, StateError]:
        return self._plane.detections(counter)

    def readings(self, counter: CounterKey) -> IOResult[tuple[str, ...], StateError]:
        return self._plane.readings(counter)

    def counters(self, kind: CounterKind) -> IOResult[tuple[Counter, ...], StateError]:
        return self._plane.counters(kind)

    def mark_consolidated(self, session_ids: Collection[str], run_id: str, at: datetime
                          ) -> IOResult[tuple[str, ...], StateError]:
        return self._plane.unconsolidated(session_ids)

    def unconsolidated(self, session_ids: Collection[str]) -> IOResult[tuple[str, ...], StateError]:
        return self._plane.unconsolidated(session_ids)

    def append_access(self, path: str, at: datetime, kind: AccessKind
                      ) -> IOResult[None, StateError]:
        return IOSuccess(None)

    def access_counts(self, since: datetime, kind: AccessKind = "read"
                      ) -> IOResult[Mapping[str, AccessCount], StateError]:
        return self._plane.access_counts(since, kind)

    def mined_edges(self, commit: str, basis: str
                    ) -> IOResult[tuple[MinedRow, ...] | None, StateError]:
        return self._plane.mined_edges(commit, basis)

    def save_mined_edges(self, commit: str, basis: str, rows: Sequence[MinedRow]
                         ) -> IOResult[None, StateError]:
        # A cache, so nothing a later run counts on is lost; dropped all the same, so a
        # dry run leaves the state plane byte for byte as it found it.
        return IOSuccess(None)

    def record_quiet_run(self, run: QuietRun) -> IOResult[None, StateError]:
        return IOSuccess(None)

    def quiet_runs(self) -> IOResult[tuple[QuietRun, ...], StateError]:
        return self._plane.quiet_runs()
