"""The run: seventeen phases on a branch cut from main, each isolated from the others.

- **One clock reading** stamps the run (``contract.run_stamp``); its commits all carry
  that time and ``memhtml-updated`` values are written from it. Nothing here or in a
  phase reads a clock to decide whether to do work.
- **The branch first.** ``sleep/<YYYY-MM-DD>`` (``-2``, ``-3``... when taken) is cut at
  main's tip before any phase runs, so main never moves during a run and an abort is
  deleting the branch. A dry run cuts nothing, commits nothing and writes nothing to
  the state plane; every phase runs and reports what it would have done.
- **Each phase sees the ones before it.** Its ``PhaseEnv.version`` is the branch tip
  after every earlier phase's commits (triage scores the decayed confidence; compress
  sees the post-dedup set). In a dry run, where nothing lands, each phase's changes
  are composed in memory onto the version the next phase sees (``dry_composed``), so
  a dry run reports what a real one would do in order (entity merges feed
  person-links, folds feed triage), with nothing committed.
- **Isolation.** A phase that fails, or raises, is recorded as a value and its commits
  are dropped (the branch is moved back to where the phase found it, should some of
  several have landed); the phases after it still run, except the dependents of a
  hard prerequisite that did not succeed.
- **The commit is the fact.** Each phase commit carries ``Memhtml-Run``,
  ``Memhtml-Phase``, ``Memhtml-Counts`` (one line of JSON, keys sorted),
  ``Memhtml-Base`` and ``Memhtml-Stamp``; resume reads them back and nothing else.
  The marks a phase earned are appended to the ledger in its own (last) commit, so a
  phase's changes and its marks land together or not at all.

This module is the run as a whole: the branch, the phase loop, isolation and the
report. Turning one phase's result into commits is ``sleep.phase_landing``; the facts
of an invocation and its progress, which both read, are ``sleep.run_context``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from functools import reduce
from typing import Final

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import GitFailure, NotFound, StateError
from memhtml.contracts.services import QuietRun, TreeEntry
from memhtml.head import (
    HeadVersion,
    advance_head,
    indexes_of,
    insert_record,
    is_candidate_path,
    record_from,
    remove_record,
)
from memhtml.sleep.arrivals import ArrivalBook
from memhtml.sleep.budget import CallBudget
from memhtml.sleep.contract import (
    HARD_PREREQUISITES,
    SLEEP_PHASES,
    SleepPhase,
    branch_of,
    ledger_path,
    report_path,
    run_id_for,
    run_stamp,
    stamp_text,
)
from memhtml.sleep.deps import DryState, SleepDeps
from memhtml.sleep.errors import SleepError, SleepRefused
from memhtml.sleep.history import commit_infos, run_commit
from memhtml.sleep.phase import (
    Counts,
    PhaseBody,
    PhaseCommit,
    PhaseEnv,
    PhaseFault,
    PhaseRecord,
    PhaseResult,
    TaskBudget,
)
from memhtml.sleep.phase_landing import PhaseLanding, land_phase, with_warnings
from memhtml.sleep.phases import body_for
from memhtml.sleep.run_context import RunContext, _Progress
from memhtml.sleep.tasks import dismissed_digests
from memhtml.store.session import Store

MAX_RUNS_A_DAY: Final = 99
"""How far the ``-n`` suffix goes before a cut gives up (a guard, not a policy)."""
NEVER_FAILS_THE_RUN: Final[frozenset[SleepPhase]] = frozenset({"report"})
"""A failed reporting write is recorded, never the reason a run exits 1: the curation
the run was for has happened, and the branch says so."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    dry_run: bool = False
    phases: frozenset[SleepPhase] | None = None
    """The phases asked for (None: all). Preflight always runs: it gates the rest."""
    deep: bool = False
    max_llm_calls: int | None = None
    """One budget of model calls every model phase of the run shares (None: no limit)."""
    max_llm_seconds: float | None = None
    """One budget of wall-clock seconds in model calls, shared likewise (None: none)."""


