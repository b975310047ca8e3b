"""Resume: done phases read from the trailers and reported ``skipped``; a run killed at
any write and resumed ends where the uninterrupted run ends, tree for tree."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.io import IOResult, IOSuccess
from tests.unit.sleep.sleep_support import RUN_DAY, World, err, ok, world

from memhtml.adapters.memory_git import InMemoryGit
from memhtml.adapters.memory_state import InMemoryState
from memhtml.contracts.errors import StateError
from memhtml.contracts.services import CounterKey, Detection, PathChange, Signature
from memhtml.sleep import runner
from memhtml.sleep.contract import SLEEP_PHASES, RunFlags, ledger_path
from memhtml.sleep.errors import RunNotFound, SleepRefused
from memhtml.sleep.history import read_history
from memhtml.sleep.ledger import PendingMark, read_ledger
from memhtml.sleep.merge import merge_run
from memhtml.sleep.phase import PhaseCommit, PhaseEnv, PhaseFault, PhaseResult
from memhtml.sleep.phases import body_for
from memhtml.sleep.resume import resume_sleep
from memhtml.sleep.runner import run_sleep

COUNTER = CounterKey("edge", "areas/notes/note-0.html|areas/notes/note-1.html")


class Killed(BaseException):
    """The process ending at a write (``os._exit`` in a real kill test)."""


class Killer:
    def __init__(self, at: int | None, before: bool) -> None:
        self.at, self.before, self.writes = at, before, 0

    def __call__(self, write: Any) -> Any:
        self.writes += 1
        hit = self.at is not None and self.writes == self.at
        if hit and self.before:
            raise Killed
        result = write()
        if hit:
            raise Killed
        return result


class KillingGit(InMemoryGit):
    killer: Killer

    def commit(self, *args: Any, **kwargs: Any) -> Any:
        return self.killer(lambda: super(KillingGit, self).commit(*args, **kwargs))

    def create_branch(self, name: str, at: str) -> Any:
        return self.killer(lambda: super(KillingGit, self).create_branch(name, at))

    def move_ref(self, ref: str, expected: str | None, target: str) -> Any:
        return self.killer(lambda: super(KillingGit, self).move_ref(ref, expected, target))


class KillingState(InMemoryState):
    killer: Killer

    def bump(self, counter: CounterKey, run_id: str, threshold: int, at: datetime
             ) -> IOResult[Detection, StateError]:
        done: IOResult[Detection, StateError] = self.killer(
            lambda: super(KillingState, self).bump(counter, run_id, threshold, at))
        return done

    def mark_consolidated(self, session_ids: Collection[str], run_id: str, at: datetime
                          ) -> IOResult[tuple[str, ...], StateError]:
        done: IOResult[tuple[str, ...], StateError] = self.killer(
            lambda: super(KillingState, self).mark_consolidated(session_ids, run_id, at))
        return done


def busy_bodies(monkeypatch: pytest.MonkeyPatch) -> None:
    """Phases that commit, commit in parts, bump a counter and earn marks."""

    def dedup(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        detection = ok(env.state.bump(COUNTER, env.run_id, 2, env.stamp))
        return IOSuccess(PhaseResult(
            counts={"detections": detection.detections},
            commits=(PhaseCommit("fold", (PathChange("notes/dedup.txt", b"folded\n"),)),)))

    def compress(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        return IOSuccess(PhaseResult(
            counts={"batches": 2},
            commits=(PhaseCommit("batch 1", (PathChange("notes/c1.txt", b"1\n"),)),
                     PhaseCommit("batch 2", (PathChange("notes/c2.txt", b"2\n"),))),
            marks=(PendingMark.of("session-consolidated", session="s-9"),)))

    def trace(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        return IOSuccess(PhaseResult(marks=(
            PendingMark.of("session-consolidated", session="s-1"),
            PendingMark.of("commitment-below-floor", statement="call <Ines>", confidence=0.5,
                           session="s-1", done=False))))

    bodies = {"dedup-merge": dedup, "compress": compress, "trace-consolidation": trace}
    monkeypatch.setattr(runner, "body_for", lambda phase: bodies.get(phase, body_for(phase)))


def killing_world(at: int | None, before: bool) -> tuple[World, Killer]:
    killer = Killer(at, before)
    KillingGit.killer = killer
    KillingState.killer = killer
    built = world()
    git = KillingGit(bare=True)
    # The same history, replayed into the killing double (so the shas are the same).
    for sha in ok(built.git.commits_between(None, built.main())):
        info = ok(built.git.commit_info(sha))
        parent = info.parents[0] if info.parents else None
        changes = [PathChange(p, built.blob(sha, p)) for p in ok(
            built.git.changed_paths(parent, sha))] if parent else [
            PathChange(p, built.blob(sha, p)) for p in built.tree(sha)]
        saved, killer.at = killer.at, None
        made = ok(git.commit("main", parent, changes, info.message,
                             Signature(info.author.name, info.author.email), info.time))
        killer.at = saved
        assert made == sha
    built.git = git
    built.state = KillingState()
    killer.writes = 0
    return built, killer


def finish(w: World) -> str:
    """What an operator does after a kill: resume the run, or run again when the kill
    came before its branch existed."""
    resumed = resume_sleep(w.deps(), RUN_DAY)
    try:
        report = ok(resumed)
    except AssertionError:
        assert isinstance(err(resumed), RunNotFound)
        report = ok(run_sleep(w.deps()))
    assert [r.phase for r in report.phases] == list(SLEEP_PHASES)
    return report.head_sha


def test_resume_skips_the_done_phases_and_reports_all_seventeen(
        monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    real = body_for

    def report_fails(phase: Any) -> Any:
        if phase == "report":
            return lambda env: (_ for _ in ()).throw(RuntimeError("disk full"))
        return real(phase)

    monkeypatch.setattr(runner, "body_for", report_fails)
    first = ok(run_sleep(w.deps()))
    assert {r.phase: r.status for r in first.phases}["report"] == "failed"
    assert first.ok, "a failed reporting write never fails a run"
    monkeypatch.setattr(runner, "body_for", real)
    again = ok(resume_sleep(w.deps(), RUN_DAY))
    got = {r.phase: r.status for r in again.phases}
    assert len(again.phases) == 17
    assert got["state-export"] == "skipped"
    assert got["report"] == "done" and got["preflight"] == "done"
    assert again.resumed and again.base_sha == first.base_sha
    assert [c.phase for c in again.commits] == ["state-export", "report"]


def test_resume_of_nothing_and_of_a_merged_run() -> None:
    w = world()
    assert isinstance(err(resume_sleep(w.deps(), "2026-01-01")), RunNotFound)
    ok(run_sleep(w.deps()))
    assert ok(merge_run(w.deps(), RUN_DAY)).merged
    assert isinstance(err(resume_sleep(w.deps(), RUN_DAY)), SleepRefused)


def uninterrupted(monkeypatch: pytest.MonkeyPatch) -> tuple[World, str, int]:
    w, killer = killing_world(None, before=False)
    busy_bodies(monkeypatch)
    tip = ok(run_sleep(w.deps())).head_sha
    return w, tip, killer.writes


@pytest.mark.parametrize("before", [True, False], ids=["before-write", "after-write"])
def test_a_run_killed_at_any_write_resumes_to_the_same_branch(
        monkeypatch: pytest.MonkeyPatch, before: bool) -> None:
    golden, tip, writes = uninterrupted(monkeypatch)
    assert writes >= 6
    golden_tree = golden.tree(tip)
    for n in range(1, writes + 1):
        w, killer = killing_world(n, before)
        with pytest.raises(Killed):
            run_sleep(w.deps())
        killer.at = None
        end = finish(w)
        assert w.tree(end) == golden_tree, f"killed at write {n}"
        assert end == tip, f"killed at write {n}: the same commits, byte for byte"
        assert ok(w.state.detections(COUNTER)) == 1
        ledger = read_ledger(w.blob(end, ledger_path(RUN_DAY)))
        assert ledger == read_ledger(golden.blob(tip, ledger_path(RUN_DAY)))
        base = ok(golden.git.resolve("main"))
        for record_path in golden.tree(base):
            if record_path.endswith(".html") and record_path.startswith("areas/"):
                assert record_path in w.tree(end)


def test_a_merge_killed_before_its_marks_applies_them_on_the_next_merge(
        monkeypatch: pytest.MonkeyPatch) -> None:
    w, killer = killing_world(None, before=False)
    busy_bodies(monkeypatch)
    report = ok(run_sleep(w.deps()))
    killer.at = killer.writes + 1  # the fast-forward
    with pytest.raises(Killed):
        merge_run(w.deps(), RUN_DAY)
    assert w.main() == report.head_sha
    assert ok(w.state.unconsolidated(["s-1", "s-9"])) == ("s-1", "s-9")
    killer.at = None
    second = ok(merge_run(w.deps(), RUN_DAY))
    assert second.merged and not second.fast_forwarded
    assert (second.marks_pending, second.marks_applied) == (3, 3)
    assert ok(w.state.unconsolidated(["s-1", "s-9"])) == ()
    third = ok(merge_run(w.deps(), RUN_DAY))
    assert third.marks_applied == 3 and ok(w.state.unconsolidated(["s-1", "s-9"])) == ()




def test_a_phase_that_committed_nothing_runs_again_at_the_version_it_first_saw(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # dedup-merge changes nothing; a later phase adds a file; the run stops at report.
    # On resume dedup-merge must see the tree it saw the first time, not the later
    # phase's tip, or its counts (and the report page) would differ from the
    # uninterrupted run's.
    w = world()
    real = body_for

    def seen(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        return IOSuccess(PhaseResult(counts={"at": env.version.sha},
                                     warnings=() if env.budget.used == 3 else ("budget",)))

    def adds(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        return IOSuccess(PhaseResult(commits=(
            PhaseCommit("add", (PathChange("notes/later.txt", b"later\n"),)),)))

    def mints(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        for _ in range(3):
            env.budget.take()
        return IOSuccess(PhaseResult(counts={"tasks_minted": 3}, commits=(
            PhaseCommit("tasks", (PathChange("notes/tasks.txt", b"3\n"),)),)))

    def bodies(failing: bool) -> Any:
        chosen = {"preflight": real("preflight"), "dedup-merge": mints,
                  "entity-resolution": seen, "confidence-decay": adds}

        def pick(phase: Any) -> Any:
            if failing and phase == "report":
                return lambda env: (_ for _ in ()).throw(RuntimeError("disk full"))
            return chosen.get(phase, real(phase))
        return pick

    monkeypatch.setattr(runner, "body_for", bodies(failing=True))
    first = ok(run_sleep(w.deps()))
    before = next(r for r in first.phases if r.phase == "entity-resolution")
    assert before.status == "done" and not before.warnings
    monkeypatch.setattr(runner, "body_for", bodies(failing=False))
    again = ok(resume_sleep(w.deps(), RUN_DAY))
    after = next(r for r in again.phases if r.phase == "entity-resolution")
    assert after.status == "done"
    assert after.counts == before.counts, "the version it saw the first time"
    assert not after.warnings, "and the budget the done phase before it had used"


def _spender(calls: int, *, commits: bool = True) -> Any:
    """A body that draws ``calls`` calls from the run's budget and commits a file."""

    def body(env: PhaseEnv) -> IOResult[PhaseResult, PhaseFault]:
        granted = sum(env.calls.take() for _ in range(calls))
        change = PathChange(f"notes/{env.phase}.txt", f"{granted} {env.deep}\n".encode())
        return IOSuccess(PhaseResult(
            counts={"granted": granted, "deep": env.deep},
            commits=(PhaseCommit("spent", (change,)),) if commits else ()))

    return body


