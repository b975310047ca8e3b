"""confidence-decay on a real repository: who is reinforced, what is rewritten, and
that the nightly steps reach the floor exactly."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from returns.io import IOResult
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io
from tests.unit.sleep.sleep_support import AUTHOR, ok

from memhtml.adapters.clock import ManualClock
from memhtml.adapters.git import PygitService
from memhtml.adapters.state_db import SqliteStatePlane
from memhtml.contracts.record import Link
from memhtml.contracts.services import PathChange, StatePlane
from memhtml.domain.decay import CONFIDENCE_FLOOR
from memhtml.format import read_meta
from memhtml.head import HeadVersion, load_head
from memhtml.sleep.phase import PhaseEnv, PhaseFault, PhaseResult, TaskBudget
from memhtml.sleep.phases.confidence_decay import confidence_decay, last_merged_run
from memhtml.store import Store, StoreDeps, WriteInput, init_store, write

WRITTEN = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
LAST_RUN_AT = datetime(2026, 11, 1, 3, 0, 0, tzinfo=UTC)
RUN_AT = datetime(2026, 11, 29, 3, 15, 7, tzinfo=UTC)


@dataclass
class Repo:
    git: PygitService
    clock: ManualClock
    store: Store
    state: StatePlane

    def main(self) -> str:
        return ok(self.git.resolve("main"))

    def write(self, name: str, confidence: float | None, **more: object) -> str:
        data = WriteInput(title=name.title(), claim=f"The {name} claim holds.",
                          path=f"areas/notes/{name}.html", confidence=confidence,
                          **more)  # type: ignore[arg-type]
        landed = ok(write(self.store, data))
        assert landed.primary is not None
        return landed.primary

    def version(self, sha: str | None = None) -> HeadVersion:
        return ok(load_head(self.git, sha or self.main()))

    def env(self, sha: str | None = None, state: StatePlane | None = None) -> PhaseEnv:
        at = sha or self.main()
        version = self.version(at)
        return PhaseEnv(phase="confidence-decay", run_id="2026-11-29", stamp=RUN_AT, base=at,
                        base_version=version, version=version, git=self.git,
                        state=state or self.state, budget=TaskBudget(), dry_run=False)

    def merged_run(self, run_id: str, stamp: datetime) -> str:
        """A run's report landed on main, as a merge leaves it (trailers included)."""
        message = (f"memhtml sleep: report ({run_id})\n\nMemhtml-Op: sleep\n"
                   f"Memhtml-Run: {run_id}\nMemhtml-Phase: report\n"
                   f"Memhtml-Stamp: {stamp.strftime('%Y-%m-%dT%H:%M:%SZ')}\n")
        change = PathChange(f".memhtml/sleep/{run_id}.html", b"<!doctype html><p>report</p>\n")
        return ok(self.git.commit("refs/heads/main", self.main(), [change], message, AUTHOR,
                                  stamp + timedelta(hours=5)))

    def land(self, result: PhaseResult) -> str:
        (commit,) = result.commits
        return ok(self.git.commit("refs/heads/main", self.main(), list(commit.changes),
                                  commit.subject, AUTHOR, RUN_AT))


def repo(tmp_path: Path) -> Repo:
    git = ok(PygitService.init(tmp_path / "store", bare=True))
    clock = ManualClock(WRITTEN)
    store = Store(StoreDeps(git=git, clock=clock, author=AUTHOR))
    ok(init_store(store.deps))
    return Repo(git, clock, store, SqliteStatePlane(tmp_path / "state.db"))


def run(env: PhaseEnv) -> PhaseResult:
    return ok(confidence_decay(env))


def stored(r: Repo, sha: str, path: str) -> str | None:
    record = r.version(sha).get(path)
    assert record is not None
    return read_meta(record.html, "memhtml-confidence")


def test_with_no_merged_run_every_stated_confidence_takes_one_step(tmp_path: Path) -> None:
    r = repo(tmp_path)
    high = r.write("high", 0.9)
    low = r.write("low", 0.21)
    floor = r.write("floor", 0.2)
    under = r.write("under", 0.05)
    silent = r.write("silent", None)
    task = r.write("task", 0.9, memory_type="task")
    base = r.main()
    result = run(r.env())
    assert dict(result.counts) == {"scanned": 5, "no_confidence": 1, "reinforced": 0,
                                   "at_floor": 2, "decayed": 2, "last_run": None}
    (commit,) = result.commits
    assert [c.path for c in commit.changes] == [high, low]
    tip = r.land(result)
    assert (stored(r, tip, high), stored(r, tip, low)) == ("0.83", "0.20")
    assert r.version(tip).get(high).confidence == 0.83  # type: ignore[union-attr]
    # The task, the files at or under the floor and the silent one are untouched.
    assert ok(r.git.changed_paths(base, tip)) == (high, low)
    assert {floor, under, silent, task}.isdisjoint(ok(r.git.changed_paths(base, tip)))


def test_only_the_confidence_line_changes(tmp_path: Path) -> None:
    r = repo(tmp_path)
    path = r.write("high", 0.9)
    before = r.version().get(path)
    assert before is not None
    (commit,) = run(r.env()).commits
    (change,) = commit.changes
    assert change.data is not None
    after = change.data.decode()
    removed = sorted(set(before.html.splitlines()) - set(after.splitlines()))
    added = sorted(set(after.splitlines()) - set(before.html.splitlines()))
    assert removed == ['<meta name="memhtml-confidence" content="0.90">']
    assert added == ['<meta name="memhtml-confidence" content="0.83">']
    # memhtml-updated is not restamped: retention reads recency from it.
    assert read_meta(after, "memhtml-updated") == read_meta(before.html, "memhtml-updated")


