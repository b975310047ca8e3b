"""What the phase loop and the landing of a phase's commits both read: the fixed facts of
one invocation (``RunContext``) and how far the run has got (``_Progress``).

``sleep.runner`` builds both and steps through the phases; ``sleep.phase_landing``
reads them to turn one phase's result into commits on the run branch, and
``sleep.resume`` builds a ``RunContext`` from a branch's trailers. They are a module
of their own so that neither the loop nor the landing imports the other for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from memhtml.head import HeadVersion, VectorCache
from memhtml.sleep.arrivals import ArrivalBook
from memhtml.sleep.budget import CallBudget
from memhtml.sleep.contract import SleepPhase
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.history import RunCommit
from memhtml.sleep.phase import MinedEdge, PhaseRecord, TaskBudget


@dataclass(frozen=True)
class RunContext:
    """The fixed facts of one invocation."""

    deps: SleepDeps
    run_id: str
    branch: str | None
    stamp: datetime
    base: str
    base_version: HeadVersion
    dry_run: bool
    selected: frozenset[SleepPhase] | None
    done: Mapping[SleepPhase, RunCommit]
    done_commits: Mapping[SleepPhase, tuple[str, ...]]
    budget: TaskBudget
    resumed: bool = False
    calls: CallBudget = field(default_factory=CallBudget)
    deep: bool = False
    resume_tip: str | None = None
    """The branch tip a resume found: where the phases after the last done one build."""
    dismissed: frozenset[str] = frozenset()
    """The detected tasks a person closed, read from the base's history once per
    invocation (``runner.execute``) and handed to every phase that mints tasks."""
    arrivals: ArrivalBook | None = None
    """When each memory of the base came onto the branch, read once per invocation by
    the first phase that asks (``sleep.arrivals``)."""


@dataclass(frozen=True)
class _Progress:
    tip: str
    version: HeadVersion
    vectors: VectorCache | None
    records: tuple[PhaseRecord, ...]
    mined: tuple[MinedEdge, ...] | None = None
    lateral: tuple[MinedEdge, ...] | None = None
