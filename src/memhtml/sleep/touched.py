"""The touched set: the paths this run's decision commits changed, read from the branch.

placement-triage renames inbox files. A rename of a file another phase of the same
run decided something about (merged into, linked, retyped, stamped a task on) would
fold that phase's edit into a move: the reviewer would find the decision under a path
nobody chose it for, and the edge a phase authored may not yet be in the index the move
reads to repair inbound hrefs. So placement leaves such files where they are.

**What counts.** Every commit between the run's base and the branch tip, each diffed
against its first parent, except a commit whose ``Memhtml-Phase`` trailer names a
phase of ``SWEEP_PHASES``. A sweep (confidence-decay restamping every eligible file)
decides nothing about any one file; counting it would pin nearly every candidate and
leave the phase nothing to do. A commit with no phase trailer (a person's own commit
on the run branch) is no sweep, so it counts. Membership is by what the phase decides,
not by how much of the file its diff changed: a one-line link still pins.

**Where it is read from.** The commits' trailers and diffs, never a record kept in the
process, so a resumed run, whose earlier phases exist only as commits, reads the very
set the uninterrupted run would have.

**When a read fails.** The per-commit reading is exact; if any part of it fails (a
commit that cannot be read, a diff that cannot be taken, a commit with no parent inside
the range) the set widens to the whole range's diff (``widened``): larger than the
truth, never smaller, so the guard errs toward refusing a move. If that fails too the
set is unknown and the failure is returned; the caller must then move nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import GitError, GitFailure
from memhtml.contracts.services import CommitInfo, Repository
from memhtml.sleep.contract import SWEEP_PHASES, TRAILER_PHASE, TRAILER_RUN
from memhtml.store.errors import describe


@dataclass(frozen=True, slots=True)
class TouchedSet:
    """The paths the run's decision commits changed (see the module docstring)."""

    paths: frozenset[str]
    widened: bool = False
    """Read from the whole range's diff because the per-commit reading failed."""
    reason: str | None = None
    """Why it widened."""
    commits: int = 0
    """Decision commits read (0 when widened: the range was read as one diff)."""
    sweeps: int = 0
    """Sweep commits left out."""

    def __contains__(self, path: object) -> bool:
        return path in self.paths

    def __len__(self) -> int:
        return len(self.paths)


NOTHING_TOUCHED = TouchedSet(frozenset())
"""The set of a range with no commit (a dry run, or a run nothing has committed to)."""


def _trailer(info: CommitInfo, key: str) -> str | None:
    for name, value in info.trailers:
        if name.lower() == key.lower():
            return value
    return None


def is_sweep(info: CommitInfo, run_id: str | None = None) -> bool:
    """Whether a commit is a sweep's: its phase trailer names a ``SWEEP_PHASES`` phase
    (and, given ``run_id``, its run trailer names that run). Anything else decides."""
    phase = _trailer(info, TRAILER_PHASE)
    if phase is None or phase.strip() not in SWEEP_PHASES:
        return False
    return run_id is None or _trailer(info, TRAILER_RUN) == run_id


@dataclass(frozen=True, slots=True)
class _Read:
    paths: frozenset[str] = frozenset()
    commits: int = 0
    sweeps: int = 0


def _diff_of(git: Repository, info: CommitInfo, run_id: str | None
             ) -> IOResult[_Read, GitError]:
    if is_sweep(info, run_id):
        return IOSuccess(_Read(sweeps=1))
    if not info.parents:
        # A root commit cannot lie between a base and a tip it descends to; if the
        # range says otherwise it is not what it seems, and the whole diff is safer.
        return IOFailure(GitFailure("changed_paths", f"{info.sha} has no parent"))
    diffed: IOResult[tuple[str, ...], GitError] = git.changed_paths(info.parents[0],
                                                                    info.sha)
    return diffed.map(lambda paths: _Read(frozenset(paths), commits=1))


def _per_commit(git: Repository, shas: Sequence[str], run_id: str | None
                ) -> IOResult[_Read, GitError]:
    def then(done: IOResult[_Read, GitError], sha: str) -> IOResult[_Read, GitError]:
        def add(so_far: _Read) -> IOResult[_Read, GitError]:
            info: IOResult[CommitInfo, GitError] = git.commit_info(sha)
            return info.bind(lambda got: _diff_of(git, got, run_id)).map(
                lambda one: _Read(so_far.paths | one.paths, so_far.commits + one.commits,
                                  so_far.sweeps + one.sweeps))

        return done.bind(add)

    start: IOResult[_Read, GitError] = IOSuccess(_Read())
    return reduce(then, shas, start)


def touched_paths(git: Repository, base: str, tip: str, *, run_id: str | None = None
                  ) -> IOResult[TouchedSet, GitError]:
    """The touched set of the commits from ``base`` (excluded) to ``tip``: exact when
    every commit reads, the whole range's diff (``widened``) when one does not, and
    the failure when neither can be read. ``run_id`` restricts the sweep exemption to
    that run's own commits."""
    if base == tip:
        return IOSuccess(NOTHING_TOUCHED)
    listed: IOResult[tuple[str, ...], GitError] = git.commits_between(base, tip)
    exact: IOResult[TouchedSet, GitError] = listed.bind(
        lambda shas: _per_commit(git, shas, run_id)).map(
        lambda read: TouchedSet(read.paths, commits=read.commits, sweeps=read.sweeps))

    def widen(error: GitError) -> IOResult[TouchedSet, GitError]:
        whole: IOResult[tuple[str, ...], GitError] = git.changed_paths(base, tip)
        return whole.map(lambda paths: TouchedSet(frozenset(paths), widened=True,
                                                  reason=describe(error)))

    return exact.lash(widen)
