"""The night's detected-task places, signal before noise: commitments, contradictions,
refused merges, entity reviews; a review detector, which runs first, leaves half the
places free while one ranking above it is still to run, and open reviews never keep a
commitment out."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memhtml.domain.thresholds import DETECTED_TASKS_PER_NIGHT
from memhtml.sleep.contract import SLEEP_PHASES
from memhtml.sleep.phase import HELD_BACK, TASK_PRIORITY, TaskBudget, task_rank

DETECTORS = tuple(name for names in TASK_PRIORITY for name in names)
SIGNAL = ("edge-typing", "trace-consolidation", "task-detection")
REVIEWS = ("dedup-merge", "entity-resolution")


def takes(budget: TaskBudget, detector: str, n: int) -> int:
    """How many of ``n`` new findings of ``detector`` get a place."""
    return sum(budget.take(detector) for _ in range(n))


def test_the_ranks_are_commitments_contradictions_merges_then_entity_reviews() -> None:
    assert [task_rank(d) for d in ("trace-consolidation", "task-detection", "edge-typing",
                                   "dedup-merge", "entity-resolution", "elsewhere")] == [
        0, 0, 1, 2, 3, 4]


def test_with_nothing_ranking_above_still_to_run_reviews_take_every_place() -> None:
    budget = TaskBudget(coming=REVIEWS)
    assert takes(budget, "dedup-merge", 12) == DETECTED_TASKS_PER_NIGHT
    assert takes(budget, "entity-resolution", 3) == 0
    assert budget.refused == 5


def test_reviews_leave_half_the_night_while_a_commitment_detector_is_to_run() -> None:
    budget = TaskBudget(coming=(*REVIEWS, "trace-consolidation"))
    assert takes(budget, "dedup-merge", 12) == DETECTED_TASKS_PER_NIGHT - HELD_BACK
    assert takes(budget, "entity-resolution", 3) == 0
    assert takes(budget, "trace-consolidation", 8) == HELD_BACK
    assert budget.minted == DETECTED_TASKS_PER_NIGHT


def test_contradictions_leave_room_for_commitments_found_after_them() -> None:
    budget = TaskBudget(coming=("edge-typing", "task-detection"))
    assert takes(budget, "edge-typing", 9) == DETECTED_TASKS_PER_NIGHT - HELD_BACK
    assert takes(budget, "task-detection", 9) == HELD_BACK


def test_open_reviews_never_keep_a_commitment_out_but_hold_their_own_kind() -> None:
    budget = TaskBudget(coming=(*REVIEWS, "task-detection"))
    for _ in range(DETECTED_TASKS_PER_NIGHT):
        budget.occupy("dedup-merge")
    assert takes(budget, "dedup-merge", 1) == 0, "a detector whose ten are open opens none"
    assert takes(budget, "task-detection", 2) == 2


def test_open_commitments_hold_their_places_against_everything_below() -> None:
    budget = TaskBudget()
    for _ in range(DETECTED_TASKS_PER_NIGHT):
        budget.occupy("trace-consolidation")
    assert takes(budget, "dedup-merge", 1) == takes(budget, "edge-typing", 1) == 0


def test_a_resumed_night_keeps_the_places_its_done_phases_took_and_no_more() -> None:
    budget = TaskBudget(coming=REVIEWS)
    budget.restore("dedup-merge", 10**18, 10**18)
    assert budget.minted == DETECTED_TASKS_PER_NIGHT
    assert takes(budget, "entity-resolution", 1) == 0


@given(st.sets(st.sampled_from(DETECTORS)),
       st.lists(st.tuples(st.sampled_from(DETECTORS), st.integers(0, 15)), max_size=8),
       st.lists(st.tuples(st.sampled_from(DETECTORS), st.integers(0, 12)), max_size=4))
def test_a_night_never_opens_more_than_ten_and_reviews_leave_room_for_signal(
        coming: set[str], asks: list[tuple[str, int]], held: list[tuple[str, int]]) -> None:
    budget = TaskBudget(coming=coming)
    for detector, n in held:
        for _ in range(n):
            budget.occupy(detector)
    ordered = sorted(asks, key=lambda ask: SLEEP_PHASES.index(ask[0]))
    opened: dict[str, int] = {}
    for detector, n in ordered:
        opened[detector] = opened.get(detector, 0) + takes(budget, detector, n)
    assert budget.minted == sum(opened.values()) <= DETECTED_TASKS_PER_NIGHT
    if coming & set(SIGNAL):
        # Reviews run before every signal detector: they never take the held-back half.
        assert sum(opened.get(d, 0) for d in REVIEWS) <= DETECTED_TASKS_PER_NIGHT - HELD_BACK