@dataclass(frozen=True, slots=True)
class CommitLine:
    """One commit of the run, as reports list it."""

    sha: str
    phase: SleepPhase | None
    subject: str


@dataclass(frozen=True)
class RunReport:
    """What an invocation of run or resume did. ``phases`` lists all seventeen.

    An abort (every selected phase failed, no commit) reads apart from a partial
    failure by ``head_sha == base_sha`` and an empty ``commits``."""

    run_id: str
    branch: str | None
    stamp: str
    base_sha: str
    head_sha: str
    commits: tuple[CommitLine, ...]
    phases: tuple[PhaseRecord, ...]
    dry_run: bool = False
    resumed: bool = False
    quiet: bool = False
    """Every phase ran and found nothing to change: no commit was made, the branch was
    given back, and the run is recorded in the state plane only (``QuietRun``)."""
    notes: tuple[str, ...] = ()
    """What the run could not record and did not need to (a quiet run the state plane
    refused to note), and what the model found out about its endpoint (a
    structured-output form refused and the one used instead)."""

    @property
    def failed(self) -> tuple[SleepPhase, ...]:
        """Phases asked for that did not do their work (failed, or blocked)."""
        return tuple(r.phase for r in self.phases if r.status in ("failed", "blocked")
                     and r.phase not in NEVER_FAILS_THE_RUN)

    @property
    def ok(self) -> bool:
        return not self.failed


# -- entry point ---------------------------------------------------------------------


def run_sleep(deps: SleepDeps, options: RunOptions | None = None
              ) -> IOResult[RunReport, SleepError]:
    """Cut the run branch at main's tip and run the phases on it (``options`` picks a
    dry run or a subset). The report lists all seventeen phases."""
    chosen = options or RunOptions()
    stamp = run_stamp(deps.clock.now())
    main: IOResult[str, SleepError] = deps.git.resolve(deps.main_ref)

    def cut(base: str) -> IOResult[RunReport, SleepError]:
        day = stamp.date().isoformat()
        named = free_run_id(deps, day, base, create=not chosen.dry_run)
        return named.bind(lambda run_id: versions(base).bind(
            lambda base_version: execute(RunContext(
                deps=deps, run_id=run_id,
                branch=None if chosen.dry_run else branch_of(run_id), stamp=stamp,
                base=base, base_version=base_version, dry_run=chosen.dry_run,
                selected=chosen.phases, done={}, done_commits={},
                budget=task_budget(deps, chosen.phases),
                calls=CallBudget(chosen.max_llm_calls, seconds=chosen.max_llm_seconds),
                deep=chosen.deep),
                base_version)))

    def versions(base: str) -> IOResult[HeadVersion, SleepError]:
        return version_at(deps, base)

    def unborn(error: SleepError) -> IOResult[str, SleepError]:
        if isinstance(error, NotFound):
            return IOFailure(SleepRefused(f"{deps.main} has no commit yet: there is nothing "
                                          "to curate"))
        return IOFailure(error)

    return main.lash(unborn).bind(cut)


def versions_at(deps: SleepDeps, *shas: str) -> IOResult[tuple[HeadVersion, ...], SleepError]:
    """The versions at ``shas``, each advanced from main's head, which is started from
    this clone's snapshot when there is one: a cold parse of a large store costs
    several times an advance, so one load serves every version asked for."""
    store = Store(deps.main_deps())
    head: IOResult[HeadVersion, SleepError] = store.head()

    def then(done: IOResult[tuple[HeadVersion, ...], SleepError], sha: str
             ) -> IOResult[tuple[HeadVersion, ...], SleepError]:
        return done.bind(lambda got: store.version_at(sha).map(lambda v: (*got, v)))

    start: IOResult[tuple[HeadVersion, ...], SleepError] = head.map(lambda _: ())
    return reduce(then, shas, start)


def version_at(deps: SleepDeps, sha: str) -> IOResult[HeadVersion, SleepError]:
    """The version at ``sha`` (see ``versions_at``)."""
    return versions_at(deps, sha).map(lambda found: found[0])