def test_an_archived_file_is_not_rewritten(tmp_path: Path) -> None:
    r = repo(tmp_path)
    path = r.write("high", 0.9)
    record = r.version().get(path)
    assert record is not None
    ok(r.git.commit("refs/heads/main", r.main(), [
        PathChange(path, None), PathChange(f"archive/2026/{path}", record.html.encode())],
        "archive by hand", AUTHOR, WRITTEN))
    result = run(r.env())
    assert (result.counts["scanned"], result.commits) == (0, ())


def test_reads_and_new_supports_since_the_last_run_reinforce(tmp_path: Path) -> None:
    r = repo(tmp_path)
    read_after = r.write("read-after", 0.9)
    read_before = r.write("read-before", 0.9)
    supported = r.write("supported", 0.9)
    old_support = r.write("old-support", 0.9)
    r.write("old-source", 0.9, links=(Link("supports", f"/{old_support}"),))
    untouched = r.write("untouched", 0.9)
    r.merged_run("2026-11-01", LAST_RUN_AT)
    # Since the run: one read, a new memory supporting one file, and an edit of the
    # old source that leaves its old supports link as it was.
    ok(r.state.append_access(read_after, LAST_RUN_AT + timedelta(days=3), "read"))
    ok(r.state.append_access(read_before, LAST_RUN_AT - timedelta(days=3), "read"))
    r.clock.advance((LAST_RUN_AT - WRITTEN).total_seconds() + 3600)
    r.write("new-source", 0.9, links=(Link("supports", f"/{supported}"),))
    ok(r.git.commit("refs/heads/main", r.main(), [PathChange(
        "areas/notes/old-source.html",
        (r.version().get("areas/notes/old-source.html").html  # type: ignore[union-attr]
         .replace("The old-source claim holds.", "The old-source claim still holds.")).encode(),
    )], "edit", AUTHOR, LAST_RUN_AT + timedelta(days=4)))

    result = run(r.env())
    assert result.counts["last_run"] == "2026-11-01"
    assert result.counts["reinforced"] == 2
    (commit,) = result.commits
    rewritten = {c.path for c in commit.changes}
    assert read_after not in rewritten and supported not in rewritten
    assert {read_before, old_support, untouched} <= rewritten


def test_the_window_starts_at_the_newest_merged_run(tmp_path: Path) -> None:
    r = repo(tmp_path)
    r.write("note", 0.9)
    first = r.merged_run("2026-10-01", datetime(2026, 10, 1, 3, tzinfo=UTC))
    second = r.merged_run("2026-10-01-2", datetime(2026, 10, 1, 9, tzinfo=UTC))
    found = ok(last_merged_run(r.git, r.main(), RUN_AT, AUTHOR)).last
    assert found is not None
    assert (found.run_id, found.commit, found.stamp) == (
        "2026-10-01-2", second, datetime(2026, 10, 1, 9, tzinfo=UTC))
    assert first != second


def test_a_forged_or_future_run_does_not_move_the_window(tmp_path: Path) -> None:
    r = repo(tmp_path)
    read = r.write("read", 0.9)
    r.write("unread", 0.9)
    r.merged_run("2026-11-01", LAST_RUN_AT)
    ok(r.state.append_access(read, LAST_RUN_AT + timedelta(days=2), "read"))
    # A report file by a plain commit, and a run commit stamped in 2099: neither is the
    # last run, so the read after 2026-11-01 still reinforces.
    ok(r.git.commit("refs/heads/main", r.main(), [PathChange(
        ".memhtml/sleep/2099-01-02.html", b"<p>forged</p>")], "a file", AUTHOR, RUN_AT))
    r.merged_run("2099-01-01", datetime(2099, 1, 1, tzinfo=UTC))
    found = ok(last_merged_run(r.git, r.main(), RUN_AT, AUTHOR))
    assert found.last is not None and found.last.run_id == "2026-11-01"
    assert len(found.notes) == 2 and any("2099-01-02.html" in n for n in found.notes)
    result = run(r.env())
    assert result.counts["last_run"] == "2026-11-01"
    assert result.counts["reinforced"] == 1
    assert any("future" in w for w in result.warnings), result.warnings


def test_nightly_steps_reach_the_floor_exactly_and_then_stop(tmp_path: Path) -> None:
    r = repo(tmp_path)
    path = r.write("note", 0.9)
    seen = []
    for _ in range(40):
        result = run(r.env())
        if not result.commits:
            break
        tip = r.land(result)
        seen.append(stored(r, tip, path))
    assert len(seen) == 25
    assert seen[-1] == "0.20"
    assert r.version().get(path).confidence == CONFIDENCE_FLOOR  # type: ignore[union-attr]
    assert run(r.env()).counts["at_floor"] == 1


def test_an_unreadable_access_log_fails_the_phase(tmp_path: Path) -> None:
    r = repo(tmp_path)
    r.write("note", 0.9)
    r.merged_run("2026-11-01", LAST_RUN_AT)
    (tmp_path / "not-a-db").mkdir()
    failed: IOResult[PhaseResult, PhaseFault] = confidence_decay(
        r.env(state=SqliteStatePlane(tmp_path / "not-a-db")))
    assert not is_successful(failed)
    fault = unsafe_perform_io(failed.failure())
    assert "access log cannot be read" in fault.reason


@pytest.mark.parametrize("confidence", [0.2, 0.19])
def test_nothing_to_lower_makes_no_commit(tmp_path: Path, confidence: float) -> None:
    r = repo(tmp_path)
    r.write("note", confidence)
    result = run(r.env())
    assert result.commits == ()
    assert result.counts["at_floor"] == 1
