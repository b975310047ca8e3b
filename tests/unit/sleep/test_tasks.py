"""Detected tasks on a real store: the path is the key, evidence is checked, ten a night,
and a finding no longer produced closes its task on a night that judged everything."""

from __future__ import annotations

from datetime import datetime, timedelta

from returns.pipeline import is_successful
from tests.unit.sleep.sleep_support import AUTHOR, RUN_AT, World, ok, world

from memhtml.contracts.services import PathChange, Signature
from memhtml.format import check_memory
from memhtml.head import HeadVersion
from memhtml.sleep.findings import (
    Finding,
    Measurement,
    Quote,
    TaskCounts,
    digest_of_path,
    finding_digest,
    task_path,
)
from memhtml.sleep.phase import TaskBudget
from memhtml.sleep.tasks import (
    NO_LONGER_DETECTED,
    SWEPT_TAG,
    close_stale,
    commit_body,
    dismissed_digests,
    mint_tasks,
    open_tasks,
)
from memhtml.store import WriteInput, task_add, task_status, write
from memhtml.store.plan import Plan, task_status_step

NIGHT1 = "2026-11-29T03:15:07Z"
NIGHT2 = "2026-11-30T03:15:07Z"
NOTE0, NOTE1 = "areas/notes/note-0.html", "areas/notes/note-1.html"


def vetoed(pair: str = "/areas/a.html|/areas/b.html", predicate: str = "negation"
           ) -> Finding:
    return Finding("dedup-merge", f"{pair}|{predicate}", "Review a vetoed merge",
                   f"Two memories look alike but the {predicate} predicate refused to fold "
                   "them.", Measurement("predicate", predicate))


def head(w: World) -> HeadVersion:
    return ok(w.store.head())


def minted(w: World, findings: list[Finding], now: str = NIGHT1,
           budget: TaskBudget | None = None, dismissed: frozenset[str] = frozenset()
           ) -> tuple[Plan, TaskCounts]:
    done = mint_tasks(Plan.start(head(w), now), findings, budget or TaskBudget(),
                      dismissed=dismissed)
    assert is_successful(done), done
    return done.unwrap()


def land(w: World, plan: Plan) -> None:
    changes, _ = plan.changes()
    w.raw(list(changes))


def test_the_digest_is_pinned_and_names_the_file() -> None:
    finding = vetoed()
    assert finding_digest("dedup-merge", finding.finding) == "d8877d856064"
    assert task_path(finding) == "areas/tasks/det-d8877d856064-review-a-vetoed-merge.html"
    assert digest_of_path(task_path(finding)) == "d8877d856064"
    assert digest_of_path("areas/tasks/review.html") is None
    assert digest_of_path("archive/2026/areas/tasks/det-d8877d856064-x.html") is None


def test_a_measured_finding_becomes_a_task_the_format_accepts() -> None:
    w = world()
    plan, counts = minted(w, [vetoed()])
    assert counts == TaskCounts(minted=1)
    record = plan.view.get(task_path(vetoed()))
    assert record is not None
    assert (record.memory_type, record.task_status, record.author) == ("task", "todo",
                                                                        "agent:sleep")
    assert record.tags == ("detected", "dedup-merge")
    assert record.claim.startswith("Two memories look alike")
    assert "Evidence, measured (predicate): negation" in record.body_text
    assert "Finding (dedup-merge): /areas/a.html|/areas/b.html|negation" in record.body_text
    assert check_memory(record.html).violations == ()


def test_a_second_night_finding_the_same_writes_nothing_and_opens_no_twin() -> None:
    # An unchanged finding makes no commit: the task stands as it was written.
    w = world()
    land(w, minted(w, [vetoed()])[0])
    plan, counts = minted(w, [vetoed()], NIGHT2)
    assert counts == TaskCounts(unchanged=1)
    assert plan.changes()[0] == ()
    assert counts.decisions == ()


