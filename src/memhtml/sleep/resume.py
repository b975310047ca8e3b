"""Resume: finish a run that stopped, from what its branch records.

The phases already done, the run id, the base and the stamp are read from the
trailers of ``commits_between(base, tip)`` and nowhere else. Done phases are reported
``skipped`` (the report still lists all seventeen); the others run as a first attempt
would, with the first attempt's stamp, so the branch a resume finishes is the branch
the uninterrupted run would have made. Preflight, which commits nothing, always runs
again: its checks are about now.

The phases are stepped from the base: a done phase moves the version on to its last
commit, so a phase that committed nothing in the first attempt (relationship-mining
always; any phase with nothing to change) runs again at the version it saw then, not
at a tip later phases built, and the run's ten detected tasks keep the places done
phases took. The phases after the last done one build on the branch tip.

A phase of several commits that stopped between two of them is dropped whole (the
branch is moved back to where it started) and runs again, so no half-landed phase is
ever built upon. A run with no commit yet carries no stamp, and takes a fresh one.

The run's options ride its commits too (``Memhtml-Options``): a ``--deep`` run resumes
deep, and its ``--max-llm-calls`` budget starts at what its commits record spending
(``Memhtml-Calls``; calls a phase made and then failed without a commit are not on the
record, and a resume cannot count them). Flags given to resume are used only by a run
whose commits record none; flags that contradict the record are refused, since the
phases already done ran under the recorded ones.
"""

from __future__ import annotations

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.sleep.budget import CallBudget
from memhtml.sleep.contract import RunFlags, run_stamp
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.errors import SleepError, SleepRefused
from memhtml.sleep.history import RunHistory, read_history
from memhtml.sleep.run_context import RunContext
from memhtml.sleep.runner import RunReport, execute, task_budget, versions_at


def _without_partial(deps: SleepDeps, history: RunHistory) -> IOResult[RunHistory, SleepError]:
    partial = history.partial()
    if not partial:
        return IOSuccess(history)
    first = next(c for c in history.commits if c.phase in partial)
    back_to = first.parents[0] if first.parents else history.base
    moved: IOResult[None, SleepError] = deps.git.move_ref(
        f"refs/heads/{history.branch}", history.tip, back_to)
    return moved.bind(lambda _: read_history(deps.git, deps.main_ref, history.run_id))


def _not_merged(deps: SleepDeps, history: RunHistory) -> IOResult[RunHistory, SleepError]:
    if history.tip == history.base:
        return IOSuccess(history)
    main: IOResult[str, SleepError] = deps.git.resolve(deps.main_ref)
    return main.bind(lambda at: deps.git.commits_between(at, history.tip)).bind(
        lambda ahead: IOSuccess(history) if ahead else IOFailure(SleepRefused(
            f"run {history.run_id} is already merged into {deps.main}; there is nothing to "
            "resume")))


def _flags(history: RunHistory, deep: bool | None, max_llm_calls: int | None
           ) -> IOResult[RunFlags, SleepError]:
    recorded = history.flags
    if recorded is None:
        return IOSuccess(RunFlags(bool(deep), max_llm_calls))
    clashes: list[str] = []
    if deep is not None and deep != recorded.deep:
        clashes.append("--deep" if deep else "--no-deep")
    if max_llm_calls is not None and max_llm_calls != recorded.max_llm_calls:
        clashes.append(f"--max-llm-calls {max_llm_calls}")
    if clashes:
        return IOFailure(SleepRefused(
            f"run {history.run_id} was started with {_described(recorded)}; resume runs it "
            f"with those, not {' and '.join(clashes)} (omit the flag)"))
    return IOSuccess(recorded)


def _described(flags: RunFlags) -> str:
    limit = "no call limit" if flags.max_llm_calls is None else (
        f"--max-llm-calls {flags.max_llm_calls}")
    return f"{'--deep' if flags.deep else 'no --deep'} and {limit}"


def resume_sleep(deps: SleepDeps, run_id: str, deep: bool | None = None,
                 max_llm_calls: int | None = None, max_llm_seconds: float | None = None
                 ) -> IOResult[RunReport, SleepError]:
    """Run the phases of ``run_id`` its branch does not record as done, with the options
    its commits record. ``deep`` and ``max_llm_calls`` (None: not given) set them for a
    run whose commits record none, and are refused when they contradict the record.
    ``max_llm_seconds`` is this invocation's own time budget (never recorded: a
    stopped run's clock does not carry over to the night that finishes it)."""

    def go(history: RunHistory, chosen: RunFlags) -> IOResult[RunReport, SleepError]:
        stamp = history.stamp or run_stamp(deps.clock.now())
        done = history.done()
        calls = CallBudget(chosen.max_llm_calls, spent=history.calls_spent,
                           seconds=max_llm_seconds)
        return versions_at(deps, history.base).bind(lambda found: execute(
            RunContext(deps=deps, run_id=history.run_id, branch=history.branch, stamp=stamp,
                       base=history.base, base_version=found[0], dry_run=False,
                       selected=None, done=done,
                       done_commits={p: history.commits_of(p) for p in done},
                       budget=task_budget(deps, None), resumed=True, resume_tip=history.tip,
                       calls=calls, deep=chosen.deep), found[0]))

    return (read_history(deps.git, deps.main_ref, run_id)
            .bind(lambda history: _not_merged(deps, history))
            .bind(lambda history: _flags(history, deep, max_llm_calls).bind(
                lambda chosen: _without_partial(deps, history).bind(
                    lambda kept: go(kept, chosen)))))