def free_run_id(deps: SleepDeps, day: str, base: str, *, create: bool
                ) -> IOResult[str, SleepError]:
    """The first run id of ``day`` whose branch does not exist and whose report or
    ledger main does not hold; with ``create``, its branch is cut at ``base`` (a name
    another process took in between is skipped, not overwritten)."""
    git = deps.git
    listed: IOResult[tuple[str, ...], SleepError] = git.branches(branch_of(day))

    def attempt(taken: frozenset[str], n: int) -> IOResult[str, SleepError]:
        if n > MAX_RUNS_A_DAY:
            return IOFailure(SleepRefused(f"{MAX_RUNS_A_DAY} runs already cut on {day}"))
        run_id = run_id_for(day, n)
        if branch_of(run_id) in taken:
            return attempt(taken, n + 1)
        held: IOResult[tuple[TreeEntry, ...], SleepError] = git.entries_at(
            base, [report_path(run_id), ledger_path(run_id)])

        def claim(found: tuple[TreeEntry, ...]) -> IOResult[str, SleepError]:
            if found:
                return attempt(taken, n + 1)
            if not create:
                return IOSuccess(run_id)
            made: IOResult[None, SleepError] = git.create_branch(branch_of(run_id), base)
            # Another process cut this name since the listing: take the next one.
            return made.map(lambda _: run_id).lash(
                lambda error: attempt(taken, n + 1) if _taken(error) else IOFailure(error))

        return held.bind(claim)

    return listed.bind(lambda names: attempt(frozenset(names), 1))


def _taken(error: SleepError) -> bool:
    """Another process holds the name: its branch exists, or git's lock on the ref is
    held because that process is creating it at this moment."""
    return isinstance(error, GitFailure) and ("exists" in error.reason
                                              or ".lock" in error.reason)


# -- the phases ------------------------------------------------------------------------


def execute(ctx: RunContext, start: HeadVersion) -> IOResult[RunReport, SleepError]:
    """Every phase in order from ``start`` (the branch tip's version), then the report
    of what happened. The detected tasks a person closed are read from the base's
    history first: a function of the base and the stamp, so a resume reads the same."""
    closed: IOResult[frozenset[str], SleepError] = dismissed_digests(
        ctx.deps.git, ctx.base, ctx.base_version, ctx.stamp, ctx.deps.author)
    return closed.bind(lambda found: _execute(replace(
        ctx, dismissed=found, arrivals=ArrivalBook(ctx.deps.git, ctx.base, ctx.base_version)),
        start))


def _execute(ctx: RunContext, start: HeadVersion) -> IOResult[RunReport, SleepError]:
    first = _Progress(start.sha or ctx.base, start, None, ())

    def then(done: IOResult[_Progress, SleepError], position: int
             ) -> IOResult[_Progress, SleepError]:
        return done.bind(lambda progress: _step(ctx, progress, position))

    progress: IOResult[_Progress, SleepError] = IOSuccess(first)
    for position in range(len(SLEEP_PHASES)):
        progress = then(progress, position)
    return progress.bind(lambda final: _report(ctx, final)).bind(
        lambda report: _withdrawn(ctx, report))


def is_quiet(records: tuple[PhaseRecord, ...]) -> bool:
    """Whether every phase that ran finished with nothing to change: none failed or
    was blocked, none committed. (``not-selected`` ones did not run; a phase done by an
    earlier attempt of a resumed run committed, so it is never quiet.)"""
    ran = [r for r in records if r.status != "not-selected"]
    return bool(ran) and all(r.status == "done" and not r.commits for r in ran)


def _withdrawn(ctx: RunContext, report: RunReport) -> IOResult[RunReport, SleepError]:
    """A run with nothing committed gives its branch back when preflight refused it (an
    empty branch would take the day's name, and the next run, once the cause is fixed,
    would be cut as ``-2``, offering a merge of nothing) or when it found nothing to do
    (``_quiet``). The report then names no branch."""
    if ctx.branch is None or report.head_sha != report.base_sha:
        return IOSuccess(report)
    refused = any(r.phase == "preflight" and r.status == "failed" for r in report.phases)
    if refused:
        deleted: IOResult[None, SleepError] = ctx.deps.git.delete_branch(ctx.branch)
        return deleted.map(lambda _: replace(report, branch=None))
    if is_quiet(report.phases):
        return _quiet(ctx, ctx.branch, report)
    return IOSuccess(report)


