"""The sleep run's contract: its seventeen phases, what gates what, and the names its
commits and files carry.

Nothing here runs anything. The runner, resume, review and the phase bodies all read
these names, so a phase added to ``SleepPhase`` without a body is a type error
(``phases.body_for`` matches over it exhaustively) and a trailer spelled two ways
cannot happen.

Run ids. A run is named by its branch: ``sleep/<YYYY-MM-DD>`` for the first run cut
on a UTC day, ``sleep/<YYYY-MM-DD>-2``, ``-3``... for the next ones, and the run id is
the part after ``sleep/`` (``2026-11-29``, ``2026-11-29-2``). A name is taken while
the branch exists or while main holds that run's report or ledger (a merged run whose
branch was deleted), so no two runs a store has merged share an id. An aborted run's
id may be cut again: nothing of it reached main, and its ledger lived only on the
branch that was deleted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, Literal, TypeAlias, get_args

SleepPhase: TypeAlias = Literal[
    "preflight",
    "dedup-merge",
    "entity-resolution",
    "person-links",
    "relationship-mining",
    "edge-typing",
    "confidence-decay",
    "arc-synthesis",
    "retention-triage",
    "compress",
    "reprieve",
    "trace-consolidation",
    "task-detection",
    "placement-triage",
    "integrity",
    "state-export",
    "report",
]
"""The phases, in the order a run executes them."""

SLEEP_PHASES: Final[tuple[SleepPhase, ...]] = get_args(SleepPhase)
"""The seventeen phases in spec order. The order carries six dependencies (entity
resolution before person links, decay before triage, dedup before compress and triage,
task detection and placement triage before integrity); the rest is arbitrary."""

LLM_PHASES: Final[tuple[SleepPhase, ...]] = (
    "dedup-merge",
    "entity-resolution",
    "edge-typing",
    "arc-synthesis",
    "compress",
    "trace-consolidation",
    "task-detection",
    "placement-triage",
)
"""The eight phases that call a model. The other nine are deterministic and free."""

HARD_PREREQUISITES: Final[tuple[tuple[SleepPhase, SleepPhase], ...]] = (
    *(("preflight", phase) for phase in SLEEP_PHASES if phase != "preflight"),
    ("dedup-merge", "compress"),
    ("dedup-merge", "retention-triage"),
)
"""(prerequisite, dependent) pairs: a dependent does not run when its prerequisite
failed or did not run. Preflight gates every other phase, because each of its
checks failing makes every later commit wrong rather than merely unhelpful. Dedup-merge
gates compress and retention-triage, which both work on the post-merge set (compressing
a pair the merge then archives half of is the failure it prevents)."""

SWEEP_PHASES: Final[tuple[SleepPhase, ...]] = ("confidence-decay",)
"""Phases whose commit is a uniform sweep over the corpus rather than a decision about
particular files; the placement guard does not count what they touch."""

MULTI_COMMIT_PHASES: Final[tuple[SleepPhase, ...]] = (
    "arc-synthesis",
    "compress",
    "trace-consolidation",
)
"""Phases the spec lands as several commits (one per arc, per batch, per distilled
memory). Each of their commits carries ``Memhtml-Part: i/n``; the phase is done once
its ``n/n`` commit is on the branch."""

NO_COMMIT_PHASES: Final[tuple[SleepPhase, ...]] = ("preflight", "relationship-mining")
"""Phases that never commit (preflight checks; mining writes only derived rows)."""

PhaseStatus: TypeAlias = Literal[
    "done", "failed", "skipped", "blocked", "not-built", "not-selected",
]
"""What became of a phase in one invocation. ``skipped``: done by an earlier
invocation of the same run (a resume), read from its commit's trailers. ``blocked``: a
hard prerequisite failed or did not run. ``not-built``: the body is not written yet
and wrote nothing. ``not-selected``: left out by ``--phase``."""

PHASE_STATUSES: Final[tuple[PhaseStatus, ...]] = get_args(PhaseStatus)

# -- trailers ---------------------------------------------------------------------------

TRAILER_OP: Final = "Memhtml-Op"
"""The door or run that made a commit (``store.landing`` writes one per op)."""
TRAILER_RUN: Final = "Memhtml-Run"
TRAILER_PHASE: Final = "Memhtml-Phase"
TRAILER_COUNTS: Final = "Memhtml-Counts"
"""One line of JSON, keys sorted: the counts the phase reported."""
TRAILER_BASE: Final = "Memhtml-Base"
"""The main commit the run branch was cut at."""
TRAILER_STAMP: Final = "Memhtml-Stamp"
"""The run's one clock reading, so a resume stamps exactly as the first attempt did."""
TRAILER_PART: Final = "Memhtml-Part"
TRAILER_OPTIONS: Final = "Memhtml-Options"
"""The options the run was started with (``RunFlags.text``), so a resume runs the
phases still to do as the first attempt would have."""
TRAILER_CALLS: Final = "Memhtml-Calls"
"""Model calls the run had spent when this commit landed, so a resumed run's
``--max-llm-calls`` budget starts where the first attempt's stood."""
TRAILER_WARNING: Final = "Memhtml-Warning"
TRAILER_QUIET: Final = "Memhtml-Quiet"
"""On the report's commit, one per phase that finished with nothing to change (so made
no commit of its own): ``<phase> <counts JSON>``. A phase with nothing to do is done, and
this is how the branch says so: status counts it, review shows its counts."""
WARNINGS_IN_TRAILERS: Final = 20
"""At most this many warnings ride in a commit's trailers; the counts carry the total."""



