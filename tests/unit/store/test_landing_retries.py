"""The landing retry loop, on ``InMemoryGit`` and a ``ManualClock``.

Racing processes used to be its only test. Here another writer lands between a door's
derive and its compare-and-swap on cue, as often as a test asks, and the back-off
runs through the clock with no real time passing.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import pytest
from returns.io import IOFailure, IOResult
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io
from tests.integration.store.store_support import AUTHOR, err, make_memory_store, ok

from memhtml.adapters.clock import ManualClock
from memhtml.adapters.memory_git import InMemoryGit
from memhtml.contracts.errors import GitError, GitFailure, NotFound, RefMoved
from memhtml.contracts.services import PathChange, Signature
from memhtml.store import StoreDeps, WriteInput, archive, correct, write
from memhtml.store.errors import StoreError
from memhtml.store.landing import (
    BACKOFF_BASE_SECONDS,
    BACKOFF_CAP_SECONDS,
    MAX_ATTEMPTS,
    Draft,
    land,
)

START = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
MINE = PathChange("notes/mine.txt", b"mine")


class Interfering(InMemoryGit):
    """A repository where, just before each commit of the writer under test, the next
    queued rival lands first: another process winning the race to the branch."""

    def __init__(self) -> None:
        super().__init__(bare=True)
        self.rivals: list[Callable[[], object]] = []
        self.parents: list[str | None] = []
        """The expected parent of each of the writer's commit attempts, in order."""
        self._rival_landing = False

    def commit(self, ref: str, expected_parent: str | None, changes: Sequence[PathChange],
               message: str, author: Signature, at: datetime) -> IOResult[str, GitError]:
        if not self._rival_landing:
            self.parents.append(expected_parent)
            if self.rivals:
                self._rival_landing = True
                try:
                    self.rivals.pop(0)()
                finally:
                    self._rival_landing = False
        return super().commit(ref, expected_parent, changes, message, author, at)


class Failing(InMemoryGit):
    """A repository whose every commit fails with ``error``."""

    def __init__(self, error: GitError) -> None:
        super().__init__(bare=True)
        self.error = error
        self.attempts = 0

    def commit(self, ref: str, expected_parent: str | None, changes: Sequence[PathChange],
               message: str, author: Signature, at: datetime) -> IOResult[str, GitError]:
        self.attempts += 1
        return IOFailure(self.error)


class Ceiling(random.Random):
    """Jitter that always picks the top of its range, so the back-off is exact."""

    def uniform(self, a: float, b: float) -> float:
        return b


@pytest.fixture(autouse=True)
def no_real_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(seconds: float) -> None:
        raise AssertionError(f"real time.sleep({seconds}) called: waiting must use the clock")

    monkeypatch.setattr(time, "sleep", refuse)


def ceiling(attempt: int) -> float:
    """The most a back-off after losing ``attempt`` may wait (the first loss is 0)."""
    return min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2.0 ** attempt)


def rival_commit(git: InMemoryGit, n: int) -> Callable[[], object]:
    def land_rival() -> str:
        tip = ok(git.resolve("main"))
        return ok(git.commit("main", tip, [PathChange(f"rival/{n}.txt", b"%d" % n)],
                             f"rival {n}", AUTHOR, START))
    return land_rival


def deps_on(git: InMemoryGit, clock: ManualClock) -> StoreDeps:
    return StoreDeps(git=git, clock=clock, author=AUTHOR)


def mine(deps: StoreDeps, seen: list[str | None]) -> Callable[[], IOResult[Draft, StoreError]]:
    """A derivation that records which tip each attempt derived on."""
    def derive() -> IOResult[Draft, StoreError]:
        def draft(tip: str | None) -> Draft:
            seen.append(tip)
            return Draft(tip, (MINE,), ("write",), "mine", "")
        return deps.tip().map(draft)
    return derive


# -- through a door ------------------------------------------------------------------


