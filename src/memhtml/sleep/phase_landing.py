"""A phase's result landed on the run branch: its commits with their decisions placed,
the lines they add to the run's decision file and ledger, the trailers each commit
carries, and the commits landed one by one.

A phase that changed something lands as one commit per non-empty ``PhaseCommit``,
each through the store's ``land`` (compare-and-swap on the branch tip); when one of
several fails, the branch is moved back to where the phase found it, so a phase's
changes and its marks land together or not at all. Its own module because it is
the one step after a phase answers, with its own reading of decisions, the ledger
and the trailers; the phase loop (``sleep.runner``) decides which phase runs, hands
its result here and reads a ``PhaseLanding`` back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.paths import to_document_path
from memhtml.contracts.services import PathChange, TreeEntry
from memhtml.format import remove_meta
from memhtml.head import HeadVersion
from memhtml.sleep.contract import (
    SLEEP_OP,
    SLEEP_PHASES,
    TRAILER_BASE,
    TRAILER_CALLS,
    TRAILER_COUNTS,
    TRAILER_OPTIONS,
    TRAILER_PART,
    TRAILER_PHASE,
    TRAILER_QUIET,
    TRAILER_RUN,
    TRAILER_STAMP,
    TRAILER_WARNING,
    WARNINGS_IN_TRAILERS,
    RunFlags,
    SleepPhase,
    decisions_path,
    ledger_path,
    stamp_text,
)
from memhtml.sleep.decisions import Decision, append_decisions
from memhtml.sleep.ledger import append_marks
from memhtml.sleep.phase import (
    Counts,
    PhaseCommit,
    PhaseFault,
    PhaseRecord,
    PhaseResult,
    counts_json,
)
from memhtml.sleep.run_context import RunContext, _Progress
from memhtml.store.errors import Refused, StoreError, describe
from memhtml.store.landing import Draft, Landed, land


@dataclass(frozen=True)
class PhaseLanding:
    result: PhaseResult
    tip: str
    shas: tuple[str, ...]
    marks: int
    paths: int
    decisions: tuple[Decision, ...] = ()


def with_warnings(counts: Counts, warnings: tuple[str, ...]) -> Counts:
    if not warnings:
        return counts
    return {**counts, "warnings": len(warnings)}


def _read_path(ctx: RunContext, commit: str, path: str) -> IOResult[bytes | None, StoreError]:
    git = ctx.deps.git
    entries: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(commit, [path])

    def read(found: tuple[TreeEntry, ...]) -> IOResult[bytes | None, StoreError]:
        if not found:
            return IOSuccess(None)
        if found[0].is_symlink:
            return IOFailure(Refused(f"{path} is a symbolic link in the tree; it is never "
                                     "rewritten"))
        blob = found[0].blob_id
        return git.read_blobs([blob]).map(lambda blobs: blobs.get(blob))

    return entries.bind(read)


MOVING: Final = frozenset({"archived", "folded", "merged", "moved"})
"""Decisions that take a file off its path (so hrefs to it are followed)."""


def attached(result: PhaseResult, version: HeadVersion | None = None
             ) -> tuple[PhaseCommit, ...]:
    """The phase's non-empty commits, each carrying its decisions: those it was given,
    each of the result's own placed in the first commit that changes its file (or
    where the file went), else in the last; and, given the ``version`` the phase read,
    a ``links-followed`` decision for each other memory a commit rewrote only to follow
    a file one of the phase's decisions moved (``followed``)."""
    commits = [c for c in result.commits if c.changes]
    if not commits:
        return ()
    extra: list[list[Decision]] = [[] for _ in commits]
    for decision in result.decisions:
        named = {decision.path, decision.to}
        at = next((n for n, commit in enumerate(commits)
                   if any(change.path in named for change in commit.changes)),
                  len(commits) - 1)
        extra[at].append(decision)
    out = [replace(c, decisions=(*c.decisions, *extra[n])) if extra[n] else c
           for n, c in enumerate(commits)]
    if version is None:
        return tuple(out)
    moved = {d.path: d.to for c in out for d in c.decisions
             if d.action in MOVING and d.to is not None}
    return tuple(replace(c, decisions=(*c.decisions, *more))
                 if (more := followed(c, moved, version)) else c for c in out)