@dataclass(frozen=True, slots=True)
class RunFlags:
    """The options of a run that outlive its process: ``--deep``, ``--max-llm-calls``
    and, for a run asked for some phases only (``--phase``), those phases. Written on
    every commit of the run; resume reads the first two back, and status the phases:
    a run of every phase is finished once its report is committed, and one with no
    report is one that stopped (``sleep status`` says ``stopped, resume``). Resume
    finishes every phase whatever a run was asked for, as it always did."""

    deep: bool = False
    max_llm_calls: int | None = None
    phases: tuple[SleepPhase, ...] | None = None
    """The phases asked for, in run order; None for every phase (and then the key is
    not written at all, so a full run's trailer reads as it always did)."""

    def text(self) -> str:
        """The trailer value: one line of JSON, keys sorted."""
        data: dict[str, object] = {"deep": self.deep, "max_llm_calls": self.max_llm_calls}
        if self.phases is not None:
            data["phases"] = list(self.phases)
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    @staticmethod
    def parse(text: str | None) -> RunFlags | None:
        """The flags a trailer value holds, or None when it holds none (absent, not
        JSON, or a field of the wrong type): an unreadable record is no record."""
        if not text:
            return None
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if not isinstance(data, dict):
            return None
        deep, limit = data.get("deep"), data.get("max_llm_calls")
        if not isinstance(deep, bool):
            return None
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or limit < 0):
            return None
        named = data.get("phases")
        if named is None:
            return RunFlags(deep, limit)
        if not isinstance(named, list) or not all(isinstance(p, str) for p in named):
            return None
        wanted = set(named)
        if not wanted <= set(SLEEP_PHASES):
            return None
        return RunFlags(deep, limit, tuple(p for p in SLEEP_PHASES if p in wanted))

    @property
    def every_phase(self) -> bool:
        return self.phases is None


SLEEP_OP: Final = "sleep"
"""The ``Memhtml-Op`` every phase commit carries (subject ``memhtml sleep: ...``)."""
MERGE_OP: Final = "sleep-merge"
"""The ``Memhtml-Op`` of the merge commit that lands a run on a main that moved past
its base (``memhtml sleep-merge: ...``); its second parent is the run's tip."""
REJECT_OP: Final = "sleep-reject"
"""The ``Memhtml-Op`` of a reviewer's rejection commit on a run branch
(``sleep.reject``); it carries no ``Memhtml-Phase``."""
TRAILER_REJECTED: Final = "Memhtml-Rejected"
"""On a rejection commit, one per change rejected: the path as the review lists it."""
TRAILER_MERGED: Final = "Memhtml-Merged"
"""On that merge commit: the run tip it brought in (sync's merges carry it too)."""

