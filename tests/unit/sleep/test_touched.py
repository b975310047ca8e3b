"""The touched set: the union of the per-commit diffs of the run's decision commits (a
sweep's left out, a hand commit's counted), widened to the whole range when a commit
cannot be read, and unknown when neither can."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st
from returns.io import IOFailure, IOResult
from tests.unit.sleep.sleep_support import AUTHOR, err, ok

from memhtml.adapters.memory_git import InMemoryGit
from memhtml.contracts.errors import GitError, GitFailure
from memhtml.contracts.services import CommitInfo, PathChange
from memhtml.sleep.contract import SLEEP_PHASES, SWEEP_PHASES, SleepPhase
from memhtml.sleep.touched import touched_paths

AT = datetime(2026, 11, 29, 3, 0, 0, tzinfo=UTC)
RUN = "2026-11-29"
PATHS = tuple(f"areas/inbox/n-{n}.html" for n in range(6))


def message(phase: SleepPhase | None, run: str = RUN) -> str:
    if phase is None:
        return "a person's own edit on the run branch\n"
    return (f"{phase} ({run}): something\n\nMemhtml-Run: {run}\nMemhtml-Phase: {phase}\n"
            f"Memhtml-Base: 0\n")


def repo() -> tuple[InMemoryGit, str]:
    git = InMemoryGit(bare=True)
    base = ok(git.commit("main", None, [PathChange(p, b"start\n") for p in PATHS],
                         "start\n", AUTHOR, AT))
    return git, base


def commit(git: InMemoryGit, parent: str, phase: SleepPhase | None,
           changes: list[PathChange], run: str = RUN) -> str:
    return ok(git.commit("main", parent, changes, message(phase, run), AUTHOR, AT))


Step = tuple[SleepPhase | None, tuple[tuple[int, int | None], ...]]
"""One commit: its phase (None: a hand commit) and (path index, new content or delete)."""

steps = st.lists(st.tuples(
    st.one_of(st.none(), st.sampled_from(SLEEP_PHASES)),
    st.lists(st.tuples(st.integers(0, len(PATHS) - 1),
                       st.one_of(st.none(), st.integers(0, 3))), max_size=4).map(tuple)),
    max_size=8)


@given(steps)
def test_the_set_is_the_union_of_the_decision_commits_diffs(sequence: list[Step]) -> None:
    git, base = repo()
    tree: dict[str, bytes] = dict.fromkeys(PATHS, b"start\n")
    expected: set[str] = set()
    tip = base
    for phase, edits in sequence:
        changes = [PathChange(PATHS[i], None if v is None else f"v{v}\n".encode())
                   for i, v in edits]
        before = dict(tree)
        for change in changes:
            if change.data is None:
                tree.pop(change.path, None)
            else:
                tree[change.path] = change.data
        diff = {p for p in before.keys() | tree.keys() if before.get(p) != tree.get(p)}
        if diff and phase not in SWEEP_PHASES:
            expected |= diff
        tip = commit(git, tip, phase, changes)
    got = ok(touched_paths(git, base, tip, run_id=RUN))
    assert got.paths == frozenset(expected)
    assert not got.widened


def test_a_sweep_is_left_out_and_a_decision_or_hand_commit_pins() -> None:
    git, base = repo()
    tip = commit(git, base, "confidence-decay", [PathChange(p, b"decayed\n") for p in PATHS])
    tip = commit(git, tip, "person-links", [PathChange(PATHS[1], b"linked\n")])
    tip = commit(git, tip, None, [PathChange(PATHS[2], b"by hand\n")])
    got = ok(touched_paths(git, base, tip, run_id=RUN))
    assert got.paths == {PATHS[1], PATHS[2]}
    assert (got.commits, got.sweeps) == (2, 1)


def test_only_the_runs_own_sweep_is_exempt() -> None:
    git, base = repo()
    tip = commit(git, base, "confidence-decay", [PathChange(PATHS[0], b"x\n")], run="2026-01-01")
    assert ok(touched_paths(git, base, tip, run_id=RUN)).paths == {PATHS[0]}
    assert ok(touched_paths(git, base, tip)).paths == frozenset()


def test_an_empty_range_touches_nothing() -> None:
    git, base = repo()
    assert ok(touched_paths(git, base, base)).paths == frozenset()


class UnreadableCommits(InMemoryGit):
    """Commit metadata cannot be read (a damaged object, say); diffs still can."""

    def commit_info(self, sha: str) -> IOResult[CommitInfo, GitError]:
        return IOFailure(GitFailure("commit_info", f"{sha}: object unreadable"))


class Unreadable(UnreadableCommits):
    """Neither commits nor diffs can be read."""

    def changed_paths(self, old: str, new: str) -> IOResult[tuple[str, ...], GitError]:
        return IOFailure(GitFailure("changed_paths", "tree unreadable"))


def rebuilt(kind: type[InMemoryGit]) -> tuple[InMemoryGit, str, str]:
    git = kind(bare=True)
    base = ok(git.commit("main", None, [PathChange(p, b"start\n") for p in PATHS],
                         "start\n", AUTHOR, AT))
    tip = commit(git, base, "confidence-decay", [PathChange(PATHS[0], b"decayed\n")])
    tip = commit(git, tip, "dedup-merge", [PathChange(PATHS[1], b"merged\n")])
    return git, base, tip


def test_a_failed_read_widens_to_the_whole_range_never_narrows() -> None:
    git, base, tip = rebuilt(UnreadableCommits)
    got = ok(touched_paths(git, base, tip, run_id=RUN))
    assert got.widened and got.reason and "unreadable" in got.reason
    # The sweep's file is in too: wider than the truth, never smaller.
    assert got.paths == {PATHS[0], PATHS[1]}


def test_a_set_neither_read_establishes_is_a_failure() -> None:
    git, base, tip = rebuilt(Unreadable)
    assert isinstance(err(touched_paths(git, base, tip, run_id=RUN)), GitFailure)
