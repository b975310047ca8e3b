"""Merge's refusals (each before anything moves), the fast-forward, the ledger applied
after it, and review's per-file classes."""

from __future__ import annotations

import pytest
from returns.io import IOResult, IOSuccess
from tests.unit.sleep.sleep_support import RUN_DAY, World, failing_gate, ok, world

from memhtml.adapters.memory_state import InMemoryState
from memhtml.contracts.errors import StateFailure
from memhtml.contracts.record import Link
from memhtml.contracts.services import PathChange
from memhtml.format import add_link
from memhtml.head import HeadVersion, gate_heads
from memhtml.sleep import runner
from memhtml.sleep.contract import SLEEP_PHASES
from memhtml.sleep.deps import GateVerdict
from memhtml.sleep.ledger import PendingMark
from memhtml.sleep.merge import lost_memories, merge_run
from memhtml.sleep.phase import PhaseEnv, PhaseFault, PhaseResult
from memhtml.sleep.phases import body_for
from memhtml.sleep.review import review_run
from memhtml.sleep.runner import run_sleep
from memhtml.sleep.runs import abort_run, sleep_status
from memhtml.store import archive
from memhtml.store.plan import Plan, archive_step

BRANCH = f"sleep/{RUN_DAY}"


def head_gate(base: HeadVersion, tip: HeadVersion) -> GateVerdict:
    report = gate_heads(base, tip)
    return GateVerdict(report.passed, "passed" if report.passed else "failed")


