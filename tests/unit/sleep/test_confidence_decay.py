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

    def env(self, sha: str | None = None, state: StatePlane | None = None,
            stamp: datetime = RUN_AT) -> PhaseEnv:
        at = sha or self.main()
        version = self.version(at)
        return PhaseEnv(phase="confidence-decay", run_id="2026-11-29", stamp=stamp, base=at,
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

    def land(self, result: PhaseResult, at: datetime = RUN_AT) -> str:
        (commit,) = result.commits
        return ok(self.git.commit("refs/heads/main", self.main(), list(commit.changes),
                                  commit.subject, AUTHOR, at))

    def night(self, run_id: str, stamp: datetime) -> PhaseResult:
        """One run at ``stamp`` as a merge leaves it on main: its decay, then its report."""
        result = run(self.env(stamp=stamp))
        if result.commits:
            self.land(result, stamp)
        self.merged_run(run_id, stamp)
        return result


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


DAY = timedelta(days=1)


def test_with_no_merged_run_each_file_owes_the_whole_days_since_it_was_written(
        tmp_path: Path) -> None:
    r = repo(tmp_path)
    high = r.write("high", 0.9)
    low = r.write("low", 0.21)
    floor = r.write("floor", 0.2)
    under = r.write("under", 0.05)
    silent = r.write("silent", None)
    task = r.write("task", 0.9, memory_type="task")
    base = r.main()
    first = WRITTEN + DAY + timedelta(hours=1)
    result = run(r.env(stamp=first))
    assert dict(result.counts) == {"scanned": 5, "no_confidence": 1, "reinforced": 0,
                                   "at_floor": 2, "not_due": 0, "decayed": 2, "steps": 2,
                                   "from_arrival": 0, "last_run": None}
    (commit,) = result.commits
    assert [c.path for c in commit.changes] == [high, low]
    tip = r.land(result)
    assert (stored(r, tip, high), stored(r, tip, low)) == ("0.83", "0.20")
    assert r.version(tip).get(high).confidence == 0.83  # type: ignore[union-attr]
    # The task, the files at or under the floor and the silent one are untouched.
    assert ok(r.git.changed_paths(base, tip)) == (high, low)
    assert {floor, under, silent, task}.isdisjoint(ok(r.git.changed_paths(base, tip)))
    # Once that run is merged, two more days owe two steps, from the stored value.
    r.merged_run("2026-05-02", first)
    again = run(r.env(stamp=WRITTEN + 3 * DAY + timedelta(hours=1)))
    assert [c.path for c in again.commits[0].changes] == [high]
    assert (again.counts["steps"], again.counts["last_run"]) == (2, "2026-05-02")
    assert stored(r, r.land(again), high) == "0.70"


def test_a_memory_written_today_owes_nothing(tmp_path: Path) -> None:
    """Night one on a fresh store: no whole day has passed, so nothing is rewritten
    (counting runs decayed it a step the minute after it was written)."""
    r = repo(tmp_path)
    r.write("fresh", 0.9)
    r.write("other", 1.0)
    result = run(r.env(stamp=WRITTEN + DAY - timedelta(seconds=1)))
    assert result.commits == ()
    assert (result.counts["not_due"], result.counts["decayed"]) == (2, 0)


def test_a_whole_years_silence_reaches_the_floor_in_one_run(tmp_path: Path) -> None:
    r = repo(tmp_path)
    path = r.write("old", 0.9)
    result = run(r.env(stamp=WRITTEN + 365 * DAY))
    tip = r.land(result)
    assert stored(r, tip, path) == "0.20"
    assert result.counts["steps"] == 365


def test_only_the_confidence_line_changes(tmp_path: Path) -> None:
    r = repo(tmp_path)
    path = r.write("high", 0.9)
    before = r.version().get(path)
    assert before is not None
    (commit,) = run(r.env(stamp=WRITTEN + DAY)).commits
    (change,) = commit.changes
    assert change.data is not None
    after = change.data.decode()
    removed = sorted(set(before.html.splitlines()) - set(after.splitlines()))
    added = sorted(set(after.splitlines()) - set(before.html.splitlines()))
    assert removed == ['<meta name="memhtml-confidence" content="0.90">']
    assert added == ['<meta name="memhtml-confidence" content="0.83">']
    # memhtml-updated is not restamped: retention reads recency from it.
    assert read_meta(after, "memhtml-updated") == read_meta(before.html, "memhtml-updated")


def test_three_runs_in_a_day_decay_as_much_as_one(tmp_path: Path) -> None:
    """The same files, one store curated three times on day 6 and one curated once
    at its end: the same commits' worth of decay, the very same stored values."""
    values = {"a": 0.9, "b": 0.57, "c": 0.21, "d": 1.0}
    stores = [repo(tmp_path / "thrice"), repo(tmp_path / "once")]
    for r in stores:
        for name, confidence in values.items():
            r.write(name, confidence)
        r.night("2026-05-03", WRITTEN + 2 * DAY + timedelta(hours=3))
    thrice, once = stores
    # A run id names its stamp's day (the history read holds it to that): 13:00 and
    # 21:00 on May 6, 11:00 on May 7.
    for run_id, hour in (("2026-05-06", 1), ("2026-05-06-2", 9), ("2026-05-07", 23)):
        thrice.night(run_id, WRITTEN + 5 * DAY + timedelta(hours=hour))
    once.night("2026-05-07", WRITTEN + 5 * DAY + timedelta(hours=23))
    for name in values:
        path = f"areas/notes/{name}.html"
        assert stored(thrice, thrice.main(), path) == stored(once, once.main(), path)
    # Five whole days since it was written: 0.90, 0.83, 0.76, 0.70, 0.65, 0.60.
    assert stored(once, once.main(), "areas/notes/a.html") == "0.60"


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

    # A day after the last read: the read file owes nothing, the supported one is
    # forgiven, the rest owe the days since the last run.
    stamp = LAST_RUN_AT + timedelta(days=3, hours=12)
    result = run(r.env(stamp=stamp))
    assert result.counts["last_run"] == "2026-11-01"
    assert result.counts["reinforced"] == 2
    (commit,) = result.commits
    rewritten = {c.path for c in commit.changes}
    assert read_after not in rewritten and supported not in rewritten
    assert {read_before, old_support, untouched} <= rewritten
    # Four whole days of its grid (noon to noon) ended since the run: 0.90 to 0.65.
    assert stored(r, r.land(result), untouched) == "0.65"
    # Days later the read file owes the whole days since its read, not since the run.
    later = run(r.env(stamp=LAST_RUN_AT + timedelta(days=5, hours=1)))
    assert read_after in {c.path for c in later.commits[0].changes}
    assert stored(r, r.land(later), read_after) == "0.76"


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
    # last run, so the days since 2026-11-01 (since the read, for the file read) are
    # owed; a window started in 2099 would owe none.
    ok(r.git.commit("refs/heads/main", r.main(), [PathChange(
        ".memhtml/sleep/2099-01-02.html", b"<p>forged</p>")], "a file", AUTHOR, RUN_AT))
    r.merged_run("2099-01-01", datetime(2099, 1, 1, tzinfo=UTC))
    found = ok(last_merged_run(r.git, r.main(), RUN_AT, AUTHOR))
    assert found.last is not None and found.last.run_id == "2026-11-01"
    assert len(found.notes) == 2 and any("2099-01-02.html" in n for n in found.notes)
    result = run(r.env())
    assert result.counts["last_run"] == "2026-11-01"
    assert result.counts["decayed"] == 2 and result.counts["not_due"] == 0
    assert any("future" in w for w in result.warnings), result.warnings


def test_nightly_steps_reach_the_floor_exactly_and_then_stop(tmp_path: Path) -> None:
    r = repo(tmp_path)
    path = r.write("note", 0.9)
    seen = []
    for day in range(1, 41):
        at = WRITTEN + day * DAY + timedelta(hours=3)
        result = r.night(at.strftime("%Y-%m-%d"), at)
        if not result.commits:
            break
        seen.append(stored(r, r.main(), path))
    assert len(seen) == 25
    assert seen[-1] == "0.20"
    assert r.version().get(path).confidence == CONFIDENCE_FLOOR  # type: ignore[union-attr]
    assert run(r.env(stamp=WRITTEN + 60 * DAY)).counts["at_floor"] == 1


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
