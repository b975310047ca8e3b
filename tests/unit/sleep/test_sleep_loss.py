"""What merge refuses a run for losing, on the doubles: a move is kept and followed, a
title or claim no phase decided is refused with its commit, forgetting past the
share is refused by name, and a fold into a keeper that does not say what it absorbed
fails the gate. The examples beside ``tests/property/test_sleep_gate_laws.py``."""

from __future__ import annotations

from tests.unit.sleep.sleep_support import RUN_AT, RUN_DAY, World, blank_world, ok

from memhtml.compose.sleep import head_gate
from memhtml.contracts.record import Link
from memhtml.contracts.services import PathChange
from memhtml.sleep.contract import TRAILER_BASE, TRAILER_PHASE, TRAILER_RUN
from memhtml.sleep.merge import merge_run
from memhtml.sleep.runner import run_sleep
from memhtml.store import WriteInput, write
from memhtml.store.plan import Plan, archive_step, task_status_step

BRANCH = f"sleep/{RUN_DAY}"
TASK = "areas/tasks/renew.html"
FACTS = [
    ("Deploy window", "Deploys stop at sixteen hundred on Fridays."),
    ("Cache eviction", "The edge cache drops entries unused for a week."),
    ("Queue backpressure", "Workers pause pulling once memory passes eighty percent."),
    ("Certificate renewal", "Certificates renew thirty days before they lapse."),
    ("Escalation path", "Page the secondary after fifteen silent minutes."),
    ("Nightly backups", "Backups run at two and are kept for ninety days."),
    ("Schema migrations", "Migrations ship behind a flag and run online."),
    ("Audit trail", "Every admin action lands in the append-only audit log."),
    ("Feature switches", "Switches live in one table and expire after a quarter."),
    ("Team lunch", "The café on the third floor opens at eight."),
]


def path_of(n: int) -> str:
    return f"areas/inbox/fact-{n}.html"


def facts_world(count: int = len(FACTS), task: str | None = None) -> World:
    """A store of ``count`` memories that share no word of their titles or claims (and
    an open task at ``task``), and a run cut over it (its tip is its report)."""
    w = blank_world()
    for n, (title, claim) in enumerate(FACTS[:count]):
        ok(write(w.store, WriteInput(title=title, claim=claim, path=path_of(n))))
    if task is not None:
        ok(write(w.store, WriteInput(title="Renew the domain", claim="Renew it by May.",
                                     memory_type="task", task_status="todo", path=task)))
    w.clock.advance((RUN_AT - w.clock.now()).total_seconds())
    ok(run_sleep(w.deps()))
    return w


def phase_commit(w: World, changes: list[PathChange], phase: str = "compress") -> str:
    """A commit on the run branch carrying the run's own trailers, as a phase's is."""
    tip = ok(w.git.resolve(BRANCH))
    message = (f"memhtml sleep: {phase} ({RUN_DAY})\n\n{TRAILER_RUN}: {RUN_DAY}\n"
               f"{TRAILER_PHASE}: {phase}\n{TRAILER_BASE}: {w.main()}\n")
    return ok(w.git.commit(BRANCH, tip, changes, message, w.store.deps.author,
                           w.clock.now()))


def hand_commit(w: World, changes: list[PathChange]) -> str:
    tip = ok(w.git.resolve(BRANCH))
    return ok(w.git.commit(BRANCH, tip, changes, "a hand edit on the run",
                           w.store.deps.author, w.clock.now()))


def retitled(w: World, n: int, title: str) -> PathChange:
    data = w.blob(BRANCH, path_of(n))
    assert data is not None
    return PathChange(path_of(n), data.replace(FACTS[n][0].encode(), title.encode()))


def archived_on_branch(w: World, *paths: str, keeper: str | None = None) -> list[PathChange]:
    plan = Plan.start(ok(w.store.version_at(BRANCH)), "2026-11-29T03:15:07Z")
    for path in paths:
        plan = archive_step(plan, path, None if keeper is None else "/" + keeper).unwrap().plan
    return list(plan.changes()[0])