def test_a_finding_whose_words_changed_rewrites_its_task_keeping_what_a_person_set() -> None:
    w = world()
    first = Finding("edge-typing", "/a.html|/b.html", "Do a and b contradict?",
                    "Seen once; linked at two.", Measurement("count", 1))
    land(w, minted(w, [first])[0])
    # A person started on it.
    record = head(w).get(task_path(first))
    assert record is not None
    w.raw([PathChange(record.path, record.html.replace(
        'name="memhtml-task-status" content="todo"',
        'name="memhtml-task-status" content="doing"').encode())])
    again = Finding(first.detector, first.finding, first.title, "Seen once; linked at two.",
                    Measurement("count", 2))
    plan, counts = minted(w, [again], NIGHT2)
    assert counts == TaskCounts(refreshed=1)
    (change,) = plan.changes()[0]
    now = plan.view.get(record.path)
    assert now is not None and change.path == record.path
    assert "Evidence, measured (count): 2" in now.body_text
    assert (now.created_at, now.task_status, now.updated_at) == (
        record.created_at, "doing", NIGHT2)
    assert check_memory(now.html).violations == ()
    (decision,) = counts.decisions
    assert (decision.action, decision.rule, dict(decision.figures)) == (
        "rewritten", "contradiction-waiting", {"count": 2})
    land(w, plan)
    # The third night, finding it as it now reads, writes nothing.
    plan3, counts3 = minted(w, [again], "2026-12-01T03:15:07Z")
    assert counts3 == TaskCounts(unchanged=1) and plan3.changes()[0] == ()


def test_a_task_whose_article_a_person_edited_keeps_the_edit_whatever_the_finding_says(
        ) -> None:
    w = world()
    first = Finding("edge-typing", "/a.html|/b.html", "Do a and b contradict?",
                    "Seen once; linked at two.", Measurement("count", 1))
    land(w, minted(w, [first])[0])
    record = head(w).get(task_path(first))
    assert record is not None
    noted = record.html.replace("</article>", "<p>Asked the owner; waiting.</p>\n</article>")
    w.raw([PathChange(record.path, noted.encode())])
    # Found again as it stood: the note is no change of the finding's.
    plan, counts = minted(w, [first], NIGHT2)
    assert counts == TaskCounts(unchanged=1) and plan.changes()[0] == ()
    # Found with new words: the person's article stands all the same.
    again = Finding(first.detector, first.finding, first.title, first.statement,
                    Measurement("count", 2))
    plan, counts = minted(w, [again], NIGHT2)
    assert counts == TaskCounts(edited=1) and plan.changes()[0] == ()


def test_the_same_finding_twice_in_one_call_is_one_task() -> None:
    w = world()
    _, counts = minted(w, [vetoed(), vetoed()])
    assert counts == TaskCounts(minted=1)


def test_two_findings_with_one_body_stay_two_tasks() -> None:
    w = world()
    plan, counts = minted(w, [vetoed("/a.html|/b.html"), vetoed("/c.html|/d.html")])
    assert counts.minted == 2
    assert len([p for p in plan.view.paths() if digest_of_path(p)]) == 2


def test_a_quote_is_looked_up_whitespace_collapsed_in_the_file_it_names() -> None:
    w = world()
    found = Finding("edge-typing", "/areas/notes/note-0.html|/areas/notes/note-1.html",
                    "Review a contradiction", "These two may disagree.",
                    Quote("/" + NOTE1, "Fact  number 1\n about the\tdeploy window."))
    plan, counts = minted(w, [found])
    assert counts == TaskCounts(minted=1)
    record = plan.view.get(task_path(found))
    assert record is not None
    assert ("Evidence, quoted from /areas/notes/note-1.html: "
            "\u201cFact number 1 about the deploy window.\u201d") in record.body_text


def test_an_absent_quote_is_refused_and_costs_no_budget() -> None:
    w = world()
    budget = TaskBudget()
    made_up = Finding("edge-typing", "x", "Review", "Maybe.",
                      Quote(NOTE0, "The deploy window never closes."))
    nowhere = Finding("edge-typing", "y", "Review", "Maybe.",
                      Quote("areas/notes/missing.html", "Fact number 0"))
    plan, counts = minted(w, [made_up, nowhere], budget=budget)
    assert counts == TaskCounts(refused_quote=2)
    assert plan.changes() == ((), {})
    assert budget.used == 0


def test_ten_a_night_across_detectors_and_the_rest_counted() -> None:
    w = world()
    budget = TaskBudget()
    first = [vetoed(f"/a{n}.html|/b{n}.html") for n in range(6)]
    second = [Finding("entity-resolution", f"service:a{n}|service:b{n}", f"Review alias {n}",
                      "These names may be one subject.", Measurement("ratio", 0.8))
              for n in range(6)]
    plan, counts = minted(w, first, budget=budget)
    assert counts == TaskCounts(minted=6)
    done = mint_tasks(plan, second, budget, dismissed=frozenset()).unwrap()
    assert done[1] == TaskCounts(minted=4, overflow=2)
    assert (budget.used, budget.refused) == (10, 2)
    # Which four: the order of (detector, finding), not the caller's.
    kept = sorted(r.title for r in done[0].view.records() if "entity-resolution" in r.tags)
    assert kept == [f"Review alias {n}" for n in range(4)]