def _quiet(ctx: RunContext, branch: str, report: RunReport) -> IOResult[RunReport, SleepError]:
    """A run that found nothing to do makes no commit at all, not even its report (a
    second night over an unchanged store must not move anything a person has to read or
    merge). Its branch is given back and the run is noted in the state plane, the one
    record it leaves: ``sleep status`` lists it and ``sleep merge`` says there is
    nothing to merge. A note the plane refuses is reported, never a failure: nothing
    was curated that the note would protect."""
    ran = tuple(r.phase for r in report.phases if r.status != "not-selected")
    run = QuietRun(ctx.run_id, ctx.base, ctx.stamp, ran)
    deleted: IOResult[None, SleepError] = ctx.deps.git.delete_branch(branch)

    def noted(_: None) -> IOResult[RunReport, SleepError]:
        recorded: IOResult[None, StateError] = ctx.deps.state.record_quiet_run(run)
        done = replace(report, branch=None, quiet=True)
        return recorded.map(lambda _: done).lash(lambda error: IOSuccess(replace(
            done, notes=(*done.notes, f"the quiet run was not noted in the state plane: "
                                      f"{error.reason}"))))

    return deleted.bind(noted)


def _selected(ctx: RunContext, phase: SleepPhase) -> bool:
    return phase == "preflight" or ctx.selected is None or phase in ctx.selected


def _blocker(records: tuple[PhaseRecord, ...], phase: SleepPhase) -> PhaseRecord | None:
    by_phase = {r.phase: r for r in records}
    for before, after in HARD_PREREQUISITES:
        if after != phase:
            continue
        record = by_phase.get(before)
        if record is None or record.status in ("failed", "blocked", "not-selected"):
            return record or PhaseRecord(before, "blocked")
    return None


def _step(ctx: RunContext, progress: _Progress, position: int
          ) -> IOResult[_Progress, SleepError]:
    phase = SLEEP_PHASES[position]
    ctx.deps.progress(position + 1, phase, "start")

    def recorded(record: PhaseRecord, after: _Progress | None = None
                 ) -> IOResult[_Progress, SleepError]:
        ctx.deps.progress(position + 1, phase, record.status)
        base = after or progress
        return IOSuccess(replace(base, records=(*base.records, record)))

    if phase in ctx.done:
        last = ctx.done[phase]
        shas = ctx.done_commits.get(phase, (last.sha,))
        _occupy(ctx.budget, phase, last.counts)
        skipped = PhaseRecord(phase, "skipped", last.counts, shas, last.warnings,
                              "done by an earlier attempt of this run")
        target = shas[-1] if _done_later(ctx, position) else (ctx.resume_tip or shas[-1])
        return _advanced(ctx, progress, target).bind(lambda moved: recorded(skipped, moved))
    if not _selected(ctx, phase):
        return recorded(PhaseRecord(phase, "not-selected", reason="not asked for"))
    blocker = _blocker(progress.records, phase)
    if blocker is not None:
        return recorded(PhaseRecord(phase, "blocked",
                                    reason=f"{blocker.phase} {_did(blocker.status)}"))
    env = _env(ctx, progress, phase)
    attempted = _isolated(body_for(phase), env)
    if _done_later(ctx, position):
        attempted = attempted.map(_changes_dropped)
    landed: IOResult[PhaseLanding, PhaseFault] = attempted.bind(
        lambda result: land_phase(ctx, progress, phase, result))

    def succeeded(landing: PhaseLanding) -> IOResult[_Progress, SleepError]:
        result = landing.result
        counts = with_warnings(result.counts, result.warnings)
        record = PhaseRecord(phase, result.status, counts, landing.shas, result.warnings,
                             result.reason, marks=landing.marks, changed_paths=landing.paths,
                             observed=result.observed, decisions=landing.decisions)
        vectors = result.vectors if result.vectors is not None else progress.vectors
        mined = result.mined if result.mined is not None else progress.mined
        lateral = result.lateral if result.lateral is not None else progress.lateral
        if landing.tip == progress.tip:
            version = (dry_composed(progress.version, result.commits) if ctx.dry_run
                       else progress.version)
            return recorded(record, replace(progress, version=version, vectors=vectors,
                                            mined=mined, lateral=lateral))
        advanced: IOResult[HeadVersion, SleepError] = advance_head(
            ctx.deps.git, progress.version, landing.tip)
        return advanced.bind(lambda version: recorded(
            record, _Progress(landing.tip, version, vectors, progress.records, mined,
                              lateral)))

    def failed(fault: PhaseFault) -> IOResult[_Progress, SleepError]:
        return recorded(PhaseRecord(phase, "failed", reason=fault.reason))

    outcome: IOResult[PhaseLanding | PhaseFault, SleepError] = landed.map(_widen_landing).lash(
        _kept_fault)
    return outcome.bind(lambda value: failed(value) if isinstance(value, PhaseFault)
                        else succeeded(value))