def test_the_door_re_derives_on_the_new_tip_and_keeps_the_other_writers_work() -> None:
    git, clock = Interfering(), ManualClock(START)
    store, _ = make_memory_store(git, clock=clock)
    rival_store, _ = make_memory_store(git, clock=clock, init=False)
    rivals: list[str] = []

    def rival(n: int) -> Callable[[], object]:
        def land_rival() -> None:
            landed = ok(write(rival_store, WriteInput(title="Deploy", claim=f"Rival {n}.")))
            rivals.append(landed.commit)
        return land_rival

    before = ok(store.tip())
    git.rivals = [rival(n) for n in range(3)]
    git.parents.clear()
    landed = ok(write(store, WriteInput(title="Deploy", claim="Mine, after three losses.")))

    # Each attempt was derived on, and named as its parent, the tip the last rival left.
    assert git.parents == [before, *rivals]
    assert ok(store.deps.git.commit_info(landed.commit)).parents == (rivals[-1],)
    assert ok(store.deps.git.commits_between(before, "main")) == (*rivals, landed.commit)
    # Re-deriving chose a path still free at the new tip, so every rival's memory stays.
    claims = {r.claim for r in ok(store.head()).records() if r.title == "Deploy"}
    assert claims == {"Rival 0.", "Rival 1.", "Rival 2.", "Mine, after three losses."}
    assert len(clock.sleeps) == 3
    assert all(0 <= pause <= ceiling(n) for n, pause in enumerate(clock.sleeps))
    assert clock.now() - START == sum((timedelta(seconds=s) for s in clock.sleeps), timedelta())


def test_a_rival_that_removes_the_door_s_target_ends_the_retries() -> None:
    git, clock = Interfering(), ManualClock(START)
    store, _ = make_memory_store(git, clock=clock)
    rival_store, _ = make_memory_store(git, clock=clock, init=False)
    path = ok(write(store, WriteInput(title="Cache", claim="Old."))).primary
    assert path is not None
    archived: list[str] = []
    git.rivals = [lambda: archived.append(ok(archive(rival_store, path)).commit)]

    failure = err(correct(store, path, WriteInput(title="Cache", claim="New.")))
    assert not isinstance(failure, RefMoved)
    assert ok(store.tip()) == archived[0]
    assert len(clock.sleeps) == 1


# -- the loop itself -----------------------------------------------------------------


def test_back_off_grows_from_the_base_and_is_capped() -> None:
    git, clock = Interfering(), ManualClock(START)
    deps = deps_on(git, clock)
    root = ok(git.commit("main", None, [PathChange("root.txt", b"root")], "root", AUTHOR, START))
    losses = 8
    git.rivals = [rival_commit(git, n) for n in range(losses)]
    git.parents.clear()
    seen: list[str | None] = []

    landed = ok(land(deps, mine(deps, seen), rng=Ceiling()))

    sleeps = clock.sleeps
    assert sleeps[0] == BACKOFF_BASE_SECONDS
    assert all(later == min(BACKOFF_CAP_SECONDS, 2 * earlier)
               for earlier, later in itertools.pairwise(sleeps))
    assert max(sleeps) == BACKOFF_CAP_SECONDS
    assert len(sleeps) == losses
    rivals = ok(git.commits_between(root, "main"))[:-1]
    assert seen == git.parents == [root, *rivals]
    assert ok(git.commit_info(landed.commit)).parents == (rivals[-1],)
    assert landed.paths == (MINE.path,)


@pytest.mark.parametrize("losses", [MAX_ATTEMPTS - 1, MAX_ATTEMPTS])
def test_after_max_attempts_losses_the_result_is_ref_moved_and_nothing_landed(
    losses: int,
) -> None:
    git, clock = Interfering(), ManualClock(START)
    deps = deps_on(git, clock)
    root = ok(git.commit("main", None, [PathChange("root.txt", b"root")], "root", AUTHOR, START))
    git.rivals = [rival_commit(git, n) for n in range(losses)]
    git.parents.clear()
    seen: list[str | None] = []

    result = land(deps, mine(deps, seen))
    history = ok(git.commits_between(root, "main"))
    tree = {entry.path for entry in ok(git.list_tree("main"))}
    assert all(0 <= pause <= BACKOFF_CAP_SECONDS for pause in clock.sleeps)
    if losses < MAX_ATTEMPTS:
        assert ok(result).commit == history[-1]
        assert MINE.path in tree
        assert len(clock.sleeps) == losses
        return
    failure = unsafe_perform_io(result.failure())
    assert not is_successful(result)
    assert failure == RefMoved("refs/heads/main", seen[-1], history[-1])
    assert len(history) == MAX_ATTEMPTS  # the rivals' commits, and nothing of ours
    assert MINE.path not in tree
    assert len(git.parents) == len(seen) == MAX_ATTEMPTS
    assert len(clock.sleeps) == MAX_ATTEMPTS - 1


@pytest.mark.parametrize(
    "error", [GitFailure("commit", "disk full"), NotFound("commit 'gone'")], ids=repr)
def test_a_failure_other_than_ref_moved_is_returned_at_once(error: GitError) -> None:
    git, clock = Failing(error), ManualClock(START)
    deps = deps_on(git, clock)
    seen: list[str | None] = []
    assert err(land(deps, mine(deps, seen))) == error
    assert git.attempts == 1
    assert seen == [None]
    assert clock.sleeps == ()
    assert clock.now() == START
