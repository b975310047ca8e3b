"""``memhtml sleep``: the curation run, on a branch, reviewed, then merged behind a gate.

Not an MCP tool: a run rewrites the corpus and leaves a branch a person is expected to
read. There is no schedule either; ``sleep plan`` says whether a run would change
anything, and the caller decides when. Exit codes: ``run`` and ``resume`` exit 1 when
any phase asked for failed (the whole report is still printed), ``merge`` exits 1 on a
refusal, ``status``, ``review`` and ``plan`` exit 0 whatever they describe; an unknown
phase, or a run id that is not one, is a usage error (2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from cyclopts import App, Parameter, validators

from memhtml.cli.common import Common, open_cli_services
from memhtml.cli.output import (
    EXIT_FAILED,
    EXIT_OK,
    Reply,
    UsageError,
    failure_payload,
    jsonable,
    print_err,
    respond,
    table,
    unwrap_io,
)
from memhtml.sleep.contract import SleepPhase

if TYPE_CHECKING:
    from returns.io import IOResult

    from memhtml.sleep.deps import SleepDeps
    from memhtml.sleep.errors import SleepError
    from memhtml.sleep.merge import MergeOutcome
    from memhtml.sleep.runner import RunReport

sleep_app = App(name="sleep", help="The curation run: plan, run, review, then merge or abort. "
                                   "Runs on a branch sleep/<date>; main moves only on merge.")

_COMMON = Common()

MAX_LLM_SECONDS = 7 * 24 * 3600
"""The largest ``--max-llm-seconds`` taken (a week): a bound, so ``inf`` and ``nan`` are
usage errors rather than a budget that cannot be compared."""

ERR_PHASE_FAILED = "ERR_PHASE_FAILED"
"""A run (or a resumed one) where a phase asked for failed; the report says which."""


def _deps(common: Common) -> SleepDeps:
    """The run's dependencies, with the head's gate and per-phase progress on stderr."""
    from returns.io import IOResult

    from memhtml.compose.sleep import head_gate, sleep_deps

    services = open_cli_services(common)

    def progress(position: int, phase: str, what: str) -> None:
        if not common.json and what != "start":
            print_err(f"[{position:2d}/17] {phase}: {what}")

    return unwrap_io(IOResult.from_result(sleep_deps(services, head_gate, progress)),
                     lambda error: error.reason)


def _value(result: IOResult[Any, SleepError]) -> Any:
    from memhtml.sleep.errors import describe_sleep_error

    return unwrap_io(result, describe_sleep_error)


def _run_id(deps: SleepDeps, run: str | None) -> str:
    from memhtml.sleep.contract import is_run_id
    from memhtml.sleep.runs import latest_run

    if run is None:
        return str(_value(latest_run(deps)))
    named = run.removeprefix("refs/heads/").removeprefix("sleep/")
    if not is_run_id(named):
        raise UsageError(f"{run!r} is not a run id: name one as YYYY-MM-DD or YYYY-MM-DD-N "
                         "(memhtml sleep status lists the runs)")
    return named


def _counts(counts: Any) -> str:
    return " ".join(f"{key}={value}" for key, value in sorted(dict(counts).items()))


def _run_reply(report: RunReport) -> Reply:
    rows: list[tuple[str, ...]] = []
    for record in report.phases:
        detail = record.reason if record.status not in ("done",) and record.reason else \
            _counts(record.counts)
        rows.append((record.phase, record.status, detail or ""))
    where = (" (dry run, nothing written)" if report.dry_run else
             f" on {report.branch}" if report.branch else
             " (nothing to do, no branch kept)" if report.quiet else
             " (refused, no branch kept)")
    head = (f"run {report.run_id}" + where
            + f": base {report.base_sha[:10]}, head {report.head_sha[:10]}, "
            f"{len(report.commits)} commit(s)")
    lines = [head, table(rows, ("phase", "status", "counts / reason"))]
    warnings = [f"warning: {r.phase}: {w}" for r in report.phases for w in r.warnings]
    warnings += [f"note: {n}" for n in report.notes]
    decided = sum(len(r.decisions) for r in report.phases)
    if decided:
        lines.append(f"{decided} decision(s) recorded"
                     + ("" if report.dry_run else
                        f" (memhtml sleep review {report.run_id} shows each, with its rule "
                        "and figures)"))
    if report.failed:
        lines.append(f"failed: {', '.join(report.failed)}")
    elif report.quiet:
        lines.append("nothing to do: every phase finished with nothing to change, so no "
                     "commit was made and no branch kept; there is nothing to merge")
    elif report.branch:
        lines.append(f"next: memhtml sleep review {report.run_id}, then merge or abort")
    payload = {"ok": report.ok, **({} if report.ok else {"code": ERR_PHASE_FAILED}),
               "run_id": report.run_id, "branch": report.branch,
               "stamp": report.stamp, "base_sha": report.base_sha,
               "head_sha": report.head_sha, "dry_run": report.dry_run,
               "resumed": report.resumed, "quiet": report.quiet,
               "failed": list(report.failed), "notes": list(report.notes),
               "commits": list(report.commits), "phases": list(report.phases)}
    return Reply(payload, "\n".join(lines), EXIT_OK if report.ok else EXIT_FAILED,
                 notes=tuple(warnings))


@sleep_app.command(name="run")
def sleep_run(*, dry_run: bool = False, phase: list[SleepPhase] | None = None,
              deep: bool = False,
              max_llm_calls: Annotated[int | None, Parameter(
                  validator=validators.Number(gte=0))] = None,
              max_llm_seconds: Annotated[float | None, Parameter(
                  validator=validators.Number(gte=0, lte=MAX_LLM_SECONDS))] = None,
              common: Common = _COMMON) -> int:
    """Cut sleep/<YYYY-MM-DD> at main's tip and run the phases on it, one commit each.
    Prints each phase as it ends and the whole report; exits 1 when a phase failed.

    Parameters
    ----------
    dry_run
        Run every phase and write nothing: no branch, no commit, no state change.
    phase
        Run only these phases (repeatable); preflight always runs.
    deep
        Run the deep passes as well (placement-triage runs only then).
    max_llm_calls
        At most this many language-model calls in the whole run, shared by every
        model phase; what is left is counted as budget_skipped, never a failure.
    max_llm_seconds
        At most this many seconds of wall-clock time waiting on the model in the whole
        run, shared likewise: a call is cut off when they run out (its connection
        closed), and the batches not asked are budget_skipped with the reason.
    """

    def body() -> Reply:
        from memhtml.sleep.runner import RunOptions, run_sleep

        deps = _deps(common)
        options = RunOptions(dry_run=dry_run, phases=frozenset(phase) if phase else None,
                             deep=deep, max_llm_calls=max_llm_calls,
                             max_llm_seconds=max_llm_seconds)
        return _run_reply(_value(run_sleep(deps, options)))

    return respond(common.json, body)


@sleep_app.command(name="resume")
def sleep_resume(run: str | None = None, /, *, deep: bool | None = None,
                 max_llm_calls: Annotated[int | None, Parameter(
                     validator=validators.Number(gte=0))] = None,
                 max_llm_seconds: Annotated[float | None, Parameter(
                     validator=validators.Number(gte=0, lte=MAX_LLM_SECONDS))] = None,
                 common: Common = _COMMON) -> int:
    """Finish a run that stopped: the phases its commits record as done are skipped,
    and the rest run with the options the run was started with.

    Parameters
    ----------
    run
        The run id (default: the newest run).
    deep
        Only for a run whose commits record no options (it stopped before its first
        commit): run it deep. A run that recorded its options resumes with them, and a
        flag contradicting them is refused.
    max_llm_calls
        Likewise: the call budget of a run that recorded none.
    max_llm_seconds
        This invocation's budget of seconds waiting on the model (not recorded).
    """

    def body() -> Reply:
        from memhtml.sleep.resume import resume_sleep

        deps = _deps(common)
        return _run_reply(_value(resume_sleep(deps, _run_id(deps, run), deep,
                                              max_llm_calls, max_llm_seconds)))

    return respond(common.json, body)


@sleep_app.command(name="plan")
def sleep_plan(*, common: Common = _COMMON) -> int:
    """Would a run change anything? would-change, no-signal or unknown, from counts alone
    (no phase runs). Trigger runs by how much was written, not by the calendar."""

    def body() -> Reply:
        from memhtml.sleep.plan import plan_sleep

        plan = _value(plan_sleep(_deps(common)))
        rows: list[tuple[str, ...]] = [
            ("changed since last run", str(plan.changed_since_last_run)),
            ("missing vectors", "?" if plan.missing_vectors is None
             else str(plan.missing_vectors)),
            ("transcripts waiting", str(plan.transcripts_waiting)),
            ("dangling links", str(plan.dangling_links)),
            ("entity merges waiting", "?" if plan.entity_merges_waiting is None
             else str(plan.entity_merges_waiting)),
            ("dedup input", f"{plan.dedup_input} (candidates {plan.dedup_candidates})"),
            ("mining input", f"{plan.mining_input} (candidates {plan.mining_candidates})"),
        ]
        text = "\n".join([
            f"{plan.verdict} (commit {plan.commit[:10]}, checkout "
            f"{'matches' if plan.checkout_matches else 'differs'}, last run "
            f"{plan.last_run or 'none'})", table(rows)])
        return Reply(plan, text, notes=tuple(f"note: {n}" for n in plan.notes))

    return respond(common.json, body)


@sleep_app.command(name="status")
def sleep_status(run: str | None = None, /, *, common: Common = _COMMON) -> int:
    """The runs this clone holds (or one): state against main (mergeable, main-advanced,
    merged, empty, nothing-to-do, or stopped: ended before its report, finish it with
    memhtml sleep resume), base and tip, commits, phases done (a phase with nothing to
    change counts as done). Always exits 0.

    Parameters
    ----------
    run
        One run id (default: every run, newest first).
    """

    def body() -> Reply:
        from memhtml.sleep.runs import sleep_status as status_of

        deps = _deps(common)
        status = _value(status_of(deps, None if run is None else _run_id(deps, run)))
        rows: list[tuple[str, ...]] = [
            (r.run_id, "stopped, resume" if r.state == "stopped" else r.state,
             f"{r.base[:10]}..{r.tip[:10]}", str(r.commits),
             f"{len(r.done)}/17 done", r.stamp or "-") for r in status.runs]
        text = (f"main {status.main[:10]}\n" + table(
            rows, ("run", "state", "base..tip", "commits", "phases", "stamp"))
            if rows else f"main {status.main[:10]}; no sleep run")
        resume = tuple(f"note: run {r.run_id} stopped before its report; memhtml sleep "
                       f"resume {r.run_id} finishes it" for r in status.runs
                       if r.state == "stopped")
        return Reply(status, text,
                     notes=(*resume, *(f"note: {n}" for n in status.notes)))

    return respond(common.json, body)


@sleep_app.command(name="review")
def sleep_review(run: str | None = None, /, *, common: Common = _COMMON) -> int:
    """What a run would bring into main: per-phase counts, its commits and their
    trailers, a diff stat, and each file's class (meta-only, body-changed, archived,
    moved, created, deleted) with the decisions that changed it: phase, rule, figures,
    commit. Generated site pages are counted apart. Always exits 0.

    Parameters
    ----------
    run
        The run id (default: the newest run).
    """

    def body() -> Reply:
        from memhtml.sleep.review import review_run

        deps = _deps(common)
        run_id = _run_id(deps, run)
        quiet = _quiet(deps, run_id)
        if quiet is not None:
            return quiet
        review = _value(review_run(deps, run_id))
        lines = [f"run {review.run_id} ({review.state}): {review.base[:10]}..{review.tip[:10]}"]
        lines += [f"  {p.phase}: {_counts(p.counts)}" for p in review.phases if p.done]
        lines += [f"{c.sha[:10]} {c.subject}" for c in review.commits]
        for f in review.files:
            lines.append(f"{f.change:<12} {f.path}" + (f" -> {f.to}" if f.to else "")
                         + f"  +{f.insertions} -{f.deletions}")
            lines += [f"    {d.phase}: {d.rule} ({d.words})"
                      + (f" [{d.figures_text()}]" if d.figures else "")
                      + (f" with {', '.join(d.related)}" if d.related else "")
                      + (f" @ {d.commit[:10]}" if d.commit else "") for d in f.decisions]
        lines.append(f"{review.stat.files} file(s) changed, {review.stat.insertions} "
                     f"insertion(s), {review.stat.deletions} deletion(s); "
                     f"{review.generated} generated site page(s) counted apart")
        lines += [f"{phase} sweep: {n} file(s)" for phase, n in review.swept.items()]
        if review.unexplained:
            lines.append("changed with no recorded decision: " + ", ".join(review.unexplained))
        lines += [f"rejected     {path} @ {sha[:10]}" for path, sha in review.rejected]
        return Reply(review, "\n".join(line for line in lines if line))

    return respond(common.json, body)


def _quiet(deps: SleepDeps, run_id: str) -> Reply | None:
    """The answer about a run that found nothing to do (no branch; the state plane
    notes it), or None when ``run_id`` names a branch or no quiet run."""
    from memhtml.sleep.runs import quiet_run

    found = _value(quiet_run(deps, run_id))
    if found is None:
        return None
    text = (f"run {found.run_id} found nothing to do at {found.base[:10]} (stamped "
            f"{found.stamp.isoformat()}): it made no commit and kept no branch, so there "
            "is nothing to review or merge")
    return Reply({"ok": True, "run_id": found.run_id, "merged": False, "nothing_to_do": True,
                  "base": found.base, "stamp": found.stamp, "phases": list(found.phases),
                  "reason": text}, text)


@sleep_app.command(name="merge")
def sleep_merge(run: str | None = None, /, *, common: Common = _COMMON) -> int:
    """Fast-forward main onto a reviewed run, or, when writers moved main meanwhile by
    commits touching none of the run's paths, land it as a merge commit on main's tip.
    Refused, moving nothing, when a path conflicts (each named), a memory would be lost,
    a title or claim changed that no phase of the run decided, the run archives more
    than sleep_archive_share of the live memories with nothing standing for them, or
    the head gate fails (a memory the base found is found no more, neither itself, nor
    where the run moved it, nor its keeper); then bring the checkout up to date and
    apply the run's pending marks. Exits 1 on a refusal. A run that found nothing to
    do has nothing to merge: it says so and exits 0.

    Parameters
    ----------
    run
        The run id (default: the newest run).
    """

    def body() -> Reply:
        from memhtml.sleep.merge import merge_run

        deps = _deps(common)
        run_id = _run_id(deps, run)
        quiet = _quiet(deps, run_id)
        if quiet is not None:
            return quiet
        outcome = _value(merge_run(deps, run_id))
        if not outcome.merged:
            return _merge_refused(outcome)
        at = outcome.merge_commit or outcome.tip or ""
        lines = [f"merged run {outcome.run_id}: {deps.main} at {at[:10]}"
                 + ("" if outcome.fast_forwarded else f" ({outcome.reason})"),
                 f"marks: {outcome.marks_applied} of {outcome.marks_pending} applied"]
        notes = []
        if outcome.marks_failed:
            notes.append(f"warning: marks not applied: {outcome.marks_failed}")
        notes += [f"note: {path} has local changes in the checkout; left as it is"
                  for path in outcome.kept]
        notes += [f"note: {path}: links into a memory the other side archived or moved now "
                  "point at where it went" for path in outcome.followed]
        notes += [f"note: {old} moved to {new}; kept as the same memory"
                  for old, new in outcome.moved]
        if outcome.checkout_pending:
            notes.append("note: git's index lock kept the checkout from following; the next "
                         "memhtml command brings it up to date")
        return Reply(outcome, "\n".join(lines), notes=tuple(notes))

    return respond(common.json, body)


def _merge_refused(outcome: MergeOutcome) -> Reply:
    """A refusal moves nothing: the JSON is the failure shape (code, error) with every
    field of the outcome beside it; the text says which refusal and why."""
    from memhtml.compose.run import merge_refusal_code

    text = f"refused ({outcome.refusal}): {outcome.reason}"
    fields = jsonable(outcome)
    payload = {**(fields if isinstance(fields, dict) else {}),
               **failure_payload(merge_refusal_code(outcome.refusal), text,
                                 outcome.lost or outcome.conflicts or outcome.violations)}
    return Reply(payload, text, EXIT_FAILED)


def _in_store(common: Common, path: str) -> str:
    """A path as the review lists it: an absolute one inside the store made relative
    to it (any other is passed on, and refused by name if it is no change)."""
    from pathlib import Path

    from memhtml.cli.common import store_root

    given = Path(path)
    if not given.is_absolute():
        return path
    try:
        return given.resolve().relative_to(store_root(common).resolve()).as_posix()
    except (ValueError, OSError):
        return path


@sleep_app.command(name="reject")
def sleep_reject(run: str, /, *paths: str, common: Common = _COMMON) -> int:
    """Refuse single changes of a finished run: one commit on its branch puts each
    named file back as the run's base held it (an archived or moved memory restored at
    its path, a rewritten one given its old bytes, a created file removed), with links
    into it followed back. Name files as ``sleep review`` lists them. Refused, moving
    nothing, when the run is not finished or is merged, a file is not one of its
    changes, or a link would be left pointing at nothing (reject the linking file's
    change in the same call). Then merge, behind the same checks, or abort.

    Parameters
    ----------
    run
        The run id (``memhtml sleep status`` lists them).
    paths
        The changed files to put back, as the review lists them.
    """

    def body() -> Reply:
        from memhtml.sleep.reject import reject_changes

        deps = _deps(common)
        run_id = _run_id(deps, run)
        if not paths:
            raise UsageError("name at least one changed file to reject "
                             f"(memhtml sleep review {run_id} lists them)")
        done = _value(reject_changes(deps, run_id, [_in_store(common, p) for p in paths]))
        lines = [f"rejected {len(done.rejected)} change(s) of run {done.run_id}: "
                 f"{done.branch} at {done.commit[:10]}"]
        lines += [f"  {row.change:<12} {row.path}" + (f" -> {row.to}" if row.to else "")
                  + " put back" for row in done.rejected]
        notes = tuple(f"note: {path}: its links point back at the restored memory"
                      for path in done.relinked) + tuple(
            f"note: {path} was changed by the same decision and still is; reject it too "
            "to undo the whole of it" for path in done.related) + tuple(
            f"warning: commit {sha[:10]} on the branch is neither the run's nor a "
            "rejection; what it did to a rejected file is undone with it (git keeps it)"
            for sha in done.hand_commits)
        lines.append(f"next: memhtml sleep review {done.run_id}, then merge or abort")
        return Reply(done, "\n".join(lines), notes=notes)

    return respond(common.json, body)


@sleep_app.command(name="abort")
def sleep_abort(run: str | None = None, /, *, common: Common = _COMMON) -> int:
    """Delete a run's branch. Nothing is rolled back: main never moved.

    Parameters
    ----------
    run
        The run id (default: the newest run).
    """

    def body() -> Reply:
        from memhtml.sleep.runs import abort_run

        deps = _deps(common)
        aborted = _value(abort_run(deps, _run_id(deps, run)))
        return Reply(aborted, f"deleted {aborted.branch} (was {aborted.state}, tip "
                              f"{aborted.tip[:10]})")

    return respond(common.json, body)
