"""What a phase is handed and what it hands back.

A phase is a function of a ``PhaseEnv`` to a ``PhaseResult``: counts, the commits it
wants (path changes, already decided), the pending marks it earned, and warnings.
It never lands anything itself and never reads a clock: the runner lands its commits on
the run branch, appends its marks to the ledger in the same commit, and hands the next
phase the version at the new tip. A phase that fails returns ``PhaseFault`` (or raises;
the runner turns that into the same value).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, Literal, TypeAlias

from returns.io import IOResult

from memhtml.contracts.services import (
    DocumentEmbedder,
    GitService,
    LanguageModel,
    PathChange,
    Signature,
    StatePlane,
)
from memhtml.contracts.transcripts import TranscriptSource
from memhtml.contracts.vectors import VectorCacheStore
from memhtml.domain.thresholds import DETECTED_TASKS_PER_NIGHT, RETENTION_GRACE_DAYS
from memhtml.head import HeadVersion, VectorCache
from memhtml.sleep.arrivals import ArrivalBook
from memhtml.sleep.budget import CallBudget
from memhtml.sleep.contract import SLEEP_PHASES, PhaseStatus, SleepPhase, stamp_text
from memhtml.sleep.decisions import Decision
from memhtml.sleep.ledger import PendingMark
from memhtml.store.plan import Plan

CountValue: TypeAlias = int | float | str | bool | None
Counts: TypeAlias = Mapping[str, CountValue]


def counts_json(counts: Counts) -> str:
    """The ``Memhtml-Counts`` value: one line of JSON, keys sorted, floats to four
    places (a non-finite one as null)."""
    return json.dumps({k: _plain(v) for k, v in counts.items()}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _plain(value: CountValue) -> CountValue:
    if isinstance(value, float):
        return round(value, 4) if math.isfinite(value) else None
    return value


TASK_PRIORITY: Final[tuple[tuple[str, ...], ...]] = (
    ("trace-consolidation", "task-detection"),
    ("edge-typing",),
    ("dedup-merge",),
    ("entity-resolution",),
)
"""The detectors that mint tasks, most important first: commitments (an agent said it
would do something and nothing shows it done), contradictions (two memories that cannot
both stand), merges the veto refused, names in the entity review band. A detector not
named here ranks last."""
HELD_BACK: Final = DETECTED_TASKS_PER_NIGHT // 2
"""Places a detector leaves free, of the night's ten, while a detector that ranks above
it is still to run tonight (phase order puts the review detectors first)."""


def task_rank(detector: str) -> int:
    """A detector's place in ``TASK_PRIORITY`` (0 first); one not named ranks last."""
    return next((n for n, names in enumerate(TASK_PRIORITY) if detector in names),
                len(TASK_PRIORITY))


class TaskBudget:
    """The detected-task allowance of one run, shared by every phase that mints tasks.

    Made by the run and threaded through each ``PhaseEnv``, never a module counter,
    so two runs in one process hold two budgets. What is refused is counted, so a
    detector pressing on the cap every night shows it.

    Signal before noise (``TASK_PRIORITY``). The phases run in a fixed order that puts
    the review detectors (dedup-merge's vetoes, entity-resolution's band) before the
    ones that find commitments and contradictions, so a first-come budget would let
    reviews take every place. Instead a new task is opened only when

    - fewer than ``limit`` tasks were opened tonight (ten new tasks a night at most);
    - the findings at least as important as it hold fewer than ``limit`` places (an
      open task whose finding stands holds one, refreshed or not: a detector whose ten
      are open opens no more, and a commitment is never turned away because reviews
      are waiting);
    - and, while a detector ranking above it is still to run tonight (``coming``: the
      detectors the run will ask, in phase order), opening it leaves ``HELD_BACK``
      places of the ten free for that one.
    """

    def __init__(self, limit: int = DETECTED_TASKS_PER_NIGHT,
                 coming: Collection[str] = ()) -> None:
        self.limit = limit
        self.coming = frozenset(coming)
        """The detectors that run tonight and may mint (chosen by the runner: selected,
        and with the model or transcripts each needs)."""
        self.minted = 0
        self.refused = 0
        self._held: dict[int, int] = {}

    @property
    def used(self) -> int:
        """Places held tonight: tasks opened, and open tasks whose finding stands."""
        return sum(self._held.values())

    def _above_to_come(self, detector: str) -> bool:
        rank = task_rank(detector)
        at = SLEEP_PHASES.index(detector) if detector in SLEEP_PHASES else -1
        return any(task_rank(other) < rank and other in SLEEP_PHASES
                   and SLEEP_PHASES.index(other) > at for other in self.coming)

    def take(self, detector: str = "") -> bool:
        """A place for a new task of ``detector``'s finding, if the rules above allow."""
        rank = task_rank(detector)
        held_back = HELD_BACK if self._above_to_come(detector) else 0
        ahead = sum(n for r, n in self._held.items() if r <= rank)
        if self.minted >= self.limit or ahead >= self.limit \
                or self.minted + held_back >= self.limit:
            self.refused += 1
            return False
        self.minted += 1
        self._held[rank] = self._held.get(rank, 0) + 1
        return True

    def occupy(self, detector: str = "") -> None:
        """Hold a place for an open task whose finding stands tonight (refreshed or
        left as it is): it goes ahead either way."""
        rank = task_rank(detector)
        self._held[rank] = self._held.get(rank, 0) + 1

    def restore(self, detector: str, opened: int, held: int) -> None:
        """What a phase done by an earlier attempt of the run took: ``opened`` new
        tasks and ``held`` open ones (a resumed night keeps their places). The counts
        come from trailers, so each is taken between 0 and the limit."""
        opened = max(0, min(opened, self.limit))
        rank = task_rank(detector)
        self.minted = min(self.limit, self.minted + opened)
        self._held[rank] = self._held.get(rank, 0) + opened + max(0, min(held, self.limit))


