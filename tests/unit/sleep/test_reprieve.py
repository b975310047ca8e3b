"""reprieve on a real store: a lapsed memory that still matters gets fourteen more days
and a counted reprieve, any other is archived, all in one commit; tasks and memories
still valid are left alone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.unit.sleep.sleep_support import (
    RUN_DAY,
    WRITTEN,
    World,
    blank_world,
    ok,
    put_memory,
)

from memhtml.contracts.services import AccessCount, PathChange
from memhtml.format import set_meta
from memhtml.sleep.phase import PhaseEnv, PhaseResult, TaskBudget
from memhtml.sleep.phases.reprieve import (
    OUTCOME_SCORE,
    extended,
    is_expired,
    reprieve,
    reprieve_input,
)

STAMP = datetime(2026, 11, 29, 3, 15, 7, tzinfo=UTC)
NOW = "2026-11-29T03:15:07Z"
WANTED = "areas/facts/wanted.html"
IDLE = "areas/facts/idle.html"
SPENT = "areas/facts/spent.html"
TODAY = "areas/facts/today.html"
LATER = "areas/facts/later.html"
TASK = "areas/tasks/lapsed.html"




def corpus() -> World:
    """Lapsed: one important and read an hour ago, one nobody reads, one as wanted but
    out of reprieves. Not lapsed: a date bound of today, a later one. A lapsed task."""
    w = blank_world()
    put_memory(w, WANTED, 1, importance=10, valid_until="2026-11-20")
    put_memory(w, IDLE, 2, valid_until="2026-11-28T00:00:00Z")
    put_memory(w, SPENT, 3, importance=10, valid_until="2026-11-01")
    put_memory(w, TODAY, 4, valid_until="2026-11-29")
    put_memory(w, LATER, 5, valid_until="2027-01-01")
    put_memory(w, TASK, 6, memory_type="task", importance=10, valid_until="2026-11-01")
    spent = (w.blob(w.main(), SPENT) or b"").decode()
    w.raw([PathChange(SPENT, set_meta(spent, "memhtml-reprieves", "3").encode())])
    w.clock.advance((STAMP - WRITTEN).total_seconds())
    for path in (WANTED, SPENT):
        for _ in range(3):
            ok(w.state.append_access(path, STAMP - timedelta(hours=1), "read"))
    return w


def run(w: World, stamp: datetime = STAMP) -> PhaseResult:
    version = ok(w.store.head())
    return ok(reprieve(PhaseEnv(
        phase="reprieve", run_id=RUN_DAY, stamp=stamp, base=w.main(), base_version=version,
        version=version, git=w.git, state=w.state, budget=TaskBudget(), dry_run=False)))


def test_expiry_reads_a_date_as_its_whole_day() -> None:
    assert is_expired("2026-11-28", NOW)
    assert not is_expired("2026-11-29", NOW)
    assert is_expired("2026-11-29T03:15:06Z", NOW)
    assert not is_expired("2026-11-29T03:15:07Z", NOW)


def test_an_extension_keeps_the_form_of_the_bound() -> None:
    assert extended("2026-11-20") == "2026-12-04"
    assert extended("2026-11-28T00:00:00Z") == "2026-12-12T00:00:00Z"
    assert extended("soon") is None


def test_the_score_reads_importance_use_and_recency_and_no_outcome() -> None:
    w = corpus()
    record = ok(w.store.head()).get(IDLE)
    assert record is not None
    never = reprieve_input(record, None, STAMP)
    assert (never.importance, never.access_count, never.hours_since_access) == (
        5.0, 0.0, float("inf"))
    assert never.outcome_score == OUTCOME_SCORE == 0.0
    read = reprieve_input(record, AccessCount(IDLE, 3, STAMP - timedelta(hours=2)), STAMP)
    assert (read.access_count, read.hours_since_access) == (3.0, 2.0)


def test_each_lapsed_memory_is_reprieved_or_archived_in_one_commit() -> None:
    w = corpus()
    result = run(w)
    assert dict(result.counts) == {"expired": 3, "reprieved": 1, "archived": 2, "refused": 0}
    (commit,) = result.commits
    assert {c.path for c in commit.changes} == {
        WANTED, IDLE, SPENT, f"archive/2026/{IDLE}", f"archive/2026/{SPENT}"}
    w.raw(list(commit.changes))
    after = ok(w.store.head())
    wanted = after.get(WANTED)
    assert wanted is not None
    assert (wanted.valid_until, wanted.reprieves, wanted.updated_at) == ("2026-12-04", 1, NOW)
    for path in (IDLE, SPENT):
        archived = after.get(f"archive/2026/{path}")
        assert archived is not None and archived.status == "archived"
    for path in (TODAY, LATER, TASK):
        assert after.get(path) is not None


def test_a_reprieved_memory_lapsing_again_spends_another_reprieve() -> None:
    # Nov 20 + 14 days is Dec 4: a run on Dec 10 finds it lapsed again and, still
    # wanted, gives it a second reprieve from the bound it had (Dec 18).
    w = corpus()
    w.raw(list(run(w).commits[0].changes))
    later = STAMP + timedelta(days=11)
    again = run(w, later)
    assert again.counts["reprieved"] == 1
    w.raw(list(again.commits[0].changes))
    wanted = ok(w.store.head()).get(WANTED)
    assert wanted is not None
    assert (wanted.valid_until, wanted.reprieves) == ("2026-12-18", 2)


def test_a_taken_archive_path_is_refused_and_counted() -> None:
    w = corpus()
    w.raw([PathChange(f"archive/2026/{IDLE}", b"<!doctype html><p>not a memory</p>\n")])
    result = run(w)
    assert (result.counts["archived"], result.counts["refused"]) == (1, 1)
    assert result.warnings[0].startswith(f"{IDLE} not archived: ")


def test_nothing_lapsed_commits_nothing() -> None:
    w = blank_world()
    put_memory(w, LATER, 5, valid_until="2027-01-01")
    w.clock.advance(60)
    result = run(w)
    assert result.commits == ()
    assert dict(result.counts) == {"expired": 0, "reprieved": 0, "archived": 0, "refused": 0}