def marking(monkeypatch: pytest.MonkeyPatch) -> None:
    def trace(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        return IOSuccess(PhaseResult(marks=(
            PendingMark.of("session-consolidated", session="s-1"),
            PendingMark.of("session-consolidated", session="s-2"),
            PendingMark.of("commitment-below-floor", statement="send the report",
                           confidence=0.4, session="s-2", done=False))))

    monkeypatch.setattr(runner, "body_for",
                        lambda phase: trace if phase == "trace-consolidation" else body_for(phase))


def on_branch(w: World, changes: list[PathChange]) -> str:
    tip = ok(w.git.resolve(BRANCH))
    return ok(w.git.commit(BRANCH, tip, changes, "hand edit on the run", w.store.deps.author,
                           w.clock.now()))


def test_merge_fast_forwards_and_applies_the_marks(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    marking(monkeypatch)
    report = ok(run_sleep(w.deps()))
    outcome = ok(merge_run(w.deps(), RUN_DAY))
    assert outcome.merged and outcome.fast_forwarded and outcome.refusal is None
    assert w.main() == report.head_sha
    assert (outcome.marks_pending, outcome.marks_applied, outcome.marks_failed) == (3, 3, None)
    assert ok(w.state.unconsolidated(["s-1", "s-2", "s-3"])) == ("s-3",)
    status = ok(sleep_status(w.deps()))
    assert [(r.run_id, r.state) for r in status.runs] == [(RUN_DAY, "merged")]


def test_no_run() -> None:
    w = world()
    outcome = ok(merge_run(w.deps(), "2026-01-01"))
    assert (outcome.merged, outcome.refusal) == (False, "no-run")
    assert outcome.marks_pending is None and outcome.marks_applied is None


NOTE0, NOTE1, NOTE2 = (f"areas/notes/note-{n}.html" for n in range(3))


def test_a_write_beside_the_run_is_kept_and_the_run_replayed_onto_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    marking(monkeypatch)
    report = ok(run_sleep(w.deps()))
    written = w.write("Later", "Written during the run.", path="areas/notes/later.html")
    main = w.main()
    outcome = ok(merge_run(w.deps(), RUN_DAY))
    assert outcome.merged and not outcome.fast_forwarded and outcome.refusal is None, outcome
    assert (outcome.replayed_onto, outcome.merge_commit, outcome.attempts) == (
        main, w.main(), 1)
    assert outcome.gate is not None and outcome.gate.passed
    info = ok(w.git.commit_info(w.main()))
    assert info.parents == (main, report.head_sha), "the run's commits stay in history"
    trailers = dict(info.trailers)
    assert (trailers["Memhtml-Op"], trailers["Memhtml-Run"], trailers["Memhtml-Merged"],
            trailers["Memhtml-Base"]) == ("sleep-merge", RUN_DAY, report.head_sha,
                                          report.base_sha)
    merged, run_tip = w.tree(w.main()), w.tree(report.head_sha)
    assert merged[written] == w.tree(main)[written]
    changed = {p for p in run_tip.keys() | w.tree(report.base_sha).keys()
               if run_tip.get(p) != w.tree(report.base_sha).get(p)}
    assert changed and all(merged.get(p) == run_tip.get(p) for p in changed)
    assert set(merged) == set(run_tip) | {written}
    assert (outcome.marks_pending, outcome.marks_applied) == (3, 3)
    assert ok(sleep_status(w.deps(), RUN_DAY)).runs[0].state == "merged"
    again = ok(merge_run(w.deps(), RUN_DAY))
    assert again.merged and again.merge_commit is None and w.main() == info.sha
    assert ok(w.state.unconsolidated(["s-1", "s-2", "s-3"])) == ("s-3",)


def test_a_path_both_changed_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    marking(monkeypatch)
    ok(run_sleep(w.deps()))
    edited = (w.blob(w.main(), NOTE1) or b"").replace(b"Fact number 1", b"Fact number one")
    on_branch(w, [PathChange(NOTE1, edited)])
    w.raw([PathChange(NOTE1, edited.replace(b"number one", b"number uno"))])
    main = w.main()
    outcome = ok(merge_run(w.deps(), RUN_DAY))
    assert (outcome.merged, outcome.refusal, outcome.conflicts) == (False, "conflict", (NOTE1,))
    assert NOTE1 in outcome.reason
    assert outcome.marks_pending is None and w.main() == main
    assert ok(w.state.unconsolidated(["s-1"])) == ("s-1",)


def test_another_run_landed_meanwhile_is_main_advanced() -> None:
    w = world()
    ok(run_sleep(w.deps()))
    second = ok(run_sleep(w.deps()))
    assert ok(merge_run(w.deps(), second.run_id)).fast_forwarded
    main = w.main()
    outcome = ok(merge_run(w.deps(), RUN_DAY))
    assert (outcome.merged, outcome.refusal) == (False, "main-advanced")
    assert outcome.conflicts == (f".memhtml/sleep/{second.run_id}.html",)
    assert w.main() == main


def test_a_rewritten_main_is_main_advanced() -> None:
    w = world()
    ok(run_sleep(w.deps()))
    root = ok(w.git.commits_between(None, w.main()))[0]
    ok(w.git.move_ref("refs/heads/main", w.main(), root))
    w.write("Elsewhere", "Written on a rewritten main.", path="areas/notes/elsewhere.html")
    outcome = ok(merge_run(w.deps(), RUN_DAY))
    assert (outcome.merged, outcome.refusal) == (False, "main-advanced")
    assert "rewritten" in outcome.reason


def _archived_on(w: World, at: str, path: str) -> list[PathChange]:
    """The changes the archive door makes for ``path`` at ``at``."""
    plan = archive_step(Plan.start(ok(w.store.version_at(at)), "2026-11-29T03:15:07Z"),
                        path).unwrap().plan
    return list(plan.changes()[0])


def test_a_writers_link_into_what_the_run_archived_follows_it() -> None:
    w = world()
    ok(run_sleep(w.deps()))
    on_branch(w, _archived_on(w, BRANCH, NOTE2))
    new = w.write("Points at two", "Another fact.", path="areas/notes/pointer.html",
                  links=(Link("supports", "/" + NOTE2),))
    # One archive of four memories is past the default share; the share is not what
    # this test is about.
    outcome = ok(merge_run(w.deps(archive_share=1.0), RUN_DAY))
    assert outcome.merged and outcome.followed == (new,), outcome
    record = ok(w.store.version_at(w.main())).get(new)
    assert record is not None
    assert [link.href for link in record.links] == [f"/archive/2026/{NOTE2}"]


def test_the_runs_link_into_what_a_writer_archived_follows_it() -> None:
    w = world()
    ok(run_sleep(w.deps()))
    note0 = ok(w.store.version_at(BRANCH)).get(NOTE0)
    assert note0 is not None and note0.links == ()
    on_branch(w, [PathChange(NOTE0, add_link(note0.html, "relates_to", "/" + NOTE2).encode())])
    ok(archive(w.store, NOTE2))
    outcome = ok(merge_run(w.deps(), RUN_DAY))
    assert outcome.merged and outcome.followed == (NOTE0,), outcome
    record = ok(w.store.version_at(w.main())).get(NOTE0)
    assert record is not None
    assert [link.href for link in record.links] == [f"/archive/2026/{NOTE2}"]


def test_a_link_into_a_memory_removed_without_an_archive_is_a_conflict() -> None:
    w = world()
    ok(run_sleep(w.deps()))
    note0 = ok(w.store.version_at(BRANCH)).get(NOTE0)
    assert note0 is not None
    on_branch(w, [PathChange(NOTE0, add_link(note0.html, "relates_to", "/" + NOTE2).encode())])
    w.raw([PathChange(NOTE2, None)], "a person deletes a memory")
    main = w.main()
    outcome = ok(merge_run(w.deps(), RUN_DAY))
    assert (outcome.merged, outcome.refusal, outcome.conflicts) == (False, "conflict", (NOTE0,))
    assert f"{NOTE0} -> {NOTE2}" in outcome.reason
    assert w.main() == main


def test_a_replay_that_would_lose_a_writers_memory_is_refused() -> None:
    w = world()
    ok(run_sleep(w.deps()))
    # The branch deletes a memory by hand (not archived): the replay would lose it.
    on_branch(w, [PathChange(NOTE1, None)])
    w.write("Later", "Written during the run.", path="areas/notes/later.html")
    main = w.main()
    outcome = ok(merge_run(w.deps(), RUN_DAY))
    assert (outcome.merged, outcome.refusal, outcome.lost) == (False, "lost", (NOTE1,))
    assert w.main() == main


def test_a_replay_is_gated_on_the_merged_tree() -> None:
    w = world()
    ok(run_sleep(w.deps()))
    w.write("Later", "Written during the run.", path="areas/notes/later.html")
    seen: list[tuple[str | None, int]] = []

    def gate(base: HeadVersion, tip: HeadVersion) -> GateVerdict:
        seen.append((base.sha, tip.size))
        return GateVerdict(False, "head gate: MRR fell")

    main = w.main()
    outcome = ok(merge_run(w.deps(gate=gate), RUN_DAY))
    assert (outcome.merged, outcome.refusal) == (False, "gate-failed")
    assert seen == [(main, ok(w.store.version_at(main)).size)], "main's tip against the result"
    assert w.main() == main


def test_gate_failed_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    marking(monkeypatch)
    ok(run_sleep(w.deps()))
    main = w.main()
    outcome = ok(merge_run(w.deps(gate=failing_gate), RUN_DAY))
    assert (outcome.merged, outcome.refusal) == (False, "gate-failed")
    assert outcome.gate is not None and not outcome.gate.passed
    assert outcome.marks_pending is None and w.main() == main
    assert ok(w.state.unconsolidated(["s-1"])) == ("s-1",)


@pytest.mark.parametrize("damage", ["deleted", "broken"])
def test_lost_catches_what_the_gate_cannot_see(damage: str) -> None:
    w = world(memories=6)
    ok(run_sleep(w.deps()))
    gone = "areas/notes/note-3.html"
    change = PathChange(gone, None if damage == "deleted" else b"<p>not a memory</p>")
    on_branch(w, [change])
    base = ok(w.store.version_at(w.main()))
    tip = ok(w.store.version_at(BRANCH))
    # Nothing stands for a deleted or broken file, so the gate has no target to look
    # for: only the lost check names it.
    assert gate_heads(base, tip).unfound == ()
    main = w.main()
    outcome = ok(merge_run(w.deps(gate=head_gate), RUN_DAY))
    assert (outcome.merged, outcome.refusal) == (False, "lost")
    assert outcome.lost == (gone,)
    assert w.main() == main


def test_an_archived_memory_is_not_lost() -> None:
    w = world()
    ok(run_sleep(w.deps()))
    moved = w.blob(w.main(), "areas/notes/note-1.html")
    on_branch(w, [PathChange("areas/notes/note-1.html", None),
                  PathChange("archive/2026/areas/notes/note-1.html", moved)])
    base = ok(w.store.version_at(w.main()))
    tip = ok(w.store.version_at(BRANCH))
    assert lost_memories(base, tip) == ()


def test_a_failed_apply_is_reported_not_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    marking(monkeypatch)
    report = ok(run_sleep(w.deps()))
    broken = InMemoryState(failing=StateFailure("state.db", "mark_consolidated", "disk I/O"))
    outcome = ok(merge_run(w.deps(state=broken), RUN_DAY))
    assert outcome.merged and w.main() == report.head_sha
    assert outcome.marks_pending == 3 and outcome.marks_applied == 1
    assert outcome.marks_failed is not None and "disk I/O" in outcome.marks_failed


def test_the_ledger_is_read_from_the_tip_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    marking(monkeypatch)
    ok(run_sleep(w.deps()))
    outcome = ok(merge_run(w.deps(), RUN_DAY))
    assert outcome.marks_pending == 3


def test_abort_deletes_the_branch_only(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    marking(monkeypatch)
    ok(run_sleep(w.deps()))
    main = w.main()
    aborted = ok(abort_run(w.deps(), RUN_DAY))
    assert aborted.state == "mergeable"
    assert w.main() == main
    assert ok(w.git.branches("sleep/")) == ()
    assert ok(merge_run(w.deps(), RUN_DAY)).refusal == "no-run"
    assert ok(w.state.unconsolidated(["s-1"])) == ("s-1",)


def test_review_classifies_each_file() -> None:
    w = world(memories=4)
    ok(run_sleep(w.deps()))
    main = w.main()
    note0 = (w.blob(main, "areas/notes/note-0.html") or b"").decode()
    note1 = (w.blob(main, "areas/notes/note-1.html") or b"").decode()
    note2 = w.blob(main, "areas/notes/note-2.html") or b""
    meta = note0.replace('content="semantic"', 'content="procedural"')
    body = note1.replace("Fact number 1", "Fact number one")
    assert meta != note0 and body != note1
    on_branch(w, [
        PathChange("areas/notes/note-0.html", meta.encode()),
        PathChange("areas/notes/note-1.html", body.encode()),
        PathChange("areas/notes/note-2.html", None),
        PathChange("archive/2026/areas/notes/note-2.html", note2),
        PathChange("areas/notes/note-3.html", None),
        PathChange("areas/notes/new.html", note2),
    ])
    review = ok(review_run(w.deps(), RUN_DAY))
    classes = {f.path: (f.change, f.to) for f in review.files}
    assert classes["areas/notes/note-0.html"] == ("meta-only", None)
    assert classes["areas/notes/note-1.html"] == ("body-changed", None)
    assert classes["areas/notes/note-2.html"] == (
        "archived", "archive/2026/areas/notes/note-2.html")
    assert classes["areas/notes/note-3.html"] == ("deleted", None)
    assert classes["areas/notes/new.html"] == ("created", None)
    assert classes[".memhtml/sleep/2026-11-29.html"] == ("created", None)
    assert "archive/2026/areas/notes/note-2.html" not in classes
    assert review.stat.files == len(review.files) + 1
    assert review.stat.insertions > 0 and review.stat.deletions > 0
    assert [c.phase for c in review.commits] == ["state-export", "report", None]
    assert dict(review.commits[1].trailers)["Memhtml-Phase"] == "report"
    # A phase with nothing to change is done too: the report's commit names each.
    assert {p.phase for p in review.phases if p.done} == set(SLEEP_PHASES)
    # The hand commit's changes were decided by no phase: listed as such.
    assert set(review.unexplained) == {
        "areas/notes/note-0.html", "areas/notes/note-1.html", "areas/notes/note-2.html",
        "areas/notes/note-3.html", "areas/notes/new.html",
        "archive/2026/areas/notes/note-2.html"}
    assert review.state == "mergeable"