@dataclass(frozen=True)
class PhaseRecord:
    """What became of one phase in one invocation, as the report and the CLI show it."""

    phase: SleepPhase
    status: PhaseStatus
    counts: Counts = field(default_factory=dict)
    commits: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    reason: str | None = None
    """Why it failed, was blocked, or is not built."""
    marks: int = 0
    """Pending marks it added to the ledger (or would have, in a dry run)."""
    observed: Counts = field(default_factory=dict)
    """What this invocation saw that is not a function of the branch (see
    ``PhaseResult.observed``)."""
    changed_paths: int = 0
    """Paths its commits changed (in a dry run: would have changed)."""
    decisions: tuple[Decision, ...] = ()
    """What it decided about each file it changed (in a dry run: would have), with the
    rule and the figures (``sleep.decisions``)."""


@dataclass(frozen=True, slots=True, order=True)
class MinedEdge:
    """A derived ``relates_to`` between two active non-task memories (``source`` <
    ``target``, an unordered pair written once), found by relationship-mining. It lives
    in the run and in the state plane's cache, never in a file: only a person or a
    model's typed, corroborated edge is written."""

    source: str
    target: str
    similarity: float


@dataclass(frozen=True)
class PhaseEnv:
    """Everything a phase may read. ``version`` is the run branch's tip after every
    earlier phase's commits (in a dry run, where nothing commits, the base)."""

    phase: SleepPhase
    run_id: str
    stamp: datetime
    """The run's one clock reading (UTC, whole seconds): the only "now" a phase has."""
    base: str
    base_version: HeadVersion
    version: HeadVersion
    git: GitService
    state: StatePlane
    """The state plane; in a dry run a copy that writes nothing."""
    budget: TaskBudget
    dry_run: bool
    embedder: DocumentEmbedder | None = None
    embedder_name: str = "none"
    embedder_problem: str | None = None
    vectors: VectorCache | None = None
    """The run's vector cache as preflight left it (None: no vector plane)."""
    vector_store: VectorCacheStore | None = None
    """Where the cache is kept between runs (preflight loads, fills and saves it)."""
    coverage_floor: float = 0.95
    retention_grace_days: float = RETENTION_GRACE_DAYS
    """Days from creation during which retention-triage archives nothing."""
    earlier: tuple[PhaseRecord, ...] = ()
    """This invocation's records of the phases before this one."""
    branch: str | None = None
    """The run branch (None in a dry run)."""
    worktree: bool = False
    """Whether a checkout sits beside the repository."""
    mined: tuple[MinedEdge, ...] | None = None
    """relationship-mining's edges in this invocation (None: it has not run here)."""
    model: LanguageModel | None = None
    """The language model a model phase asks (None: no model; such a phase says so)."""
    calls: CallBudget = field(default_factory=CallBudget)
    """The run's model-call budget (``--max-llm-calls``), shared by every model phase;
    a phase draws through ``calls.capped(its own cap)``."""
    deep: bool = False
    """``--deep``: the deep phases' extra passes (placement-triage only runs then)."""
    lateral: tuple[MinedEdge, ...] | None = None
    """relationship-mining's grouping-band edges (``laterally_related``, cosine in
    [0.72, 0.85)), mined only under ``--deep``. Read by the deep phases' community
    grouping alone: retention, PageRank and bridges never see them."""
    transcripts: TranscriptSource | None = None
    """Where trace-consolidation reads session transcripts (None: no source set)."""
    committer: Signature | None = None
    """Who memhtml's own commits are committed by (``SleepDeps.author``): a history
    read counts a run's or a door's commit only when it names this committer (None, in
    an environment built by hand, checks nothing)."""
    dismissed: frozenset[str] = frozenset()
    """Digests of the detected tasks a person closed through a door, read from the
    base's history by the runner (``tasks.dismissed_digests``); a finding among them
    is not opened again."""
    arrivals: ArrivalBook | None = None
    """When each memory of the base came onto the branch (``sleep.arrivals``), read once
    a run by the first phase that asks; None (an environment built by hand): the phase
    reads its own."""

    def arrival_book(self) -> ArrivalBook:
        """The run's arrivals, or a book of this environment's own."""
        return self.arrivals or ArrivalBook(self.git, self.base, self.base_version)

    @property
    def now(self) -> str:
        """The stamp in the format's instant form, for ``memhtml-updated`` and the like."""
        return stamp_text(self.stamp)

    @property
    def year(self) -> int:
        return self.stamp.year