def dry_composed(version: HeadVersion, commits: tuple[PhaseCommit, ...]) -> HeadVersion:
    """``version`` with the memory files of ``commits`` applied in order, in memory: what
    the next phase of a dry run sees, as it would see the commits' tree in a real run.
    A file that would not parse is dropped from the view, as loading the tree would
    skip it; the version keeps its commit sha (nothing was committed)."""
    changes = [c for commit in commits for c in commit.changes if is_candidate_path(c.path)]
    if not changes:
        return version
    indexes = indexes_of(version)
    for change in changes:
        if change.path in indexes.records:
            indexes = remove_record(indexes, change.path)
        if change.data is None:
            continue
        parsed = record_from(change.data.decode("utf-8", "replace"), change.path)
        record = parsed.value_or(None)
        if record is not None:
            indexes = insert_record(indexes, record)
    return HeadVersion(indexes, version.sha, version, version.skipped_files)


def _done_later(ctx: RunContext, position: int) -> bool:
    """Whether a phase after ``position`` is already done (a resume): the phase at
    ``position`` then committed nothing in the first attempt, and runs again at the
    version it saw then, not at the branch tip later phases built."""
    return any(p in ctx.done for p in SLEEP_PHASES[position + 1:])


def _advanced(ctx: RunContext, progress: _Progress, target: str
              ) -> IOResult[_Progress, SleepError]:
    if target == progress.tip:
        return IOSuccess(progress)
    moved: IOResult[HeadVersion, SleepError] = advance_head(ctx.deps.git, progress.version,
                                                            target)
    return moved.map(lambda version: replace(progress, tip=target, version=version))


def task_budget(deps: SleepDeps, selected: frozenset[SleepPhase] | None) -> TaskBudget:
    """The night's detected-task budget, told which detectors will be asked tonight:
    those selected that can find anything with what the run has (edge-typing and
    task-detection need a model; trace-consolidation a model and transcripts). A
    detector that cannot run holds no places back from the ones before it."""
    needs = {"edge-typing": deps.model is not None,
             "task-detection": deps.model is not None,
             "trace-consolidation": deps.model is not None and deps.transcripts is not None}
    coming = [p for p in SLEEP_PHASES if (selected is None or p in selected)
              and needs.get(p, p in ("dedup-merge", "entity-resolution"))]
    return TaskBudget(coming=coming)


def _occupy(budget: TaskBudget, phase: SleepPhase, counts: Counts) -> None:
    """A done phase's detected tasks keep their places in the resumed night's ten: the
    ones it opened as opened, the ones it found open as held."""
    def number(key: str) -> int:
        value = counts.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    budget.restore(phase, number("tasks_minted"),
                   number("tasks_refreshed") + number("tasks_unchanged")
                   + number("tasks_edited"))


