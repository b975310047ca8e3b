"""Merge's refusals (each before anything moves), the fast-forward, the ledger applied
after it, and review's per-file classes."""

from __future__ import annotations

import pytest
from returns.io import IOResult, IOSuccess
from tests.unit.sleep.sleep_support import RUN_DAY, World, failing_gate, ok, world

from memhtml.adapters.memory_state import InMemoryState
from memhtml.contracts.errors import StateFailure
from memhtml.contracts.services import PathChange
from memhtml.head import HeadVersion, gate_heads
from memhtml.sleep import runner
from memhtml.sleep.deps import GateVerdict
from memhtml.sleep.ledger import PendingMark
from memhtml.sleep.merge import lost_memories, merge_run
from memhtml.sleep.phase import PhaseEnv, PhaseFault, PhaseResult
from memhtml.sleep.phases import body_for
from memhtml.sleep.review import review_run
from memhtml.sleep.runner import run_sleep
from memhtml.sleep.runs import abort_run, latest_run, sleep_status

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


def test_main_advanced_refuses_and_moves_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    marking(monkeypatch)
    ok(run_sleep(w.deps()))
    written = w.write("Later", "Written during the run.", path="areas/notes/later.html")
    main = w.main()
    outcome = ok(merge_run(w.deps(), RUN_DAY))
    assert (outcome.merged, outcome.refusal) == (False, "main-advanced")
    assert outcome.marks_pending is None and outcome.marks_applied is None
    assert w.main() == main and written
    assert ok(w.state.unconsolidated(["s-1"])) == ("s-1",)
    assert ok(sleep_status(w.deps(), RUN_DAY)).runs[0].state == "main-advanced"
    # The next run is cut at the new main and merges.
    again = ok(run_sleep(w.deps()))
    assert again.run_id == f"{RUN_DAY}-2"
    assert ok(merge_run(w.deps(), again.run_id)).merged
    assert ok(latest_run(w.deps())) == f"{RUN_DAY}-2"


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
    assert gate_heads(base, tip).passed, "the gate probes only what both versions hold"
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
    assert {p.phase for p in review.phases if p.done} == {"state-export", "report"}
    assert review.state == "mergeable"
