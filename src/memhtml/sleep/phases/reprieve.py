"""Phase 11, reprieve: a memory whose validity lapsed earns more time, or is archived.
One commit.

Every active memory that is not a task and whose ``memhtml-valid-until`` is before the
run's stamp is expired. ``domain.reprieve`` decides: when the score clears the floor
and the memory has not used its reprieves, validity moves ``REPRIEVE_DAYS`` past the
bound it had and ``memhtml-reprieves`` goes up by one; otherwise the memory is archived
(``archive_many_step``, every href to it rewritten). A bound written as a date is
extended as a date, an instant as an instant. A date bound lapses once its day is over,
as a due date does (``store.tasks.is_overdue``).

What the score reads:

- **importance** as authored, the retention scorer's default when the file states none;
- **accesses**, the state plane's lifetime read count for the path;
- **hours since access**, from the run's stamp to the log's latest read of the path
  (never read: no recency credit at all);
- **outcome: always 0.** The score has room for how well the memory served when it was
  used, but nothing records that yet: no door logs an outcome and the access log
  carries reads only. Zero is the neutral value (a negative outcome would add nothing
  either), so the term is inert until a source exists rather than guessed.

A reprieve is a write, so it stamps ``memhtml-updated`` like any edit. Tasks are never
expired here: a task's deadline is ``memhtml-due``, and the task list owns it. An
archive path already taken this year is a counted refusal, not a failed phase.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Final

from returns.io import IOResult
from returns.result import Failure, Result, Success

from memhtml.contracts.errors import InvalidMemory, OverlayRefused, PathRefused
from memhtml.contracts.ops import Put
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import AccessCount
from memhtml.domain.reprieve import (
    ReprieveInput,
    reprieve_score,
    reprieved_until,
    should_reprieve,
)
from memhtml.domain.retention import DEFAULT_IMPORTANCE
from memhtml.domain.thresholds import REPRIEVE_DAYS, REPRIEVE_FLOOR
from memhtml.format import set_meta
from memhtml.head import HeadVersion
from memhtml.sleep.contract import LOG_START, stamp_text
from memhtml.sleep.decisions import Decision
from memhtml.sleep.phase import PhaseCommit, PhaseEnv, PhaseFault, PhaseResult
from memhtml.store.errors import Refused, StoreError, describe
from memhtml.store.plan import Plan, archive_many_step

OUTCOME_SCORE: Final = 0.0
"""The outcome term until something records outcomes (see the module docstring)."""
_DATE: Final = "%Y-%m-%d"
_INSTANT: Final = "%Y-%m-%dT%H:%M:%SZ"


def _bound(text: str) -> tuple[datetime, str] | None:
    """A validity bound as an instant, and the form it is written in."""
    for form in (_INSTANT, _DATE):
        try:
            return datetime.strptime(text, form).replace(tzinfo=UTC), form
        except ValueError:
            continue
    return None


def is_expired(valid_until: str, now: str) -> bool:
    """Before the stamp: an instant against the stamp, a date against its day (a bound
    of today has not lapsed until the day is over)."""
    if len(valid_until) == len("YYYY-MM-DD"):
        return valid_until < now[:10]
    return valid_until < now


def extended(valid_until: str) -> str | None:
    """The bound a reprieve writes, in the form of the one it replaces."""
    parsed = _bound(valid_until)
    if parsed is None:
        return None
    at, form = parsed
    later = reprieved_until(at)
    if form == _DATE:
        # Not strftime's %Y, which writes year 999 as "999".
        return f"{later.year:04d}-{later.month:02d}-{later.day:02d}"
    return stamp_text(later)


def reprieve_input(record: MemoryRecord, read: AccessCount | None, stamp: datetime
                   ) -> ReprieveInput:
    importance = DEFAULT_IMPORTANCE if record.importance is None else record.importance
    hours = float("inf") if read is None else (stamp - read.last).total_seconds() / 3600.0
    return ReprieveInput(
        importance=float(importance),
        access_count=0.0 if read is None else float(read.count),
        outcome_score=OUTCOME_SCORE,
        hours_since_access=hours,
    )


def expired_records(version: HeadVersion, now: str) -> tuple[MemoryRecord, ...]:
    """Active non-task records whose validity lapsed before ``now``, in path order."""
    return tuple(
        r for r in version.records()
        if not r.archived and r.status == "active" and r.memory_type != "task"
        and r.valid_until is not None and is_expired(r.valid_until, now)
    )


_PER_FILE = (InvalidMemory, OverlayRefused, PathRefused, Refused)
"""Refusals about one file's edit, which leave that file and decide the rest."""