@dataclass(frozen=True)
class PhaseCommit:
    """One commit a phase asks for: a subject, one body line, its path changes, and the
    decisions behind them (the runner records them in this commit, so a change and its
    reason land together)."""

    subject: str
    changes: tuple[PathChange, ...]
    body: str = ""
    decisions: tuple[Decision, ...] = ()


@dataclass(frozen=True)
class PhaseResult:
    """A phase's answer. ``status`` is ``done`` or ``not-built``; a not-built body has
    no commits and no marks."""

    counts: Counts = field(default_factory=dict)
    commits: tuple[PhaseCommit, ...] = ()
    marks: tuple[PendingMark, ...] = ()
    warnings: tuple[str, ...] = ()
    status: Literal["done", "not-built"] = "done"
    reason: str | None = None
    vectors: VectorCache | None = None
    """Preflight's filled cache, handed to the phases after it."""
    observed: Counts = field(default_factory=dict)
    """Readings of this invocation that are not a function of the branch (the
    checkout's changes, vectors embedded now, counters read now). Shown, never
    committed: a resumed run must write the very report the uninterrupted one would."""
    mined: tuple[MinedEdge, ...] | None = None
    """relationship-mining's derived edges, handed to the phases after it."""
    lateral: tuple[MinedEdge, ...] | None = None
    """relationship-mining's grouping-band edges (deep runs only), handed on likewise."""
    decisions: tuple[Decision, ...] = ()
    """Decisions not tied to one commit by the phase: the runner records each in the
    first of the phase's commits that changes its file (or where it went), else in the
    last. A phase of one commit may use either this or ``PhaseCommit.decisions``."""


@dataclass(frozen=True, slots=True)
class PhaseFault:
    """A phase that could not do its work, and why (one line)."""

    reason: str


PhaseBody: TypeAlias = Callable[[PhaseEnv], IOResult[PhaseResult, PhaseFault]]


NO_MODEL: str = "no language model (llm = none): this phase asks one, so it wrote nothing"


def without_model() -> PhaseResult:
    """What a model phase answers when no model is bound: done, nothing written, and
    the reason in the report (not a failure: a night without credentials is a
    complete night of the deterministic phases)."""
    return PhaseResult(counts={"skipped": "no model"}, reason=NO_MODEL)


def staged(plan: Plan) -> dict[str, bytes | None]:
    """The bytes a plan holds for every path it changed (None: removed)."""
    return {change.path: change.data for change in plan.changes()[0]}


def staged_delta(base: HeadVersion, before: Mapping[str, bytes | None],
                 after: Mapping[str, bytes | None]) -> tuple[PathChange, ...]:
    """What a phase's plan changed between two ``staged`` readings, for a phase that
    commits in parts (one commit per batch or per arc): each commit lands on the one
    before it. A path neither reading holds is at ``base``'s bytes."""

    def at_base(path: str) -> bytes | None:
        record = base.get(path)
        return None if record is None else record.html.encode("utf-8")

    out: list[PathChange] = []
    for path in sorted(before.keys() | after.keys()):
        old = before[path] if path in before else at_base(path)
        new = after[path] if path in after else at_base(path)
        if old != new:
            out.append(PathChange(path, new))
    return tuple(out)