def _stops_at_report(monkeypatch: pytest.MonkeyPatch, spend: int) -> None:
    def pick(phase: Any) -> Any:
        if phase == "report":
            return lambda env: (_ for _ in ()).throw(Killed())
        if phase in ("dedup-merge", "edge-typing"):
            return _spender(spend)
        return body_for(phase)

    monkeypatch.setattr(runner, "body_for", pick)


def test_resume_runs_with_the_options_the_run_was_started_with(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # dedup-merge and edge-typing each want 3 calls of a budget of 5; the first attempt
    # dies at report. Its commits record --deep and the 5, and 5 calls spent.
    w = world()
    _stops_at_report(monkeypatch, 3)
    with pytest.raises(Killed):
        run_sleep(w.deps(), runner.RunOptions(deep=True, max_llm_calls=5))
    history = ok(read_history(w.git, "refs/heads/main", RUN_DAY))
    assert history.flags == RunFlags(deep=True, max_llm_calls=5)
    assert history.calls_spent == 5
    granted = {c.phase: c.counts["granted"] for c in history.commits if "granted" in c.counts}
    assert granted == {"dedup-merge": 3, "edge-typing": 2}

    # The resume: a phase still to run sees --deep and no call left.
    def later(phase: Any) -> Any:
        return _spender(2) if phase == "report" else body_for(phase)

    monkeypatch.setattr(runner, "body_for", later)
    report = ok(resume_sleep(w.deps(), RUN_DAY))
    last = {r.phase: r for r in report.phases}["report"]
    assert last.counts["granted"] == 0 and last.counts["deep"] is True


def test_resume_refuses_flags_that_contradict_the_record_and_uses_them_without_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    w = world()
    _stops_at_report(monkeypatch, 1)
    with pytest.raises(Killed):
        run_sleep(w.deps(), runner.RunOptions(deep=False, max_llm_calls=4))
    refused = err(resume_sleep(w.deps(), RUN_DAY, deep=True))
    assert isinstance(refused, SleepRefused) and "--deep" in refused.reason
    refused = err(resume_sleep(w.deps(), RUN_DAY, max_llm_calls=9))
    assert isinstance(refused, SleepRefused) and "--max-llm-calls 9" in refused.reason
    # Flags that agree with the record are accepted.
    monkeypatch.setattr(runner, "body_for", body_for)
    assert ok(resume_sleep(w.deps(), RUN_DAY, deep=False, max_llm_calls=4)).ok


def test_a_run_that_recorded_no_options_resumes_with_the_flags_given(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing of the run committed before it stopped (its branch is at the base).
    w = world()

    def nothing_then_die(phase: Any) -> Any:
        if phase == "preflight":
            return body_for(phase)
        if phase == "dedup-merge":
            return lambda env: (_ for _ in ()).throw(Killed())
        return body_for(phase)

    monkeypatch.setattr(runner, "body_for", nothing_then_die)
    with pytest.raises(Killed):
        run_sleep(w.deps(), runner.RunOptions(deep=True))
    assert ok(read_history(w.git, "refs/heads/main", RUN_DAY)).flags is None

    def seen(phase: Any) -> Any:
        return _spender(1) if phase == "dedup-merge" else body_for(phase)

    monkeypatch.setattr(runner, "body_for", seen)
    report = ok(resume_sleep(w.deps(), RUN_DAY, deep=True, max_llm_calls=0))
    dedup = {r.phase: r for r in report.phases}["dedup-merge"]
    assert dedup.counts == {"granted": 0, "deep": True}


@given(deep=st.booleans(), limit=st.none() | st.integers(min_value=0, max_value=10**6))
def test_run_flags_round_trip_through_their_trailer(deep: bool, limit: int | None) -> None:
    flags = RunFlags(deep, limit)
    assert RunFlags.parse(flags.text()) == flags


@pytest.mark.parametrize("text", [None, "", "{", "[]", '{"deep":1,"max_llm_calls":null}',
                                  '{"deep":true,"max_llm_calls":-1}',
                                  '{"deep":true,"max_llm_calls":true}',
                                  '{"deep":true,"max_llm_calls":"5"}'])
def test_an_unreadable_options_trailer_is_no_record(text: str | None) -> None:
    assert RunFlags.parse(text) is None
