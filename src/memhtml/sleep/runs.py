"""The runs this clone holds: finding them, what state each is in, and abort.

A run is a ``sleep/<run-id>`` branch; there is no other list. ``sleep status`` prints,
for each run (newest first) or the one asked for: its id, its state against main,
its base and tip, its commit count, the phases its trailers record as done, and its
stamp. The states:

- ``mergeable``: main is still at the run's base and the run has commits;
- ``main-advanced``: main moved past the base: a merge replays the run onto it, unless
  what landed there collides with the run (``merge``, ``replay``);
- ``merged``: main holds the run's tip;
- ``empty``: the branch has no commit of the run (every phase failed or the run
  stopped before its first commit); there is nothing to merge.

Abort deletes the branch and nothing else: main never moved, so nothing is rolled
back; what the run bumped in the state plane stays bumped (that night did read the
corpus), and its pending marks, which lived only on the branch, are gone with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import Literal, TypeAlias

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.sleep.contract import (
    BRANCH_PREFIX,
    SleepPhase,
    run_id_of_branch,
    run_order,
    stamp_text,
)
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.errors import SleepError, SleepRefused
from memhtml.sleep.history import RunHistory, read_history

RunState: TypeAlias = Literal["mergeable", "main-advanced", "merged", "empty"]


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


def latest_run(deps: SleepDeps) -> IOResult[str, SleepError]:
    """The newest run's id; refused when this clone holds none."""
    return list_runs(deps).bind(lambda ids: IOSuccess(ids[0]) if ids else IOFailure(
        SleepRefused("no sleep run in this clone (memhtml sleep run cuts one)")))


def run_state(deps: SleepDeps, history: RunHistory, main: str
              ) -> IOResult[RunState, SleepError]:
    if history.tip == history.base and not history.commits:
        return IOSuccess("empty")
    if main == history.base:
        return IOSuccess("mergeable")
    ahead: IOResult[tuple[str, ...], SleepError] = deps.git.commits_between(main, history.tip)
    return ahead.map(lambda shas: "main-advanced" if shas else "merged")


def summarize(deps: SleepDeps, run_id: str, main: str) -> IOResult[RunSummary, SleepError]:
    def of(history: RunHistory) -> IOResult[RunSummary, SleepError]:
        return run_state(deps, history, main).map(lambda state: RunSummary(
            run_id=history.run_id, branch=history.branch, state=state, base=history.base,
            tip=history.tip, main=main, commits=len(history.commits),
            done=tuple(history.done()),
            stamp=stamp_text(history.stamp) if history.stamp else None))

    return read_history(deps.git, deps.main_ref, run_id).bind(of)


def sleep_status(deps: SleepDeps, run_id: str | None = None
                 ) -> IOResult[SleepStatus, SleepError]:
    """Every run (or the one named), against main as it stands."""
    main: IOResult[str, SleepError] = deps.git.resolve(deps.main_ref)

    def each(at: str, ids: tuple[str, ...]) -> IOResult[SleepStatus, SleepError]:
        def then(done: IOResult[tuple[RunSummary, ...], SleepError], run: str
                 ) -> IOResult[tuple[RunSummary, ...], SleepError]:
            return done.bind(lambda so_far: summarize(deps, run, at).map(
                lambda summary: (*so_far, summary)))

        start: IOResult[tuple[RunSummary, ...], SleepError] = IOSuccess(())
        return reduce(then, ids, start).map(lambda runs: SleepStatus(at, runs))

    wanted = IOSuccess((run_id,)) if run_id is not None else list_runs(deps)
    return main.bind(lambda at: wanted.bind(lambda ids: each(at, ids)))


def abort_run(deps: SleepDeps, run_id: str) -> IOResult[Aborted, SleepError]:
    """Delete the run's branch; nothing else changes."""
    main: IOResult[str, SleepError] = deps.git.resolve(deps.main_ref)

    def delete(summary: RunSummary) -> IOResult[Aborted, SleepError]:
        deleted: IOResult[None, SleepError] = deps.git.delete_branch(summary.branch)
        return deleted.map(lambda _: Aborted(summary.run_id, summary.branch, summary.state,
                                             summary.tip))

    return main.bind(lambda at: summarize(deps, run_id, at)).bind(delete)