# -- names on the branch ----------------------------------------------------------------

BRANCH_PREFIX: Final = "sleep/"
SLEEP_DIR: Final = ".memhtml/sleep/"
"""Where a run's report and ledger are committed (``.gitignore`` lets them through)."""
ACCESS_EXPORT_PATH: Final = ".memhtml/state/access.jsonl"
"""The state-export phase's file; see ``phases.state_export`` for what it holds."""
REPORT_GENERATOR: Final = "memhtml sleep"

_RUN_ID = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:-([2-9]|[1-9]\d+))?")


def run_id_for(day: str, n: int) -> str:
    """The ``n``-th run id of a UTC day (``YYYY-MM-DD``): the day alone for the first."""
    return day if n <= 1 else f"{day}-{n}"


def is_run_id(text: str) -> bool:
    """Whether ``text`` is a run id (``YYYY-MM-DD`` with an optional ``-n``, n >= 2)."""
    return _RUN_ID.fullmatch(text) is not None


def run_day(run_id: str) -> str | None:
    """The UTC day (``YYYY-MM-DD``) a run id was cut on, or None for a text that is not
    a run id."""
    return run_id[:10] if is_run_id(run_id) else None


def run_order(run_id: str) -> tuple[str, int]:
    """A sort key putting a day's runs in the order they were cut."""
    found = _RUN_ID.fullmatch(run_id)
    if found is None:
        return (run_id, 0)
    return (run_id[:10], int(found.group(4) or 1))


def branch_of(run_id: str) -> str:
    return f"{BRANCH_PREFIX}{run_id}"


def run_id_of_branch(branch: str) -> str | None:
    """The run id a branch name carries, or None for a branch that is not a run's."""
    name = branch.removeprefix("refs/heads/")
    if not name.startswith(BRANCH_PREFIX):
        return None
    rest = name[len(BRANCH_PREFIX):]
    return rest if is_run_id(rest) else None


def report_path(run_id: str) -> str:
    return f"{SLEEP_DIR}{run_id}.html"


def ledger_path(run_id: str) -> str:
    return f"{SLEEP_DIR}{run_id}.pending.jsonl"


def decisions_path(run_id: str, phase: str) -> str:
    """One phase's decision records in a run (``sleep.decisions``), one JSON line per
    decision. A file per phase, not per run: a person who reverts one phase's commit
    after the merge reverts its file with it, where one file appended by every phase
    made that revert conflict."""
    return f"{SLEEP_DIR}{run_id}.{phase}.decisions.jsonl"


def is_decisions_path(path: str, run_id: str) -> bool:
    """Whether ``path`` is one of the run's decision files."""
    return any(path == decisions_path(run_id, phase) for phase in SLEEP_PHASES)


LOG_START: Final = datetime(1970, 1, 1, tzinfo=UTC)
"""Where a phase's all-time read of the access log starts."""


def stamp_text(at: datetime) -> str:
    """The run stamp as the format writes instants: ``YYYY-MM-DDTHH:MM:SSZ``."""
    at = at.astimezone(UTC)
    # Not strftime's %Y, which writes year 999 as "999" where the format wants 0999.
    return (f"{at.year:04d}-{at.month:02d}-{at.day:02d}T{at.hour:02d}:{at.minute:02d}:"
            f"{at.second:02d}Z")


def parse_stamp(text: str) -> datetime | None:
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def run_stamp(at: datetime) -> datetime:
    """The clock's reading cut to whole seconds in UTC: commit times keep whole seconds,
    so a resume that reads the stamp back from a trailer gets the very same instant."""
    return at.astimezone(UTC).replace(microsecond=0)
