"""Phase 17, report: ``.memhtml/sleep/<run-id>.html``. One commit.

The page is built from the branch, not from memory: a phase with commits is shown as
its trailers say (``done``, its counts and warnings), whichever invocation landed it,
and only the phases without a commit (failed, blocked, not built, not asked for, done
with nothing to change) from this invocation's records. So a run killed midway and
resumed writes the very page the uninterrupted run would have. It carries ``base_sha``,
``head_sha`` and the commit list, so an abort (no commit, ``head_sha`` equal to
``base_sha``) reads apart from a partial failure.

It lists every decision the run's commits recorded, under the file it is about, with
its phase, rule, figures and commit, as ``sleep review`` does (``sleep.explain``):
generated site pages are counted apart, files only a sweep touched are counted per
sweep, and a change no decision covers is listed as such. A dry run shows the
decisions its phases would have made.

A run in which every phase finished with nothing to change writes no page: the report
would be the night's only commit, and a second night over an unchanged store must make
none (the runner gives the branch back and notes the run in the state plane).
"""

from __future__ import annotations

from collections import Counter
from typing import Final

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.services import CommitInfo, PathChange, TreeEntry
from memhtml.sleep.contract import (
    SLEEP_PHASES,
    WARNINGS_IN_TRAILERS,
    ledger_path,
    report_path,
)
from memhtml.sleep.decisions import DecidingCommit, Decision, RunDecisions
from memhtml.sleep.errors import describe_sleep_error
from memhtml.sleep.explain import Explanation, explain, read_explanation
from memhtml.sleep.history import RunCommit, commit_infos, run_commit
from memhtml.sleep.ledger import MARK_KINDS, Ledger, read_ledger
from memhtml.sleep.phase import (
    PhaseCommit,
    PhaseEnv,
    PhaseFault,
    PhaseRecord,
    PhaseResult,
    counts_json,
)
from memhtml.sleep.phases.report_page import ReportModel, ReportRow, render_report
from memhtml.store.errors import describe

NOTHING_TO_DO: Final = ("every phase finished with nothing to change: no report is "
                        "committed and the run makes no commit at all")


def nothing_to_do(records: tuple[PhaseRecord, ...]) -> bool:
    """Whether every phase before the report that ran finished with nothing to change
    (in a dry run: would have changed nothing): none failed or was blocked, none
    committed, changed a path or earned a mark."""
    ran = [r for r in records if r.status != "not-selected"]
    return all(r.status == "done" and not r.commits and not r.changed_paths and not r.marks
               for r in ran)


def _rows(env: PhaseEnv, commits: tuple[RunCommit, ...]) -> tuple[ReportRow, ...]:
    landed: dict[str, list[RunCommit]] = {}
    for commit in commits:
        if commit.phase is not None:
            landed.setdefault(commit.phase, []).append(commit)
    records: dict[str, PhaseRecord] = {r.phase: r for r in env.earlier}
    rows: list[ReportRow] = []
    for phase in SLEEP_PHASES:
        if phase == "report":
            rows.append(ReportRow(phase, "this page", "{}", None, (), ()))
            continue
        mine = landed.get(phase)
        if mine:
            last = mine[-1]
            rows.append(ReportRow(phase, "done", counts_json(last.counts), None,
                                  last.warnings, tuple(c.sha for c in mine)))
            continue
        record = records.get(phase)
        if record is None:
            rows.append(ReportRow(phase, "not-selected", "{}", None, (), ()))
            continue
        status = "done" if record.status == "skipped" else record.status
        rows.append(ReportRow(phase, status, counts_json(record.counts), record.reason,
                              record.warnings[:WARNINGS_IN_TRAILERS], ()))
    return tuple(rows)


def _ledger(env: PhaseEnv, tip: str) -> IOResult[Ledger, PhaseFault]:
    git = env.git
    path = ledger_path(env.run_id)
    found: IOResult[tuple[TreeEntry, ...], PhaseFault] = git.entries_at(tip, [path]).alt(
        lambda error: PhaseFault(describe(error)))

    def read(entries: tuple[TreeEntry, ...]) -> IOResult[Ledger, PhaseFault]:
        if not entries or entries[0].is_symlink:
            return IOSuccess(Ledger())
        blob = entries[0].blob_id
        return git.read_blobs([blob]).map(lambda blobs: read_ledger(blobs.get(blob))).alt(
            lambda error: PhaseFault(describe(error)))

    return found.bind(read)


def _deciding(commits: tuple[RunCommit, ...]) -> tuple[DecidingCommit, ...]:
    return tuple(DecidingCommit(c.sha, c.phase, c.parents[0] if c.parents else None)
                 for c in commits)


def _explained(env: PhaseEnv, tip: str, commits: tuple[RunCommit, ...]
               ) -> IOResult[Explanation, PhaseFault]:
    """The run's changes and decisions as the branch holds them; in a dry run, where
    nothing landed, the decisions the phases would have made."""
    if env.dry_run:
        would: tuple[Decision, ...] = tuple(d for r in env.earlier for d in r.decisions)
        paths = {p for d in would for p in (d.path, d.to) if p is not None}
        return IOSuccess(explain(paths, RunDecisions(would)))
    return read_explanation(env.git, env.run_id, env.base, tip, _deciding(commits)).alt(
        lambda error: PhaseFault(describe(error)))


def report(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    tip = env.version.sha
    if tip is None:
        return IOFailure(PhaseFault("the branch has no commit"))
    if tip == env.base and nothing_to_do(env.earlier):
        return IOSuccess(PhaseResult(counts={"commits": 0}, reason=NOTHING_TO_DO))
    git = env.git
    path = report_path(env.run_id)

    def infos() -> IOResult[tuple[CommitInfo, ...], PhaseFault]:
        if tip == env.base:
            return IOSuccess(())
        between: IOResult[tuple[str, ...], PhaseFault] = git.commits_between(env.base, tip).alt(
            lambda error: PhaseFault(describe(error)))
        return between.bind(lambda shas: commit_infos(git, shas).alt(
            lambda error: PhaseFault(describe_sleep_error(error))))

    def page(commits: tuple[RunCommit, ...], ledger: Ledger, explained: Explanation
             ) -> PhaseResult:
        kinds = Counter(mark.kind for mark in ledger.marks)
        model = ReportModel(
            run_id=env.run_id, branch=env.branch,
            stamp=env.now, base_sha=env.base, head_sha=tip, dry_run=env.dry_run,
            commits=tuple((c.sha, c.phase or "-", c.subject) for c in commits),
            rows=_rows(env, commits),
            marks=tuple((kind, kinds[kind]) for kind in MARK_KINDS if kinds[kind]),
            unparsed=ledger.unparsed, below_floor=ledger.of_kind("commitment-below-floor"),
            explained=explained)
        data = render_report(model).encode("utf-8")
        counts = {"commits": len(commits), "bytes": len(data),
                  "marks": len(ledger.marks), "below_floor": kinds["commitment-below-floor"],
                  "decisions": explained.decisions, "generated": len(explained.generated),
                  "unexplained": len(explained.unexplained)}
        return PhaseResult(counts=counts, commits=(PhaseCommit(
            "run report", (PathChange(path, data),)),))

    def read(found: tuple[CommitInfo, ...]) -> IOResult[PhaseResult, PhaseFault]:
        commits = tuple(run_commit(info, env.run_id) for info in found)
        return _ledger(env, tip).bind(lambda ledger: _explained(env, tip, commits).map(
            lambda explained: page(commits, ledger, explained)))

    return infos().bind(read)