def test_a_memory_the_run_moved_is_kept_and_a_writers_link_follows_it() -> None:
    w = facts_world()
    old, new = path_of(2), "areas/ops/fact-2.html"
    data = w.blob(BRANCH, old)
    phase_commit(w, [PathChange(old, None), PathChange(new, data)], "placement-triage")
    pointer = ok(write(w.store, WriteInput(
        title="Pointer", claim="See the queue note.", path="areas/notes/pointer.html",
        links=(Link("relates_to", "/" + old),)))).primary
    outcome = ok(merge_run(w.deps(gate=head_gate), RUN_DAY))
    assert outcome.merged and outcome.moved == ((old, new),), outcome
    assert outcome.followed == (pointer,)
    main = ok(w.store.version_at(w.main()))
    assert main.get(old) is None and main.get(new) is not None
    held = main.get(pointer or "")
    assert held is not None and [link.href for link in held.links] == ["/" + new]


def test_a_title_no_phase_decided_is_refused_with_its_commit() -> None:
    w = facts_world()
    sha = hand_commit(w, [retitled(w, 1, "Cache eviction, revised")])
    main = w.main()
    outcome = ok(merge_run(w.deps(gate=head_gate), RUN_DAY))
    assert (outcome.merged, outcome.refusal) == (False, "unrecorded"), outcome
    assert len(outcome.violations) == 1 and path_of(1) in outcome.violations[0]
    assert sha[:10] in outcome.violations[0] and "not a commit of a phase" in outcome.reason
    assert "memhtml correct" in outcome.reason and w.main() == main


def test_the_same_title_decided_by_a_phase_lands() -> None:
    w = facts_world()
    phase_commit(w, [retitled(w, 1, "Cache eviction, revised")])
    outcome = ok(merge_run(w.deps(gate=head_gate), RUN_DAY))
    assert outcome.merged, outcome


def test_a_sweep_decides_no_title() -> None:
    w = facts_world()
    phase_commit(w, [retitled(w, 1, "Cache eviction, revised")], "confidence-decay")
    outcome = ok(merge_run(w.deps(gate=head_gate), RUN_DAY))
    assert (outcome.merged, outcome.refusal) == (False, "unrecorded"), outcome
    assert "sweep" in outcome.violations[0]


def test_forgetting_past_the_share_is_refused_by_name() -> None:
    w = facts_world()
    gone = (path_of(3), path_of(7))
    phase_commit(w, archived_on_branch(w, *gone), "retention-triage")
    outcome = ok(merge_run(w.deps(gate=head_gate), RUN_DAY))
    assert (outcome.merged, outcome.refusal) == (False, "over-archived"), outcome
    assert outcome.violations == gone
    assert "2 of the 10 live memories (20.0%)" in outcome.reason
    assert "sleep_archive_share" in outcome.reason and f"sleep abort {RUN_DAY}" in outcome.reason
    assert ok(merge_run(w.deps(gate=head_gate, archive_share=0.2), RUN_DAY)).merged


def test_a_fold_counts_as_no_forgetting_and_its_keeper_must_say_what_it_absorbed() -> None:
    w = facts_world()
    # Folded into a memory about something else: nothing finds what the base found.
    phase_commit(w, archived_on_branch(w, path_of(5), keeper=path_of(9)), "dedup-merge")
    outcome = ok(merge_run(w.deps(gate=head_gate), RUN_DAY))
    assert (outcome.merged, outcome.refusal) == (False, "gate-failed"), outcome
    assert len(outcome.violations) == 1 and outcome.violations[0].startswith(path_of(5))
    assert "found no more" in outcome.reason and f"sleep abort {RUN_DAY}" in outcome.reason


def test_a_fold_into_a_keeper_that_carries_it_lands() -> None:
    w = facts_world()
    keeper = w.blob(BRANCH, path_of(9))
    assert keeper is not None
    carried = keeper.replace(b"</article>", f"<p>{FACTS[5][1]}</p></article>".encode())
    phase_commit(w, [*archived_on_branch(w, path_of(5), keeper=path_of(9)),
                     PathChange(path_of(9), carried)], "dedup-merge")
    outcome = ok(merge_run(w.deps(gate=head_gate), RUN_DAY))
    assert outcome.merged, outcome
    assert outcome.gate is not None and outcome.gate.detail["followed"] == 1


def test_a_finished_task_is_not_forgotten() -> None:
    w = facts_world(2, task=TASK)
    plan = Plan.start(ok(w.store.version_at(BRANCH)), "2026-11-29T03:15:07Z")
    closed = list(task_status_step(plan, TASK, "done").unwrap().plan.changes()[0])
    phase_commit(w, closed, "task-detection")
    # One of three live memories archived: past any share, and not forgetting.
    outcome = ok(merge_run(w.deps(gate=head_gate), RUN_DAY))
    assert outcome.merged, outcome
    assert ok(w.store.version_at(w.main())).get(TASK) is None
