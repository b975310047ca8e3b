"""A run as its branch records it: the commits, and what their trailers say.

The trailers are the only record of what a run did. Resume reads the phases already
done from them, review lists them, the report and status print them; nothing is kept
in a table beside the branch, because a second record would disagree with the commits
exactly when it matters (a process killed after a commit and before the row).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import reduce
from typing import Final

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import GitError, NotFound
from memhtml.contracts.services import CommitInfo, Repository, Signature, TreeEntry
from memhtml.sleep.contract import (
    MERGE_OP,
    SLEEP_DIR,
    SLEEP_OP,
    SLEEP_PHASES,
    TRAILER_BASE,
    TRAILER_CALLS,
    TRAILER_COUNTS,
    TRAILER_OP,
    TRAILER_OPTIONS,
    TRAILER_PART,
    TRAILER_PHASE,
    TRAILER_QUIET,
    TRAILER_RUN,
    TRAILER_STAMP,
    TRAILER_WARNING,
    RunFlags,
    SleepPhase,
    branch_of,
    parse_stamp,
    report_path,
    run_day,
    run_order,
    stamp_text,
)
from memhtml.sleep.errors import RunNotFound, SleepError
from memhtml.sleep.phase import Counts, CountValue


@dataclass(frozen=True)
class RunCommit:
    """One commit on a run branch, with its trailers read."""

    sha: str
    subject: str
    parents: tuple[str, ...]
    trailers: tuple[tuple[str, str], ...]
    phase: SleepPhase | None
    """None for a commit that is not this run's (made on the branch by hand)."""
    counts: Counts
    warnings: tuple[str, ...]
    part: tuple[int, int] | None

    @property
    def completes_phase(self) -> bool:
        """Whether this commit finishes its phase (its last part, or a one-commit phase)."""
        return self.phase is not None and (self.part is None or self.part[0] == self.part[1])


@dataclass(frozen=True)
class RunHistory:
    """A run branch read back: where it was cut, its commits oldest first, its stamp."""

    run_id: str
    branch: str
    tip: str
    base: str
    commits: tuple[RunCommit, ...]
    stamp: datetime | None
    flags: RunFlags | None = None
    """The options the run was started with, as its commits record them (None: no
    commit of the run records any)."""
    calls_spent: int = 0
    """Model calls the run had spent at its last commit."""

    def done(self) -> Mapping[SleepPhase, RunCommit]:
        """Each phase whose commits are all on the branch, with its last commit."""
        found: dict[SleepPhase, RunCommit] = {}
        for commit in self.commits:
            if commit.phase is not None and commit.completes_phase:
                found[commit.phase] = commit
        return {phase: found[phase] for phase in SLEEP_PHASES if phase in found}

    def quiet(self) -> Mapping[SleepPhase, Counts]:
        """The phases the run's report commit records as done with nothing to change
        (``Memhtml-Quiet``), with their counts. Read only from a report commit of the
        run itself (a hand commit's trailers say nothing)."""
        report = next((c for c in reversed(self.commits) if c.phase == "report"), None)
        if report is None:
            return {}
        found: dict[SleepPhase, Counts] = {}
        for name, value in report.trailers:
            if name.lower() != TRAILER_QUIET.lower():
                continue
            word, _, counts = value.partition(" ")
            phase = _phase(word)
            if phase is not None and phase not in found:
                found[phase] = _counts(counts)
        return {phase: found[phase] for phase in SLEEP_PHASES if phase in found}

    def finished(self) -> tuple[SleepPhase, ...]:
        """Every phase the branch records as done: with its commits, or with nothing to
        change (``quiet``), in run order. A finished run reads 17 of 17."""
        done, quiet = self.done(), self.quiet()
        return tuple(p for p in SLEEP_PHASES if p in done or p in quiet)

    def partial(self) -> tuple[SleepPhase, ...]:
        """Phases with some of their parts on the branch and not the last."""
        done = self.done()
        started = {c.phase for c in self.commits if c.phase is not None and c.part is not None}
        return tuple(p for p in SLEEP_PHASES if p in started and p not in done)

    def commits_of(self, phase: SleepPhase) -> tuple[str, ...]:
        return tuple(c.sha for c in self.commits if c.phase == phase)


