"""A run's arrivals (``sleep.arrivals``) and what confidence-decay and retention-triage
do with them, on the in-memory doubles: files committed long after they were written,
moved by the door, brought by the run itself; person files and tasks."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import UTC, datetime, timedelta

from returns.io import IOFailure, IOResult
from tests.unit.sleep.sleep_support import AUTHOR, World, err, ok

from memhtml.adapters.clock import ManualClock
from memhtml.adapters.memory_git import InMemoryGit
from memhtml.adapters.memory_state import InMemoryState
from memhtml.contracts.errors import GitError, GitFailure
from memhtml.contracts.services import Arrival, PathChange
from memhtml.contracts.vocabulary import MemoryType
from memhtml.format import NewMemoryInput, render_template
from memhtml.sleep.arrivals import ArrivalBook, arrived_at
from memhtml.sleep.contract import SleepPhase
from memhtml.sleep.phase import PhaseEnv, PhaseResult, TaskBudget
from memhtml.sleep.phases.confidence_decay import confidence_decay
from memhtml.sleep.phases.retention_triage import retention_triage
from memhtml.store import Store, StoreDeps, init_store, move

WRITTEN = datetime(2024, 3, 1, 9, 0, 0, tzinfo=UTC)
COMMITTED = datetime(2026, 9, 1, 9, 0, 0, tzinfo=UTC)
STAMP = datetime(2026, 11, 29, 3, 15, 7, tzinfo=UTC)
DAY = timedelta(days=1)


def memory(path: str, kind: MemoryType = "episodic", confidence: float = 0.9,
           importance: int = 1, entities: tuple[str, ...] = ()) -> PathChange:
    name = path.rsplit("/", 1)[1].removesuffix(".html")
    html = render_template(NewMemoryInput(
        title=name.title(), claim=f"The {name} was noted.", memory_type=kind,
        at=WRITTEN.strftime("%Y-%m-%dT%H:%M:%SZ"), confidence=confidence,
        importance=importance, entities=entities))
    return PathChange(path, html.encode("utf-8"))


EPISODE = "areas/diary/old-episode.html"
FRIEND = "resources/people/old-friend.html"
TASK = "areas/tasks/old-task.html"


class CountingGit(InMemoryGit):
    """The double, counting the arrival walks asked of it, or refusing them."""

    def __init__(self, refuse: bool = False) -> None:
        super().__init__(bare=True)
        self.walks = 0
        self.refuse = refuse

    def arrived(self, ref: str, paths: Collection[str],
                follow: Collection[tuple[str, str]] = ()
                ) -> IOResult[Mapping[str, Arrival], GitError]:
        self.walks += 1
        if self.refuse:
            return IOFailure(GitFailure("arrived", "pack unreadable"))
        return super().arrived(ref, paths, follow)


def imported(committed: datetime, git: InMemoryGit | None = None) -> World:
    """Three memories written in 2024 and committed at ``committed`` by a person's git."""
    repo = git or InMemoryGit(bare=True)
    clock = ManualClock(WRITTEN)
    store = Store(StoreDeps(git=repo, clock=clock, author=AUTHOR))
    ok(init_store(store.deps))
    w = World(repo, clock, InMemoryState(), store)
    clock.advance((committed - WRITTEN).total_seconds())
    w.raw([memory(EPISODE), memory(FRIEND, "semantic", entities=("person:old-friend",)),
           memory(TASK, "task")], "notes from the old wiki")
    return w


def env(w: World, phase: SleepPhase, book: ArrivalBook | None = None) -> PhaseEnv:
    version = ok(w.store.head())
    return PhaseEnv(phase=phase, run_id="2026-11-29", stamp=STAMP,
                    base=w.main(), base_version=version, version=version, git=w.git,
                    state=w.state, budget=TaskBudget(), dry_run=False, arrivals=book)


def decay(w: World, book: ArrivalBook | None = None) -> PhaseResult:
    return ok(confidence_decay(env(w, "confidence-decay", book)))


def retention(w: World, book: ArrivalBook | None = None) -> PhaseResult:
    return ok(retention_triage(env(w, "retention-triage", book)))


def test_a_file_committed_today_owes_nothing_and_is_graced() -> None:
    w = imported(STAMP - timedelta(hours=2))
    done = decay(w)
    assert (done.counts["decayed"], done.counts["from_arrival"]) == (0, 2)
    judged = retention(w)
    assert judged.commits == ()
    assert (judged.counts["graced"], judged.counts["protected"]) == (1, 1), judged.counts


def test_a_file_committed_months_ago_owes_the_days_since_its_commit() -> None:
    w = imported(COMMITTED)
    done = decay(w)
    days = (STAMP - COMMITTED) // DAY
    assert done.counts["steps"] == 2 * days, done.counts
    (commit,) = done.commits
    w.raw(list(commit.changes))
    judged = retention(w)
    assert judged.counts["archived"] == 1 and judged.counts["protected"] == 1
    (archived,) = judged.marks
    assert archived.get("path") == EPISODE
    assert archived.get("arrived_age_days") == round((STAMP - COMMITTED) / DAY, 4)
    assert archived.get("created_age_days") == round((STAMP - WRITTEN) / DAY, 4)
    changed = {c.path: c.data for c in judged.commits[0].changes}
    assert changed[EPISODE] is None and changed[f"archive/2026/{EPISODE}"]
    # The person's file and the task are where they were.
    assert set(changed).isdisjoint({FRIEND, TASK})


def test_a_move_by_the_door_keeps_the_arrival() -> None:
    w = imported(COMMITTED)
    w.clock.advance((STAMP - COMMITTED).total_seconds() - 3_600)
    ok(move(w.store, EPISODE, "areas/journal/"))
    moved = "areas/journal/old-episode.html"
    found = ok(ArrivalBook(w.git, w.main(), ok(w.store.head())).read())
    assert found[moved].at == COMMITTED and found[moved].came_as == EPISODE
    assert decay(w).counts["steps"] == 2 * ((STAMP - COMMITTED) // DAY)


def test_the_book_walks_once_a_run_and_a_path_the_base_lacks_arrived_now() -> None:
    git = CountingGit()
    w = imported(COMMITTED, git)
    book = ArrivalBook(git, w.main(), ok(w.store.head()))
    decay(w, book)
    retention(w, book)
    assert git.walks == 1
    found = ok(book.read())
    assert git.walks == 1
    assert arrived_at(found, "areas/new/brought-tonight.html", STAMP) == STAMP
    assert arrived_at(found, EPISODE, STAMP) == COMMITTED
    # A phase handed no book reads its own.
    decay(w)
    assert git.walks == 2


def test_when_git_cannot_say_nothing_is_decayed_or_archived() -> None:
    git = CountingGit(refuse=True)
    w = imported(COMMITTED, git)
    for run in (confidence_decay, retention_triage):
        fault = err(run(env(w, "retention-triage")))
        assert "came onto the branch" in fault.reason and "pack unreadable" in fault.reason
