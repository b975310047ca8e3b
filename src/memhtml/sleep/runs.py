"""The runs this clone holds: finding them, what state each is in, and abort.

A run is a ``sleep/<run-id>`` branch; there is no other list. ``sleep status`` prints,
for each run (newest first) or the one asked for: its id, its state against main,
its base and tip, its commit count, the phases its trailers record as done, and its
stamp. The states:

- ``mergeable``: main is still at the run's base and the run has commits;
- ``main-advanced``: main moved past the base: a merge replays the run onto it, unless
  what landed there collides with the run (``merge``, ``replay``);
- ``merged``: main holds the run's tip;
- ``stopped``: the run's process ended before its report was committed (killed, or
  the machine went down): the branch holds some phases and not the rest. Merging it
  would land half a night; ``memhtml sleep resume`` finishes it, and status prints
  ``stopped, resume``. A run asked for some phases only (``--phase``, recorded in its
  ``Memhtml-Options``) and not the report is judged finished by its commits, as before;
- ``empty``: the branch has no commit of the run (every phase failed or the run
  stopped before its first commit); there is nothing to merge;
- ``nothing-to-do``: the run found nothing to change in any phase, so it made no commit
  and kept no branch; it is known only from this clone's state plane (``QuietRun``), and
  ``sleep merge`` of it says there is nothing to merge.

The phases a run has done are those its branch records: each with its commits, and
each that finished with nothing to change (named on the report's commit), so a
finished run reads 17 of 17.

Abort deletes the branch and nothing else: main never moved, so nothing is rolled
back; what the run bumped in the state plane stays bumped (that night did read the
corpus), and its pending marks, which lived only on the branch, are gone with it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import reduce
from typing import Literal, TypeAlias

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import StateError
from memhtml.contracts.services import QuietRun
from memhtml.sleep.contract import (
    BRANCH_PREFIX,
    SLEEP_PHASES,
    SleepPhase,
    is_run_id,
    run_id_of_branch,
    run_order,
    stamp_text,
)
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.errors import SleepError, SleepRefused
from memhtml.sleep.history import RunHistory, read_history

RunState: TypeAlias = Literal["mergeable", "main-advanced", "merged", "empty",
                             "nothing-to-do", "stopped"]


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    branch: str
    state: RunState
    base: str
    tip: str
    main: str
    commits: int
    done: tuple[SleepPhase, ...]
    stamp: str | None


@dataclass(frozen=True)
class SleepStatus:
    main: str
    runs: tuple[RunSummary, ...]
    """Newest first."""
    notes: tuple[str, ...] = ()
    """What could not be read and so is not listed (the state plane's quiet runs)."""


@dataclass(frozen=True)
class Aborted:
    run_id: str
    branch: str
    state: RunState
    """What the run was when its branch was deleted (``merged``: main keeps it all)."""
    tip: str


def list_runs(deps: SleepDeps) -> IOResult[tuple[str, ...], SleepError]:
    """Every run id with a branch, newest first."""
    listed: IOResult[tuple[str, ...], SleepError] = deps.git.branches(BRANCH_PREFIX)
    return listed.map(lambda names: tuple(sorted(
        (run_id for name in names if (run_id := run_id_of_branch(name)) is not None),
        key=run_order, reverse=True)))


def _quiet_read(deps: SleepDeps) -> IOResult[tuple[tuple[QuietRun, ...], tuple[str, ...]],
                                              SleepError]:
    """The quiet runs and, when the state plane cannot be read, a note saying so and
    none: the runs a branch records are still read (a read of status, review or merge
    must not fail over the one record the tree does not hold)."""
    found: IOResult[tuple[QuietRun, ...], StateError] = deps.state.quiet_runs()
    def read(runs: tuple[QuietRun, ...]) -> tuple[tuple[QuietRun, ...], tuple[str, ...]]:
        return (tuple(r for r in runs if is_run_id(r.run_id)), ())

    def unread(error: StateError) -> IOResult[
            tuple[tuple[QuietRun, ...], tuple[str, ...]], SleepError]:
        note = ("runs that found nothing to do are not listed: the state database cannot "
                f"be read ({error.reason})")
        return IOSuccess(((), (note,)))

    return found.map(read).lash(unread)


def quiet_runs(deps: SleepDeps) -> IOResult[tuple[QuietRun, ...], SleepError]:
    """The runs that found nothing to do, newest first, as this clone's state plane
    notes them (a run id that is not one is passed over; none when the plane cannot
    be read)."""
    return _quiet_read(deps).map(lambda got: got[0])


def quiet_run(deps: SleepDeps, run_id: str) -> IOResult[QuietRun | None, SleepError]:
    """The newest quiet run noted under ``run_id`` when no branch carries that id (a
    branch is the run's own record and always wins), else None."""
    def judged(ids: tuple[str, ...]) -> IOResult[QuietRun | None, SleepError]:
        if run_id in ids:
            return IOSuccess(None)
        return quiet_runs(deps).map(
            lambda runs: next((r for r in runs if r.run_id == run_id), None))

    return list_runs(deps).bind(judged)


def _newest(ids: tuple[str, ...], quiet: tuple[QuietRun, ...]) -> str | None:
    """The newest run id among the branches and the quiet runs no branch carries."""
    candidates = [*ids, *(q.run_id for q in quiet if q.run_id not in ids)]
    return max(candidates, key=run_order) if candidates else None


def latest_run(deps: SleepDeps) -> IOResult[str, SleepError]:
    """The newest run's id, a quiet one included; refused when this clone holds none."""
    def newest(ids: tuple[str, ...]) -> IOResult[str, SleepError]:
        return quiet_runs(deps).bind(lambda quiet: _named(_newest(ids, quiet)))

    def _named(run_id: str | None) -> IOResult[str, SleepError]:
        return IOSuccess(run_id) if run_id is not None else IOFailure(
            SleepRefused("no sleep run in this clone (memhtml sleep run cuts one)"))

    return list_runs(deps).bind(newest)


def stopped(history: RunHistory) -> bool:
    """The run ended before its report: a run of every phase with no report committed.
    (A run of chosen phases that did not include the report cannot be told from one
    that stopped, and is taken at its commits.)"""
    flags = history.flags
    reports = flags is None or flags.phases is None or "report" in flags.phases
    return reports and "report" not in history.done()


def run_state(deps: SleepDeps, history: RunHistory, main: str
              ) -> IOResult[RunState, SleepError]:
    if history.tip == history.base and not history.commits:
        return IOSuccess("empty")
    if main == history.base:
        return IOSuccess("stopped" if stopped(history) else "mergeable")
    ahead: IOResult[tuple[str, ...], SleepError] = deps.git.commits_between(main, history.tip)
    return ahead.map(lambda shas: ("stopped" if stopped(history) else "main-advanced")
                     if shas else "merged")


def summarize(deps: SleepDeps, run_id: str, main: str) -> IOResult[RunSummary, SleepError]:
    def of(history: RunHistory) -> IOResult[RunSummary, SleepError]:
        return run_state(deps, history, main).map(lambda state: RunSummary(
            run_id=history.run_id, branch=history.branch, state=state, base=history.base,
            tip=history.tip, main=main, commits=len(history.commits),
            done=history.finished(),
            stamp=stamp_text(history.stamp) if history.stamp else None))

    return read_history(deps.git, deps.main_ref, run_id).bind(of)


def quiet_summary(run: QuietRun, main: str) -> RunSummary:
    """A quiet run as status lists it: no branch, nothing committed, every phase it ran
    done."""
    done = tuple(p for p in SLEEP_PHASES if p in run.phases)
    return RunSummary(run.run_id, "", "nothing-to-do", run.base, run.base, main, 0, done,
                      stamp_text(run.stamp))


def sleep_status(deps: SleepDeps, run_id: str | None = None
                 ) -> IOResult[SleepStatus, SleepError]:
    """Every run (or the one named), against main as it stands: each branch, and the
    quiet runs no branch carries, newest first."""
    main: IOResult[str, SleepError] = deps.git.resolve(deps.main_ref)

    def each(at: str, ids: tuple[str, ...], quiet: tuple[QuietRun, ...]
             ) -> IOResult[SleepStatus, SleepError]:
        def then(done: IOResult[tuple[RunSummary, ...], SleepError], run: str
                 ) -> IOResult[tuple[RunSummary, ...], SleepError]:
            return done.bind(lambda so_far: summarize(deps, run, at).map(
                lambda summary: (*so_far, summary)))

        start: IOResult[tuple[RunSummary, ...], SleepError] = IOSuccess(())
        shown = {q.run_id: q for q in reversed(quiet) if q.run_id not in ids}
        return reduce(then, ids, start).map(lambda runs: SleepStatus(at, tuple(sorted(
            (*runs, *(quiet_summary(q, at) for q in shown.values())),
            key=lambda r: run_order(r.run_id), reverse=True))))

    def named(at: str, wanted: str) -> IOResult[SleepStatus, SleepError]:
        return quiet_run(deps, wanted).bind(lambda found: IOSuccess(
            SleepStatus(at, (quiet_summary(found, at),))) if found is not None
            else each(at, (wanted,), ()))

    if run_id is not None:
        return main.bind(lambda at: named(at, run_id))
    listed: IOResult[SleepStatus, SleepError] = IOResult.do(
        replace(status, notes=notes)
        for at in main
        for ids in list_runs(deps)
        for quiet, notes in _quiet_read(deps)
        for status in each(at, ids, quiet)
    )
    return listed


def abort_run(deps: SleepDeps, run_id: str) -> IOResult[Aborted, SleepError]:
    """Delete the run's branch; nothing else changes."""
    main: IOResult[str, SleepError] = deps.git.resolve(deps.main_ref)

    def delete(summary: RunSummary) -> IOResult[Aborted, SleepError]:
        deleted: IOResult[None, SleepError] = deps.git.delete_branch(summary.branch)
        return deleted.map(lambda _: Aborted(summary.run_id, summary.branch, summary.state,
                                             summary.tip))

    return main.bind(lambda at: summarize(deps, run_id, at)).bind(delete)