def followed(commit: PhaseCommit, moved: Mapping[str, str], version: HeadVersion
             ) -> tuple[Decision, ...]:
    """The memories ``commit`` changed that no decision of its names and whose only
    reason is a file that left its path: it linked to the file's old path and now links
    to where the file went (``archive_many_step`` and ``move_step`` rewrite every href
    so). Anything else such a file changed would make it a change of its own, so it
    is claimed only when swapping the new hrefs back gives the old bytes."""
    if not moved or not commit.decisions:
        return ()
    phase = commit.decisions[0].phase
    named = {p for d in commit.decisions for p in (d.path, d.to) if p is not None}
    out: list[Decision] = []
    for change in commit.changes:
        old = version.get(change.path)
        if change.path in named or change.data is None or old is None:
            continue
        text = change.data.decode("utf-8", "replace")
        hit = sorted(o for o, to in moved.items() if to_document_path(o) in old.html
                     and to_document_path(to) in text)
        if not hit:
            continue
        back = text
        for origin in hit:
            back = back.replace(to_document_path(moved[origin]), to_document_path(origin))
        if back == old.html or _without_updated(back) == _without_updated(old.html):
            out.append(Decision.of(phase, "rewritten", change.path, "links-followed",
                                   related=hit, figures={"followed": len(hit)}))
    return tuple(out)


def _without_updated(html: str) -> str:
    return remove_meta(html, "memhtml-updated")


def _decided(commits: tuple[PhaseCommit, ...]) -> tuple[Decision, ...]:
    return tuple(d for commit in commits for d in commit.decisions)


def _with_records(ctx: RunContext, progress: _Progress, phase: SleepPhase,
                  result: PhaseResult
                  ) -> IOResult[tuple[tuple[PhaseCommit, ...], int], PhaseFault]:
    """The phase's non-empty commits, each carrying the lines its decisions add to the
    run's decision file, and the last the lines its marks add to the ledger (a commit of
    its own when the phase changed nothing else); and how many marks it adds."""
    commits = attached(result, progress.version)
    if not result.marks and not _decided(commits):
        return IOSuccess((commits, 0))
    ledger, decisions = ledger_path(ctx.run_id), decisions_path(ctx.run_id, phase)

    def recorded(current: bytes | None) -> tuple[PhaseCommit, ...]:
        data, out = current, []
        for commit in commits:
            data, added = append_decisions(data, commit.decisions)
            out.append(replace(commit, changes=(*commit.changes, PathChange(decisions, data)))
                       if added and data is not None else commit)
        return tuple(out)

    def appended(current: bytes | None, so_far: tuple[PhaseCommit, ...]
                 ) -> tuple[tuple[PhaseCommit, ...], int]:
        data, added = append_marks(current, result.marks)
        if not added or data is None:
            return so_far, 0
        change = PathChange(ledger, data)
        if not so_far:
            return (PhaseCommit(f"{added} pending mark(s)", (change,)),), added
        last = so_far[-1]
        return (*so_far[:-1], replace(last, changes=(*last.changes, change))), added

    def read(path: str, wanted: bool) -> IOResult[bytes | None, PhaseFault]:
        if not wanted:
            return IOSuccess(None)
        return _read_path(ctx, progress.tip, path).alt(
            lambda error: PhaseFault(f"cannot read {path}: {describe(error)}"))

    return read(decisions, bool(_decided(commits))).map(recorded).bind(
        lambda with_decisions: read(ledger, bool(result.marks)).map(
            lambda current: appended(current, with_decisions)))


def land_phase(ctx: RunContext, progress: _Progress, phase: SleepPhase, result: PhaseResult
                ) -> IOResult[PhaseLanding, PhaseFault]:
    if result.status == "not-built":
        return IOSuccess(PhaseLanding(result, progress.tip, (), 0, 0))
    decided = _decided(attached(result, progress.version))
    if ctx.dry_run or ctx.branch is None:
        paths = len({c.path for commit in result.commits for c in commit.changes})
        marks = len({mark.line() for mark in result.marks})
        return IOSuccess(PhaseLanding(result, progress.tip, (), marks, paths, decided))
    branch = ctx.branch

    def land_all(prepared: tuple[tuple[PhaseCommit, ...], int]
                 ) -> IOResult[PhaseLanding, PhaseFault]:
        commits, marks = prepared
        paths = len({c.path for commit in commits for c in commit.changes})
        return _land_commits(ctx, branch, phase, result, commits, progress.tip,
                             progress.records).map(
            lambda shas: PhaseLanding(result, shas[-1] if shas else progress.tip, shas, marks,
                                  paths, decided))

    return _with_records(ctx, progress, phase, result).bind(land_all)


