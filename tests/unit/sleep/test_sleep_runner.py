"""The runner on the doubles: the branch, the trailers, isolation, prerequisites, the
ledger, phase order and the dry run."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest
from returns.io import IOFailure, IOResult, IOSuccess
from tests.unit.sleep.sleep_support import RUN_DAY, World, err, ok, world

from memhtml.adapters.memory_state import InMemoryState
from memhtml.contracts.errors import StateUnusable
from memhtml.contracts.services import CounterKey, PathChange
from memhtml.sleep import runner
from memhtml.sleep.contract import SLEEP_PHASES, SleepPhase, ledger_path, report_path
from memhtml.sleep.history import read_history
from memhtml.sleep.ledger import PendingMark, read_ledger
from memhtml.sleep.phase import PhaseBody, PhaseCommit, PhaseEnv, PhaseFault, PhaseResult
from memhtml.sleep.phases import body_for
from memhtml.sleep.runner import RunOptions, RunReport, run_sleep

Bodies = Mapping[SleepPhase, PhaseBody]


def with_bodies(monkeypatch: pytest.MonkeyPatch, bodies: Bodies) -> None:
    monkeypatch.setattr(runner, "body_for", lambda phase: bodies.get(phase, body_for(phase)))


def commit_file(path: str, text: str, **counts: int) -> PhaseBody:
    def body(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        return IOSuccess(PhaseResult(counts=counts, commits=(
            PhaseCommit(f"write {path}", (PathChange(path, text.encode()),)),)))

    return body


def raising(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
    raise RuntimeError("the model answered in Latin")


def statuses(report: RunReport) -> dict[str, str]:
    return {record.phase: record.status for record in report.phases}


def test_a_run_cuts_its_branch_and_never_moves_main() -> None:
    w = world()
    main = w.main()
    report = ok(run_sleep(w.deps()))
    assert report.run_id == RUN_DAY
    assert report.branch == f"sleep/{RUN_DAY}"
    assert w.main() == main
    assert report.base_sha == main
    assert ok(w.git.resolve(f"sleep/{RUN_DAY}")) == report.head_sha
    assert [r.phase for r in report.phases] == list(SLEEP_PHASES)
    assert report.ok
    assert statuses(report)["placement-triage"] == "done"  # deep only: a reason, no write
    tree = w.tree(report.head_sha)
    assert report_path(RUN_DAY) in tree
    assert ".memhtml/state/access.jsonl" in tree
    assert [c.phase for c in report.commits] == ["state-export", "report"]


def test_the_trailers_round_trip() -> None:
    w = world()
    report = ok(run_sleep(w.deps()))
    info = ok(w.git.commit_info(report.head_sha))
    trailers = dict(info.trailers)
    assert trailers["Memhtml-Run"] == RUN_DAY
    assert trailers["Memhtml-Phase"] == "report"
    assert trailers["Memhtml-Base"] == report.base_sha
    assert trailers["Memhtml-Stamp"] == "2026-11-29T03:15:07Z"
    counts = trailers["Memhtml-Counts"]
    assert "\n" not in counts and " " not in counts
    assert json.loads(counts) == dict(next(r for r in report.phases
                                           if r.phase == "report").counts)
    assert list(json.loads(counts)) == sorted(json.loads(counts))
    history = ok(read_history(w.git, "refs/heads/main", RUN_DAY))
    assert history.base == report.base_sha
    assert set(history.done()) == {"state-export", "report"}
    assert history.stamp is not None and history.stamp.isoformat() == "2026-11-29T03:15:07+00:00"
    assert info.time.timestamp() == history.stamp.timestamp()


def test_a_second_run_the_same_day_is_suffixed() -> None:
    w = world()
    first = ok(run_sleep(w.deps()))
    second = ok(run_sleep(w.deps()))
    third = ok(run_sleep(w.deps()))
    assert (first.run_id, second.run_id, third.run_id) == (
        RUN_DAY, f"{RUN_DAY}-2", f"{RUN_DAY}-3")
    assert second.base_sha == first.base_sha


def test_a_run_id_main_already_holds_is_not_cut_again() -> None:
    w = world()
    w.raw([PathChange(report_path(RUN_DAY), b"<p>merged long ago</p>")], "an old run")
    assert ok(run_sleep(w.deps())).run_id == f"{RUN_DAY}-2"


def test_a_raising_phase_leaves_no_commit_and_the_rest_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    with_bodies(monkeypatch, {"integrity": raising})
    report = ok(run_sleep(w.deps()))
    record = next(r for r in report.phases if r.phase == "integrity")
    assert record.status == "failed"
    assert record.reason is not None and "Latin" in record.reason
    assert record.commits == ()
    assert statuses(report)["state-export"] == "done"
    assert statuses(report)["report"] == "done"
    assert not report.ok and report.failed == ("integrity",)
    page = w.blob(report.head_sha, report_path(RUN_DAY))
    assert page is not None and b"the model answered in Latin" in page


def test_a_failing_commit_drops_the_phase_s_earlier_commits(
        monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()

    def two_then_bad(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        return IOSuccess(PhaseResult(commits=(
            PhaseCommit("one", (PathChange("notes/one.txt", b"1"),)),
            PhaseCommit("two", (PathChange("notes/../../escape.txt", b"2"),)),
        )))

    with_bodies(monkeypatch, {"compress": two_then_bad, "dedup-merge": commit_file(
        "notes/dedup.txt", "d")})
    report = ok(run_sleep(w.deps()))
    assert statuses(report)["compress"] == "failed"
    tree = w.tree(report.head_sha)
    assert "notes/dedup.txt" in tree
    assert "notes/one.txt" not in tree
    assert all(c.phase != "compress" for c in report.commits)


def test_a_failed_preflight_commits_nothing() -> None:
    w = world()
    w.state = InMemoryState(failing=StateUnusable("/x/.git/memhtml/state.db", "not a database"))
    report = ok(run_sleep(w.deps()))
    preflight = report.phases[0]
    assert preflight.status == "failed"
    assert preflight.reason is not None and "state.db" in preflight.reason
    assert all(r.status == "blocked" for r in report.phases[1:])
    assert report.commits == ()
    assert report.head_sha == report.base_sha
    assert not report.ok


def test_a_failed_prerequisite_stops_only_its_dependents(
        monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()

    def refusing(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        return IOFailure(PhaseFault("no model"))

    with_bodies(monkeypatch, {"dedup-merge": refusing})
    report = ok(run_sleep(w.deps()))
    got = statuses(report)
    assert got["dedup-merge"] == "failed"
    assert got["compress"] == got["retention-triage"] == "blocked"
    assert got["reprieve"] == "done"
    assert got["integrity"] == got["report"] == "done"
    assert set(report.failed) == {"dedup-merge", "compress", "retention-triage"}


def test_each_phase_sees_the_branch_after_the_earlier_ones(
        monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    seen: dict[str, object] = {}

    def looking(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        seen["version"] = env.version.sha
        seen["branch_tip"] = ok(w.git.resolve(env.branch or ""))
        seen["note"] = env.version.get("areas/notes/decayed.html")
        return IOSuccess(PhaseResult())

    written = ok(w.store.head()).get("areas/notes/note-0.html")
    assert written is not None
    with_bodies(monkeypatch, {
        "confidence-decay": commit_file("areas/notes/decayed.html", written.html),
        "retention-triage": looking,
        "dedup-merge": commit_file("notes/d.txt", "d"),
    })
    ok(run_sleep(w.deps()))
    assert seen["version"] == seen["branch_tip"]
    assert seen["note"] is not None


def test_marks_land_in_the_ledger_in_the_phase_s_commit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    marks = (PendingMark.of("session-consolidated", session="s-2"),
             PendingMark.of("session-consolidated", session="s-1"),
             PendingMark.of("session-consolidated", session="s-2"))

    def marking(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        return IOSuccess(PhaseResult(counts={"sessions": 2}, marks=marks))

    with_bodies(monkeypatch, {"trace-consolidation": marking})
    report = ok(run_sleep(w.deps()))
    record = next(r for r in report.phases if r.phase == "trace-consolidation")
    assert record.marks == 2 and len(record.commits) == 1
    data = w.blob(report.head_sha, ledger_path(RUN_DAY))
    assert read_ledger(data).marks == marks[:2]
    assert ok(w.state.unconsolidated(["s-1", "s-2"])) == ("s-1", "s-2"), \
        "a mark is a deferred write: the plane is untouched until merge"


def test_a_selected_phase_runs_with_preflight_only(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    report = ok(run_sleep(w.deps(), RunOptions(phases=frozenset({"state-export"}))))
    got = statuses(report)
    assert got["preflight"] == "done" and got["state-export"] == "done"
    assert got["report"] == got["integrity"] == "not-selected"
    assert [c.phase for c in report.commits] == ["state-export"]
    assert report.ok


def test_a_dry_run_touches_nothing_durable(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    counter = CounterKey("entity", "service:checkout-api|service:checkout")
    seen: list[object] = []

    def bumping(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        detection = ok(env.state.bump(counter, env.run_id, 2, env.stamp))
        seen.append(detection)
        return IOSuccess(PhaseResult(
            commits=(PhaseCommit("x", (PathChange("notes/x.txt", b"x"),)),),
            marks=(PendingMark.of("entity-promoted", key=counter.key, detections=1),)))

    with_bodies(monkeypatch, {"entity-resolution": bumping})
    before_refs = w.git.branches("")
    report = ok(run_sleep(w.deps(), RunOptions(dry_run=True)))
    assert report.dry_run and report.branch is None
    assert ok(before_refs) == ok(w.git.branches(""))
    assert report.commits == () and report.head_sha == report.base_sha
    assert ok(w.state.detections(counter)) == 0
    assert seen and getattr(seen[0], "detections", None) == 1
    record = next(r for r in report.phases if r.phase == "entity-resolution")
    assert (record.status, record.changed_paths, record.marks) == ("done", 1, 1)
    assert statuses(report)["report"] == "done"


def test_a_store_with_no_commit_is_refused() -> None:
    from tests.unit.sleep.sleep_support import AUTHOR, RUN_AT

    from memhtml.adapters.clock import ManualClock
    from memhtml.adapters.memory_git import InMemoryGit
    from memhtml.sleep.errors import SleepRefused
    from memhtml.store import Store, StoreDeps

    git = InMemoryGit(bare=True)
    empty = World(git, ManualClock(RUN_AT), InMemoryState(),
                  Store(StoreDeps(git=git, clock=ManualClock(RUN_AT), author=AUTHOR)))
    refused = err(run_sleep(empty.deps()))
    assert isinstance(refused, SleepRefused)


def test_progress_is_told_each_phase(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    ok(run_sleep(w.deps()))
    starts = [(n, phase) for n, phase, what in w.progress if what == "start"]
    assert starts == list(enumerate(SLEEP_PHASES, start=1))
    ends = {phase: what for _, phase, what in w.progress if what != "start"}
    assert ends["placement-triage"] == "done" and ends["report"] == "done"