def test_an_open_task_stands_even_when_the_budget_is_spent() -> None:
    w = world()
    land(w, minted(w, [vetoed()])[0])
    spent = TaskBudget(limit=0)
    _, counts = minted(w, [vetoed()], NIGHT2, spent)
    assert counts == TaskCounts(unchanged=1)


def test_a_path_held_by_something_else_is_blocked() -> None:
    w = world()
    finding = vetoed()
    ok(write(w.store, WriteInput(title="Not a task", claim="Something else.",
                                 path=task_path(finding))))
    _, counts = minted(w, [finding])
    assert (counts.blocked, counts.minted, counts.refreshed) == (1, 0, 0)
    assert "not the task" in counts.warnings[0]


def test_a_finding_no_longer_produced_closes_its_task() -> None:
    w = world()
    keep, gone = vetoed("/a.html|/b.html"), vetoed("/c.html|/d.html")
    other = Finding("entity-resolution", "service:x|service:y", "Review alias", "Maybe one.",
                    Measurement("ratio", 0.8))
    land(w, minted(w, [keep, gone, other])[0])
    ok(task_add(w.store, "A person's own task", "Tagged like one.",
                tags=("detected", "dedup-merge")))
    plan = Plan.start(head(w), NIGHT2)
    assert [r.path for r in open_tasks(plan.view, "dedup-merge")] == sorted(
        [task_path(keep), task_path(gone)])
    after, counts = close_stale(plan, "dedup-merge", frozenset({keep.finding}), True).unwrap()
    assert counts == TaskCounts(closed=1)
    assert after.view.get(task_path(gone)) is None
    closed = after.view.get(f"archive/2026/{task_path(gone)}")
    assert closed is not None and closed.task_status == "done"
    assert after.view.get(task_path(keep)) is not None
    assert after.view.get(task_path(other)) is not None
    assert commit_body(counts) == f"1 detected task(s) closed: {NO_LONGER_DETECTED}"


def test_a_night_that_did_not_judge_everything_closes_nothing() -> None:
    w = world()
    land(w, minted(w, [vetoed()])[0])
    plan = Plan.start(head(w), NIGHT2)
    after, counts = close_stale(plan, "dedup-merge", frozenset(), False).unwrap()
    assert counts == TaskCounts()
    assert after.changes() == ((), {})


def test_a_close_whose_archive_path_is_taken_is_made_where_the_task_stands() -> None:
    w = world()
    finding = vetoed()
    land(w, minted(w, [finding])[0])
    w.raw([PathChange(f"archive/2026/{task_path(finding)}",
                      b"<!doctype html><p>not a memory</p>\n")])
    after, counts = close_stale(Plan.start(head(w), NIGHT2), "dedup-merge", frozenset(),
                                True).unwrap()
    # Closed where it stands: marked done and tagged as the sweep's close.
    assert (counts.closed, counts.blocked) == (1, 0)
    held = after.view.get(task_path(finding))
    assert held is not None and held.task_status == "done" and SWEPT_TAG in held.tags


def test_counts_add_up_across_phases_and_read_as_phase_counts() -> None:
    total = TaskCounts(minted=2, overflow=1, warnings=("a",)) + TaskCounts(
        closed=1, blocked=1, warnings=("b",))
    assert total == TaskCounts(minted=2, overflow=1, closed=1, blocked=1, warnings=("a", "b"))
    assert total.as_counts() == {"tasks_minted": 2, "tasks_refreshed": 0,
                                 "tasks_refused_quote": 0, "tasks_overflow": 1,
                                 "tasks_closed": 1, "tasks_blocked": 1,
                                 "tasks_dismissed": 0, "tasks_unchanged": 0,
                                 "tasks_edited": 0}
    assert commit_body(total) == ("2 detected task(s) opened, 0 refreshed; "
                                  f"1 detected task(s) closed: {NO_LONGER_DETECTED}")
    assert commit_body(TaskCounts()) == ""