def _changes_dropped(result: PhaseResult) -> PhaseResult:
    """A phase re-run behind later done phases must not commit: they are built on the
    tree it saw. It committed nothing in the first attempt; if a clone-local reading
    changed since (a read logged in between), what it would now change waits for the
    next run."""
    if not result.commits and not result.marks:
        return result
    return replace(result, commits=(), marks=(), decisions=(), warnings=(
        *result.warnings, "re-run on resume behind later phases: its changes wait for the "
                          "next run"))


def _widen_landing(landing: PhaseLanding) -> PhaseLanding | PhaseFault:
    return landing


def _kept_fault(fault: PhaseFault) -> IOResult[PhaseLanding | PhaseFault, SleepError]:
    """A phase's failure carried on as a value: the run goes on past it."""
    return IOSuccess(fault)


def _did(status: str) -> str:
    return {"failed": "failed", "blocked": "was blocked",
            "not-selected": "was not asked for"}.get(status, "did not run")


def _env(ctx: RunContext, progress: _Progress, phase: SleepPhase) -> PhaseEnv:
    deps = ctx.deps
    return PhaseEnv(
        phase=phase, run_id=ctx.run_id, stamp=ctx.stamp, base=ctx.base,
        base_version=ctx.base_version, version=progress.version, git=deps.git,
        state=DryState(deps.state) if ctx.dry_run else deps.state, budget=ctx.budget,
        dry_run=ctx.dry_run, embedder=deps.embedder, embedder_name=deps.embedder_name,
        embedder_problem=deps.embedder_problem, vectors=progress.vectors,
        vector_store=deps.vectors, coverage_floor=deps.coverage_floor,
        retention_grace_days=deps.retention_grace_days,
        earlier=progress.records, branch=ctx.branch, worktree=deps.worktree is not None,
        mined=progress.mined, model=deps.model, calls=ctx.calls, deep=ctx.deep,
        lateral=progress.lateral, transcripts=deps.transcripts, committer=deps.author,
        dismissed=ctx.dismissed, arrivals=ctx.arrivals,
    )


def _isolated(body: PhaseBody, env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    """The phase's answer; a raise is this phase's failure, as a value. The isolation
    boundary of the run, so it catches whatever a phase raises."""
    try:
        return body(env)
    except Exception as exc:
        return IOFailure(PhaseFault(f"raised {type(exc).__name__}: {exc}"))


# -- the report of the invocation --------------------------------------------------------


def _report(ctx: RunContext, final: _Progress) -> IOResult[RunReport, SleepError]:
    def build(lines: tuple[CommitLine, ...]) -> RunReport:
        return RunReport(
            run_id=ctx.run_id, branch=ctx.branch, stamp=stamp_text(ctx.stamp),
            base_sha=ctx.base, head_sha=final.tip, commits=lines, phases=final.records,
            dry_run=ctx.dry_run, resumed=ctx.resumed,
            notes=ctx.deps.model_notes() if ctx.deps.model_notes is not None else ())

    return run_commits(ctx.deps, ctx.run_id, ctx.base, final.tip).map(build)


def run_commits(deps: SleepDeps, run_id: str, base: str, tip: str
                ) -> IOResult[tuple[CommitLine, ...], SleepError]:
    """The commits from ``base`` to ``tip``, oldest first, with the phase each names."""
    if base == tip:
        return IOSuccess(())
    between: IOResult[tuple[str, ...], SleepError] = deps.git.commits_between(base, tip)
    return between.bind(lambda shas: commit_infos(deps.git, shas)).map(
        lambda infos: tuple(CommitLine(c.sha, c.phase, c.subject)
                            for c in (run_commit(info, run_id) for info in infos)))


def selected_phases(names: Collection[str]) -> frozenset[SleepPhase]:
    """The phases ``names`` names (each must be a phase; the CLI's parser checks)."""
    return frozenset(p for p in SLEEP_PHASES if p in set(names))