def _trailer(trailers: Sequence[tuple[str, str]], key: str) -> str | None:
    for name, value in trailers:
        if name.lower() == key.lower():
            return value
    return None


def _counts(text: str | None) -> Counts:
    if not text:
        return {}
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    kept: dict[str, CountValue] = {}
    for key, value in data.items():
        if isinstance(value, (int, float, str, bool)) or value is None:
            kept[str(key)] = value
    return kept


def _part(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    first, _, last = text.partition("/")
    low, high = _count(first), _count(last)
    if low is not None and high is not None and 1 <= low <= high:
        return low, high
    return None


_COUNT_CEILING: Final = 10**18


def _count(text: str) -> int | None:
    """A trailer value read as a plain count, or None. ``str.isdigit`` alone also passes
    superscripts and other digits ``int`` refuses, and a forged trailer can hold any; a
    run of digits past the ceiling reads as the ceiling, which keeps ``int`` clear of
    the interpreter's digit limit and still spends a whole budget."""
    if not (text.isascii() and text.isdecimal()):
        return None
    return int(text) if len(text) <= 18 else _COUNT_CEILING


def _phase(text: str | None) -> SleepPhase | None:
    for phase in SLEEP_PHASES:
        if phase == text:
            return phase
    return None


def run_commit(info: CommitInfo, run_id: str) -> RunCommit:
    trailers = info.trailers
    ours = _trailer(trailers, TRAILER_RUN) == run_id
    return RunCommit(
        sha=info.sha, subject=info.message.split("\n", 1)[0], parents=info.parents,
        trailers=trailers,
        phase=_phase(_trailer(trailers, TRAILER_PHASE)) if ours else None,
        counts=_counts(_trailer(trailers, TRAILER_COUNTS)) if ours else {},
        warnings=tuple(value for name, value in trailers
                       if name.lower() == TRAILER_WARNING.lower()) if ours else (),
        part=_part(_trailer(trailers, TRAILER_PART)) if ours else None,
    )


def commit_infos(git: Repository, shas: Sequence[str]) -> IOResult[tuple[CommitInfo, ...],
                                                                      SleepError]:
    def then(done: IOResult[tuple[CommitInfo, ...], SleepError], sha: str
             ) -> IOResult[tuple[CommitInfo, ...], SleepError]:
        return done.bind(lambda so_far: git.commit_info(sha).map(lambda info: (*so_far, info)))

    start: IOResult[tuple[CommitInfo, ...], SleepError] = IOSuccess(())
    return reduce(then, shas, start)


def resolve_run(git: Repository, run_id: str) -> IOResult[str, SleepError]:
    """The run branch's tip, or ``RunNotFound`` when no branch carries that id."""
    resolved: IOResult[str, SleepError] = git.resolve(branch_of(run_id))
    return resolved.lash(lambda error: IOFailure(RunNotFound(run_id))
                         if isinstance(error, NotFound) else IOFailure(error))


def read_history(git: Repository, main_ref: str, run_id: str
                 ) -> IOResult[RunHistory, SleepError]:
    """The run's branch read back. Its base is the ``Memhtml-Base`` its commits carry;
    a branch with no commit of the run yet is based at its tip."""

    def from_tip(tip: str) -> IOResult[RunHistory, SleepError]:
        info: IOResult[CommitInfo, SleepError] = git.commit_info(tip)
        return info.bind(lambda top: based(tip, top))

    def based(tip: str, top: CommitInfo) -> IOResult[RunHistory, SleepError]:
        if _trailer(top.trailers, TRAILER_RUN) == run_id:
            base = _trailer(top.trailers, TRAILER_BASE)
            if base:
                return listed(tip, base)
        # The tip is not a commit of the run: either none landed yet (the branch is at
        # its base) or someone committed on the branch by hand; the run's own commits,
        # if any, are among those main does not hold.
        main: IOResult[str, SleepError] = git.resolve(main_ref)
        return main.bind(lambda at: git.commits_between(at, tip)).bind(
            lambda shas: commit_infos(git, shas)).bind(
            lambda infos: listed(tip, next(
                (b for i in infos if _trailer(i.trailers, TRAILER_RUN) == run_id
                 and (b := _trailer(i.trailers, TRAILER_BASE))), tip)))

    def listed(tip: str, base: str) -> IOResult[RunHistory, SleepError]:
        between: IOResult[tuple[str, ...], SleepError] = git.commits_between(base, tip)
        return between.bind(lambda shas: commit_infos(git, shas)).map(
            lambda infos: history(tip, base, infos))

    def history(tip: str, base: str, infos: tuple[CommitInfo, ...]) -> RunHistory:
        commits = tuple(run_commit(info, run_id) for info in infos)
        stamps = [parse_stamp(_trailer(i.trailers, TRAILER_STAMP) or "") for i in infos
                  if _trailer(i.trailers, TRAILER_RUN) == run_id]
        stamp = next((s for s in stamps if s is not None), None)
        ours = [i.trailers for i in infos if _trailer(i.trailers, TRAILER_RUN) == run_id]
        flags = next((f for t in ours if (f := RunFlags.parse(_trailer(t, TRAILER_OPTIONS)))
                      is not None), None)
        spent = max((n for t in ours
                     if (n := _count(_trailer(t, TRAILER_CALLS) or "")) is not None),
                    default=0)
        return RunHistory(run_id, branch_of(run_id), tip, base, commits, stamp, flags, spent)

    return resolve_run(git, run_id).bind(from_tip)


@dataclass(frozen=True, slots=True)
class LastRun:
    """The last merged run: its id, the run's tip commit (the tree it curated: what
    changed since is counted from there), its stamp."""

    run_id: str
    commit: str
    stamp: datetime


@dataclass(frozen=True, slots=True)
class RunLookup:
    """What the history read found: the last merged run (None: none), and what it
    passed over and why (a report file no run commit wrote, a run stamped later than
    now), each one line for a person."""

    last: LastRun | None
    notes: tuple[str, ...] = ()


RUN_HISTORY_ROUNDS: Final = (1, 8, 64, 256)
"""How many commits touching ``.memhtml/sleep/`` each round of the history read takes,
newest first; a round that finds no run's commit is followed by a longer one. A walk
stops once it has its number, and the newest such commit is a run's own in the
ordinary case, so the first round walks back only to the last run; the rounds
lengthen for commits a person, a pull or a sync merge put there, and stop at the
last."""


def last_merged_run(git: Repository, at: str, now: datetime, committer: Signature | None
                    ) -> IOResult[RunLookup, GitError]:
    """The newest run merged into the history of ``at``, read from the commits that
    landed it, never from a file's name.

    A run reaches a branch in one of two commits: its report phase's commit (a
    fast-forward: ``Memhtml-Op: sleep``, ``Memhtml-Phase: report``) or the merge
    commit that replayed it onto a main that had moved (``Memhtml-Op: sleep-merge``,
    its second parent the run's tip). Either counts only when it names a run id
    (``Memhtml-Run``), is stamped (``Memhtml-Stamp``) on that id's day and not after
    ``now``, holds the run's report, and (when ``committer`` is given) was committed
    by it, as every commit memhtml makes is. So a report file planted by a pull or a
    plain ``git commit`` (``.memhtml/sleep/2099-01-01.html``) is no run, and a run
    stamped in the future is passed over with a note; the commits before it are read.
    The commits are those touching ``.memhtml/sleep/``, newest first, in rounds
    (``RUN_HISTORY_ROUNDS``), and only when the tree holds a report at all.
    """
    notes: dict[str, str] = {}
    """Run id -> why its commit was passed over (a run stamped in the future)."""

    def listed(entries: tuple[TreeEntry, ...]) -> IOResult[RunLookup, GitError]:
        reports = sorted((e.path[len(SLEEP_DIR):-len(".html")] for e in entries
                          if e.path.startswith(SLEEP_DIR) and e.path.endswith(".html")
                          and "/" not in e.path[len(SLEEP_DIR):]), key=run_order)
        if not reports:
            return IOSuccess(RunLookup(None))
        return round_of(0, reports)

    def round_of(n: int, reports: list[str]) -> IOResult[RunLookup, GitError]:
        limit = RUN_HISTORY_ROUNDS[n]
        touching: IOResult[tuple[CommitInfo, ...], GitError] = git.commits_touching(
            at, SLEEP_DIR.rstrip("/"), limit)
        return touching.bind(lambda found: judged(n, reports, found))

    def judged(n: int, reports: list[str], found: tuple[CommitInfo, ...]
               ) -> IOResult[RunLookup, GitError]:
        notes.clear()  # a longer round reads the same commits again
        claims: list[tuple[CommitInfo, LastRun]] = []
        for info in found:
            claim = _run_claim(info, committer)
            if claim is None:
                continue
            if claim.stamp > now:
                notes.setdefault(claim.run_id, (
                    f"run {claim.run_id} (commit {info.sha[:10]}) is stamped "
                    f"{stamp_text(claim.stamp)}, later than now ({stamp_text(now)}); a "
                    "date in the future is not counted as a run"))
                continue
            claims.append((info, claim))

        def then(so_far: IOResult[LastRun | None, GitError],
                 candidate: tuple[CommitInfo, LastRun]) -> IOResult[LastRun | None, GitError]:
            info, claim = candidate

            def held() -> IOResult[LastRun | None, GitError]:
                entries: IOResult[tuple[TreeEntry, ...], GitError] = git.entries_at(
                    info.sha, [report_path(claim.run_id)])
                return entries.map(lambda es: claim if es else None)

            return so_far.bind(lambda got: IOSuccess(got) if got is not None else held())

        start: IOResult[LastRun | None, GitError] = IOSuccess(None)
        newest = reduce(then, claims, start)

        def settled(last: LastRun | None) -> IOResult[RunLookup, GitError]:
            if last is not None or len(found) < RUN_HISTORY_ROUNDS[n]:
                return IOSuccess(done(reports, last))  # found, or the whole history read
            if n + 1 < len(RUN_HISTORY_ROUNDS):
                return round_of(n + 1, reports)
            return IOSuccess(done(reports, None, (
                f"no sleep run's commit among the newest {len(found)} commits touching "
                f"{SLEEP_DIR}; none is counted",)))

        return newest.bind(settled)

    def done(reports: list[str], last: LastRun | None, more: tuple[str, ...] = ()
             ) -> RunLookup:
        said = [*notes.values(), *more]
        for run_id in reports:
            if run_id in notes or (last is not None
                                   and run_order(run_id) <= run_order(last.run_id)):
                continue
            said.append(f"{report_path(run_id)} was not committed by a sleep run's merge; "
                        "it is not counted as a run")
        return RunLookup(last, tuple(said))

    tree: IOResult[tuple[TreeEntry, ...], GitError] = git.list_tree(at)
    return tree.bind(listed)


def _run_claim(info: CommitInfo, committer: Signature | None) -> LastRun | None:
    """The run ``info`` landed (its id, its tip, its stamp) when it is a commit that
    landed one, made by ``committer``, stamped on its run id's day; None otherwise."""
    trailers = info.trailers
    run_id = _trailer(trailers, TRAILER_RUN) or ""
    ops = {value for name, value in trailers if name.lower() == TRAILER_OP.lower()}
    if run_day(run_id) is None or (committer is not None and info.committer != committer):
        return None
    if SLEEP_OP in ops and _trailer(trailers, TRAILER_PHASE) == "report":
        tip = info.sha
    elif MERGE_OP in ops and len(info.parents) == 2:
        tip = info.parents[1]
    else:
        return None
    stamp = parse_stamp(_trailer(trailers, TRAILER_STAMP) or "")
    if stamp is None or stamp.date().isoformat() != run_day(run_id):
        return None
    return LastRun(run_id, tip, stamp)