def test_an_open_finding_takes_its_place_in_the_budget_before_new_ones() -> None:
    # Over the cap, the first night's ten stay the ten: a second night holds their
    # places and opens nothing new, rather than ten more every night.
    w = world()
    findings = [vetoed(f"/a{n:02d}.html|/b{n:02d}.html") for n in range(12)]
    plan, counts = minted(w, findings)
    assert (counts.minted, counts.overflow) == (10, 2)
    land(w, plan)
    budget = TaskBudget()
    _, counts = minted(w, list(reversed(findings)), NIGHT2, budget)
    assert (counts.unchanged, counts.minted, counts.overflow) == (10, 0, 2)
    assert budget.used == 10


# -- a person's close, read from the history ----------------------------------------------

LATER = RUN_AT + timedelta(days=1)
MALLORY = Signature("Mallory", "mallory@example.org")


def closed_by_door(w: World, finding: Finding) -> str:
    """The finding's task minted and landed, then closed by the task door."""
    land(w, minted(w, [finding])[0])
    done = ok(task_status(w.store, task_path(finding), "done"))
    assert f"archive/2026/{task_path(finding)}" in done.paths
    return done.commit


def dismissed_now(w: World, at: datetime = LATER, by: Signature | None = AUTHOR
                  ) -> frozenset[str]:
    return ok(dismissed_digests(w.git, w.main(), head(w), at, by))


def test_a_close_through_the_task_door_is_a_dismissal() -> None:
    w = world()
    finding = vetoed()
    closed_by_door(w, finding)
    digest = finding_digest(finding.detector, finding.finding)
    assert dismissed_now(w) == {digest}
    _, counts = minted(w, [finding], NIGHT2, dismissed=dismissed_now(w))
    assert counts == TaskCounts(dismissed=1)
    # Dated after the run, or committed by someone other than memhtml: no dismissal.
    assert dismissed_now(w, at=RUN_AT - timedelta(days=1)) == frozenset()
    assert dismissed_now(w, by=MALLORY) == frozenset()


def test_an_archived_copy_committed_by_hand_is_no_dismissal() -> None:
    w = world()
    finding = vetoed()
    land(w, minted(w, [finding])[0])
    data = w.blob(w.main(), task_path(finding))
    assert data is not None
    done = data.replace(b'content="todo"', b'content="done"')
    digest = finding_digest(finding.detector, finding.finding)
    copy = f"archive/2026/areas/tasks/det-{digest}-x.html"
    w.raw([PathChange(task_path(finding), None), PathChange(copy, done)], "closed by hand")
    assert dismissed_now(w) == frozenset()
    plan, counts = minted(w, [finding], NIGHT2, dismissed=dismissed_now(w))
    assert (counts.minted, counts.dismissed) == (1, 0)
    assert copy in counts.warnings[0] and "no door closed" in counts.warnings[0]
    assert plan.view.get(task_path(finding)) is not None


def test_forged_door_trailers_need_memhtml_and_the_move_itself() -> None:
    w = world()
    finding = vetoed()
    land(w, minted(w, [finding])[0])
    task = task_path(finding)
    data = w.blob(w.main(), task)
    copy = f"archive/2026/{task}"
    trailers = (f"memhtml task-status: {task}\n\nMemhtml-Op: task-status\n"
                f"Memhtml-Path: {copy}\nMemhtml-Path: {task}\n")
    # The trailers, by another committer than memhtml's.
    ok(w.git.commit("main", w.main(), [PathChange(task, None), PathChange(copy, data)],
                    trailers, MALLORY, w.clock.now()))
    assert dismissed_now(w) == frozenset()
    # The trailers and memhtml's committer, but the copy was never the task's move:
    # the task stays where it was.
    w2 = world()
    land(w2, minted(w2, [finding])[0])
    ok(w2.git.commit("main", w2.main(), [PathChange(copy, data)], trailers, AUTHOR,
                     w2.clock.now()))
    assert dismissed_now(w2) == frozenset()
    # The very move the door makes, on a run's commit: the machine's, not a person's.
    w3 = world()
    land(w3, minted(w3, [finding])[0])
    moved = task_status_step(Plan.start(head(w3), NIGHT2), task, "done").unwrap().plan
    changes, _ = moved.changes()
    ok(w3.git.commit("main", w3.main(), list(changes), trailers + "Memhtml-Run: 2026-11-30\n",
                     AUTHOR, w3.clock.now()))
    assert dismissed_now(w3) == frozenset()
    ok(w3.git.commit("main", w3.main(), [PathChange(copy, data)], "a later edit", AUTHOR,
                     w3.clock.now()))
    assert dismissed_now(w3) == frozenset()