def _reprieved(record: MemoryRecord, until: str, now: str) -> str:
    html = set_meta(record.html, "memhtml-valid-until", until)
    html = set_meta(html, "memhtml-reprieves", str((record.reprieves or 0) + 1))
    return set_meta(html, "memhtml-updated", now)


def decide(version: HeadVersion, accesses: Mapping[str, AccessCount], stamp: datetime,
           now: str) -> Result[PhaseResult, StoreError]:
    """Every expired memory reprieved or archived, as one commit."""
    expired = expired_records(version, now)
    plan = Plan.start(version, now)
    reprieved = 0
    to_archive: list[str] = []
    unreadable: list[str] = []
    decided: list[Decision] = []
    scores: dict[str, float] = {}
    for record in expired:
        until = extended(record.valid_until or "")
        if until is None:
            # The parser refuses a malformed bound, so this is a record built some
            # other way; it is left rather than archived on a date nobody can read.
            unreadable.append(f"{record.path}: memhtml-valid-until "
                              f"{record.valid_until!r} is not a date; left")
            continue
        score = reprieve_score(reprieve_input(record, accesses.get(record.path), stamp))
        scores[record.path] = score
        if not should_reprieve(score, record.reprieves or 0):
            to_archive.append(record.path)
            continue
        match plan.apply(Put(record.path, _reprieved(record, until, now))):
            case Success(after):
                plan = after
                reprieved += 1
                decided.append(Decision.of(
                    "reprieve", "rewritten", record.path, "reprieve-extended", figures={
                        "score": score, "floor": REPRIEVE_FLOOR,
                        "reprieves": (record.reprieves or 0) + 1,
                        "valid_until": record.valid_until, "extended_to": until}))
            case Failure(error) if isinstance(error, _PER_FILE):
                # One file the store will not take (the checker refuses the edit) is
                # left as it was and said; the other expired memories are still decided.
                unreadable.append(f"{record.path}: not reprieved: {describe(error)}")
            case Failure(error):
                return Failure(error)

    def answer(done: Plan, moved: tuple[tuple[str, str], ...],
               refused: tuple[tuple[str, str], ...]) -> PhaseResult:
        archived = len(moved)
        lapsed = [Decision.of("reprieve", "archived", path, "reprieve-lapsed", to=to,
                              figures={"score": scores.get(path), "floor": REPRIEVE_FLOOR,
                                       "reprieves": (held.reprieves or 0)
                                       if (held := version.get(path)) is not None else None})
                  for path, to in moved]
        changes, _ = done.changes()
        counts = {"expired": len(expired), "reprieved": reprieved,
                  "archived": archived, "refused": len(refused)}
        warnings = (*unreadable, *(f"{p} not archived: {why}" for p, why in refused))
        if not changes:
            return PhaseResult(counts=counts, warnings=warnings)
        return PhaseResult(counts=counts, warnings=warnings, commits=(PhaseCommit(
            f"{reprieved} reprieved, {archived} archived of {len(expired)} expired",
            changes, f"validity extended {REPRIEVE_DAYS} days or the memory archived",
            decisions=(*decided, *lapsed)),))

    if not to_archive:
        return Success(answer(plan, (), ()))
    return archive_many_step(plan, to_archive).map(
        lambda done: answer(done.plan, tuple(done.archived), done.refused))


def reprieve(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    version = env.version

    def decided(accesses: Mapping[str, AccessCount]) -> IOResult[PhaseResult, PhaseFault]:
        done: Result[PhaseResult, PhaseFault] = decide(
            version, accesses, env.stamp, env.now).alt(lambda error: PhaseFault(describe(error)))
        return IOResult.from_result(done)

    read: IOResult[Mapping[str, AccessCount], PhaseFault] = env.state.access_counts(
        LOG_START, "read").alt(lambda error: PhaseFault(
            f"the state plane's access log cannot be read: {error.reason}"))
    return read.bind(decided)