def quiet_trailers(records: tuple[PhaseRecord, ...]) -> tuple[tuple[str, str], ...]:
    """One ``Memhtml-Quiet`` per phase done with nothing to change (no commit of its
    own), ``<phase> <counts JSON>``, in run order: the report's commit carries them, so
    the branch records that those phases are done too."""
    return tuple((TRAILER_QUIET, f"{r.phase} {counts_json(r.counts)}") for r in records
                 if r.status == "done" and not r.commits and r.phase != "report")


def _trailers(ctx: RunContext, phase: SleepPhase, result: PhaseResult, index: int, total: int,
              records: tuple[PhaseRecord, ...] = ()) -> tuple[tuple[str, str], ...]:
    counts = with_warnings(result.counts, result.warnings)
    out = [(TRAILER_RUN, ctx.run_id), (TRAILER_PHASE, phase), (TRAILER_COUNTS, counts_json(counts)),
           (TRAILER_BASE, ctx.base), (TRAILER_STAMP, stamp_text(ctx.stamp)),
           (TRAILER_OPTIONS, RunFlags(ctx.deep, ctx.calls.limit, None if ctx.selected is None
                                      else tuple(p for p in SLEEP_PHASES
                                                 if p in ctx.selected)).text()),
           (TRAILER_CALLS, str(ctx.calls.used))]
    if total > 1:
        out.append((TRAILER_PART, f"{index + 1}/{total}"))
    if index == total - 1:
        out += [(TRAILER_WARNING, w) for w in result.warnings[:WARNINGS_IN_TRAILERS]]
        if phase == "report":
            out += quiet_trailers(records)
    return tuple(out)


def _land_commits(ctx: RunContext, branch: str, phase: SleepPhase, result: PhaseResult,
                  commits: tuple[PhaseCommit, ...], start: str,
                  records: tuple[PhaseRecord, ...] = ()
                  ) -> IOResult[tuple[str, ...], PhaseFault]:
    deps = ctx.deps.branch_deps(branch, ctx.stamp)
    git = ctx.deps.git

    def draft_for(index: int, parent: str) -> IOResult[Draft, StoreError]:
        commit = commits[index]

        def check(tip: str | None) -> IOResult[Draft, StoreError]:
            if tip != parent:
                return IOFailure(Refused(f"{branch} moved to {tip} under the run"))
            return IOSuccess(Draft(
                parent=parent, changes=tuple(sorted(commit.changes, key=lambda c: c.path)),
                ops=(SLEEP_OP,), subject=f"{phase} ({ctx.run_id}): {commit.subject}",
                body=commit.body,
                trailers=_trailers(ctx, phase, result, index, len(commits), records)))

        return deps.tip().bind(check)

    def back(at: str, error: StoreError) -> IOResult[Landed, PhaseFault]:
        reason = f"could not commit on {branch}: {describe(error)}"
        if at == start:
            return IOFailure(PhaseFault(reason))
        moved: IOResult[None, StoreError] = git.move_ref(deps.ref, at, start)
        return moved.lash(lambda more: IOFailure(PhaseFault(
            f"{reason}; and could not drop its earlier commits: {describe(more)}"))).bind(
            lambda _: IOFailure(PhaseFault(reason)))

    def from_index(index: int, parent: str, shas: tuple[str, ...]
                   ) -> IOResult[tuple[str, ...], PhaseFault]:
        if index == len(commits):
            return IOSuccess(shas)
        landed: IOResult[Landed, PhaseFault] = land(
            deps, lambda: draft_for(index, parent)).lash(lambda error: back(parent, error))
        return landed.bind(lambda done: from_index(index + 1, done.commit, (*shas, done.commit)))

    return from_index(0, start, ())
