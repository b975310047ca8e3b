"""The ``StatePlane`` contract, run on the sqlite adapter and on its in-memory double,
then what only the file can get wrong: migrations, refusals, several processes, WAL."""

from __future__ import annotations

import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.io import IOResult
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.memory_state import InMemoryState
from memhtml.adapters.state_db import (
    MIGRATIONS,
    MINED_SETS_KEPT,
    SCHEMA_VERSION,
    SqliteStatePlane,
)
from memhtml.contracts.errors import StateError, StateFailure, StateUnusable
from memhtml.contracts.services import (
    AccessCount,
    Counter,
    CounterKey,
    Detection,
    MinedRow,
    StatePlane,
)
from memhtml.domain.thresholds import EDGE_TYPING_DETECTIONS, ENTITY_PROMOTION_DETECTIONS
from tests.child_processes import child_context

T = TypeVar("T")
E = TypeVar("E")

AT = datetime(2026, 3, 1, 12, 30, 15, 123456, tzinfo=timezone(timedelta(hours=2)))
PAIR = CounterKey("edge", "areas/a.html|areas/b.html")
MERGE = CounterKey("entity", "person:laith|person:laith-al-saadoon")
KINDS = ["sqlite", "memory"]


def ok(io: IOResult[T, E]) -> T:
    assert is_successful(io), io
    return unsafe_perform_io(io.unwrap())


def err(io: IOResult[T, E]) -> E:
    assert not is_successful(io), io
    return unsafe_perform_io(io.failure())


def make_state(kind: str, folder: Path) -> StatePlane:
    return SqliteStatePlane(folder / "memhtml" / "state.db") if kind == "sqlite" \
        else InMemoryState()


@pytest.fixture(params=KINDS)
def state(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StatePlane]:
    plane = make_state(request.param, tmp_path)
    yield plane
    if isinstance(plane, SqliteStatePlane):
        plane.close()


# -- corroboration counters -----------------------------------------------------------


def test_the_spec_promotes_at_two_detections() -> None:
    assert ENTITY_PROMOTION_DETECTIONS == EDGE_TYPING_DETECTIONS == 2


def test_a_run_id_is_counted_once(state: StatePlane) -> None:
    assert ok(state.bump(PAIR, "run-1", 2, AT)) == Detection(1, counted=True, promotes=False)
    assert ok(state.bump(PAIR, "run-1", 2, AT)) == Detection(1, counted=False, promotes=False)
    assert ok(state.detections(PAIR)) == 1


def test_promotion_comes_exactly_at_the_threshold_and_once(state: StatePlane) -> None:
    answers = [ok(state.bump(PAIR, f"run-{n}", 2, AT + timedelta(days=n)))
               for n in range(1, 5)]
    assert [(a.detections, a.promotes) for a in answers] == [
        (1, False), (2, True), (3, False), (4, False)]
    assert all(a.counted for a in answers)


def test_a_resumed_promoting_run_is_told_again_and_counts_nothing(state: StatePlane) -> None:
    ok(state.bump(MERGE, "night-1", 2, AT))
    ok(state.bump(MERGE, "night-2", 2, AT))
    ok(state.bump(MERGE, "night-3", 2, AT))
    assert ok(state.bump(MERGE, "night-2", 2, AT)) == Detection(3, counted=False, promotes=True)
    assert ok(state.bump(MERGE, "night-1", 2, AT)) == Detection(3, counted=False, promotes=False)
    assert ok(state.detections(MERGE)) == 3


def test_readings_are_the_counted_run_ids_in_the_order_counted(state: StatePlane) -> None:
    assert ok(state.readings(PAIR)) == ()
    for run in ("base:c", "base:a", "base:c", "base:b"):
        ok(state.bump(PAIR, run, 2, AT))
    ok(state.bump(MERGE, "base:z", 2, AT))
    assert ok(state.readings(PAIR)) == ("base:c", "base:a", "base:b")
    assert ok(state.readings(MERGE)) == ("base:z",)
    assert ok(state.readings(CounterKey("entity", PAIR.key))) == ()


@pytest.mark.parametrize("threshold", [1, 3])
def test_the_threshold_is_the_callers(state: StatePlane, threshold: int) -> None:
    promoted = [ok(state.bump(PAIR, f"r{n}", threshold, AT)).promotes for n in range(1, 5)]
    assert promoted == [n == threshold for n in range(1, 5)]


def test_counters_are_keyed_by_kind_and_key(state: StatePlane) -> None:
    same_key_other_kind = CounterKey("entity", PAIR.key)
    ok(state.bump(PAIR, "run-1", 2, AT))
    assert ok(state.bump(same_key_other_kind, "run-1", 2, AT)).detections == 1
    ok(state.bump(CounterKey("edge", "a|c"), "run-1", 2, AT))
    ok(state.bump(CounterKey("edge", "a|c"), "run-2", 2, AT))
    assert ok(state.detections(CounterKey("edge", "never"))) == 0
    assert ok(state.counters("edge")) == (Counter(PAIR, 1), Counter(CounterKey("edge", "a|c"), 2))
    assert ok(state.counters("entity")) == (Counter(same_key_other_kind, 1),)


def test_threads_sharing_one_plane_lose_no_bump(state: StatePlane) -> None:
    results: list[Detection] = []

    def bumper(worker: int) -> None:
        for n in range(25):
            results.append(ok(state.bump(PAIR, f"w{worker}-{n}", 2, AT)))

    threads = [threading.Thread(target=bumper, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert ok(state.detections(PAIR)) == 100
    assert sorted(r.detections for r in results) == list(range(1, 101))
    assert sum(r.promotes for r in results) == 1


@pytest.mark.parametrize(("call", "why"), [
    (lambda s: s.bump(PAIR, "run", 0, AT), "threshold is at least 1"),
    (lambda s: s.bump(PAIR, "", 2, AT), "non-empty run id"),
    (lambda s: s.bump(CounterKey("edge", ""), "run", 2, AT), "non-empty key"),
    (lambda s: s.bump(PAIR, "run", 2, datetime(2026, 1, 1)), "naive time"),
    (lambda s: s.mark_consolidated(["s"], "", AT), "non-empty run id"),
    (lambda s: s.mark_consolidated(["s"], "run", datetime(2026, 1, 1)), "naive time"),
    (lambda s: s.append_access("a.html", datetime(2026, 1, 1), "read"), "naive time"),
    (lambda s: s.access_counts(datetime(2026, 1, 1)), "naive time"),
])
def test_an_argument_out_of_contract_is_a_typed_failure_that_changes_nothing(
    state: StatePlane, call: Callable[[StatePlane], IOResult[object, StateError]], why: str,
) -> None:
    error = err(call(state))
    assert isinstance(error, StateFailure)
    assert why in error.reason
    assert ok(state.detections(PAIR)) == 0
    assert ok(state.unconsolidated(["s"])) == ("s",)
    assert ok(state.access_counts(AT - timedelta(days=1))) == {}


# -- consolidation watermarks --------------------------------------------------------


def test_marks_answer_what_they_newly_marked_and_keep_the_first(state: StatePlane) -> None:
    assert ok(state.mark_consolidated(["s2", "s1", "s1"], "run-1", AT)) == ("s1", "s2")
    assert ok(state.mark_consolidated(["s3", "s1"], "run-2", AT)) == ("s3",)
    assert ok(state.mark_consolidated([], "run-3", AT)) == ()
    assert ok(state.mark_consolidated(["s1", "s2", "s3"], "run-3", AT)) == ()


def test_unconsolidated_is_the_unmarked_part_sorted_once(state: StatePlane) -> None:
    ok(state.mark_consolidated(["b", "d"], "run-1", AT))
    assert ok(state.unconsolidated(["e", "d", "a", "b", "a", "ü"])) == ("a", "e", "ü")
    assert ok(state.unconsolidated([])) == ()
    assert ok(state.unconsolidated(["b"])) == ()


# -- the access log --------------------------------------------------------------------


def test_access_counts_since_an_instant_by_path(state: StatePlane) -> None:
    for hours, path in [(0, "a.html"), (1, "b.html"), (2, "a.html"), (5, "a.html")]:
        ok(state.append_access(path, AT + timedelta(hours=hours), "read"))
    since = AT + timedelta(hours=1)  # inclusive: b.html's read is at exactly ``since``
    assert ok(state.access_counts(since)) == {
        "a.html": AccessCount("a.html", 2, (AT + timedelta(hours=5)).astimezone(UTC)),
        "b.html": AccessCount("b.html", 1, since.astimezone(UTC)),
    }
    assert ok(state.access_counts(AT + timedelta(hours=6))) == {}
    assert list(ok(state.access_counts(AT))) == ["a.html", "b.html"]


def test_an_instant_comes_back_in_utc_to_the_microsecond(state: StatePlane) -> None:
    ok(state.append_access("a.html", AT, "read"))
    [count] = ok(state.access_counts(AT)).values()
    assert count.last == AT
    assert count.last.utcoffset() == timedelta(0)
    assert ok(state.access_counts(AT + timedelta(microseconds=1))) == {}


# -- relationship-mining's edges ---------------------------------------------------------

SHA = "a" * 40
BASIS = "test-4;cosine=0.85;k=5"
ROWS = (MinedRow("areas/b.html", "areas/c.html", 0.9132457089424133),
        MinedRow("areas/a.html", "areas/b.html", 1.0),
        MinedRow("areas/a.html", "areas/é.html", 0.85))


def test_mined_edges_come_back_as_saved_in_order_to_the_bit(state: StatePlane) -> None:
    assert ok(state.save_mined_edges(SHA, BASIS, ROWS)) is None
    assert ok(state.mined_edges(SHA, BASIS)) == ROWS


def test_an_unknown_commit_or_basis_reads_none_and_an_empty_set_reads_empty(
        state: StatePlane) -> None:
    assert ok(state.mined_edges(SHA, BASIS)) is None
    ok(state.save_mined_edges(SHA, BASIS, ()))
    assert ok(state.mined_edges(SHA, BASIS)) == ()
    assert ok(state.mined_edges("b" * 40, BASIS)) is None
    assert ok(state.mined_edges(SHA, "other-8;cosine=0.85;k=5")) is None


def test_a_second_save_replaces_the_set(state: StatePlane) -> None:
    ok(state.save_mined_edges(SHA, BASIS, ROWS))
    ok(state.save_mined_edges(SHA, BASIS, ROWS[:1]))
    assert ok(state.mined_edges(SHA, BASIS)) == ROWS[:1]


def test_only_the_newest_sets_are_kept(state: StatePlane) -> None:
    commits = [f"{n:040x}" for n in range(MINED_SETS_KEPT + 2)]
    for n, commit in enumerate(commits):
        ok(state.save_mined_edges(commit, BASIS, ROWS[: n % 3]))
        if n == MINED_SETS_KEPT - 1:
            # Saved again when the cache is full, commit 0 becomes the newest set, so
            # the two saves after it drop commits 1 and 2 instead.
            ok(state.save_mined_edges(commits[0], BASIS, ROWS))
    kept = {commit: ok(state.mined_edges(commit, BASIS)) for commit in commits}
    assert [commit for commit, rows in kept.items() if rows is not None] == [
        commits[0], *commits[3:]]
    assert kept[commits[0]] == ROWS
    assert kept[commits[-1]] == ROWS[: (len(commits) - 1) % 3]


@pytest.mark.parametrize(("call", "why"), [
    (lambda s: s.save_mined_edges("", BASIS, ROWS), "non-empty commit"),
    (lambda s: s.save_mined_edges(SHA, "", ROWS), "non-empty basis"),
    (lambda s: s.save_mined_edges(SHA, BASIS, (MinedRow("a", "b", float("nan")),)),
     "non-finite similarity"),
    (lambda s: s.save_mined_edges(SHA, BASIS, (MinedRow("a", "b", float("inf")),)),
     "non-finite similarity"),
    (lambda s: s.mined_edges("", BASIS), "non-empty commit"),
])
def test_mined_edges_out_of_contract_are_a_typed_failure_that_changes_nothing(
    state: StatePlane, call: Callable[[StatePlane], IOResult[object, StateError]], why: str,
) -> None:
    error = err(call(state))
    assert isinstance(error, StateFailure)
    assert why in error.reason
    assert ok(state.mined_edges(SHA, BASIS)) is None


def test_a_broken_plane_fails_mined_edge_calls_as_a_value() -> None:
    broken = InMemoryState(failing=StateUnusable("state.db", "not a database"))
    assert isinstance(err(broken.mined_edges(SHA, BASIS)), StateUnusable)
    assert isinstance(err(broken.save_mined_edges(SHA, BASIS, ROWS)), StateUnusable)


# -- the double agrees with the adapter, call by call ----------------------------------

_RUNS = st.sampled_from(["r1", "r2", "r3"])
_OPS = st.one_of(
    st.tuples(st.just("bump"), st.sampled_from([PAIR, MERGE]), _RUNS, st.integers(1, 3)),
    st.tuples(st.just("mark"), st.lists(st.sampled_from("abcd"), max_size=3), _RUNS),
    st.tuples(st.just("unmarked"), st.lists(st.sampled_from("abcd"), max_size=4)),
    st.tuples(st.just("access"), st.sampled_from(["x.html", "y.html"]), st.integers(0, 5)),
    st.tuples(st.just("counts"), st.integers(0, 6)),
    st.tuples(st.just("counters"), st.sampled_from(["edge", "entity"])),
    st.tuples(st.just("readings"), st.sampled_from([PAIR, MERGE])),
    st.tuples(st.just("save_mined"), st.sampled_from("abcdef"), st.integers(0, 3)),
    st.tuples(st.just("mined"), st.sampled_from("abcdef")),
)


def _apply(plane: StatePlane, op: tuple[object, ...]) -> object:
    match op:
        case ("bump", CounterKey() as key, str(run), int(threshold)):
            return plane.bump(key, run, threshold, AT)
        case ("mark", list(ids), str(run)):
            return plane.mark_consolidated(ids, run, AT)
        case ("unmarked", list(ids)):
            return plane.unconsolidated(ids)
        case ("access", str(path), int(hours)):
            return plane.append_access(path, AT + timedelta(hours=hours), "read")
        case ("counts", int(hours)):
            return plane.access_counts(AT + timedelta(hours=hours)).map(dict)
        case ("counters", "edge" | "entity" as kind):
            return plane.counters(kind)
        case ("readings", CounterKey() as key):
            return plane.readings(key)
        case ("save_mined", str(commit), int(rows)):
            return plane.save_mined_edges(commit, BASIS, ROWS[:rows])
        case ("mined", str(commit)):
            return plane.mined_edges(commit, BASIS)
    raise AssertionError(op)


@given(st.lists(_OPS, max_size=25))
def test_the_double_answers_every_call_as_the_adapter_does(ops: list[tuple[object, ...]]
                                                          ) -> None:
    with tempfile.TemporaryDirectory() as folder:
        adapter = SqliteStatePlane(Path(folder) / "state.db")
        double = InMemoryState()
        for op in ops:
            assert _apply(adapter, op) == _apply(double, op), op
        adapter.close()


# -- the file: migrations, refusals, processes, WAL --------------------------------------


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = "
                                             "'table'")}


def _versions(path: Path) -> list[int]:
    with sqlite3.connect(path) as db:
        return [row[0] for row in db.execute("SELECT version FROM schema_version ORDER BY 1")]


@pytest.mark.parametrize("empty_file", [False, True], ids=["missing", "empty"])
def test_a_missing_or_empty_file_is_migrated_to_the_latest_schema(tmp_path: Path,
                                                                  empty_file: bool) -> None:
    path = tmp_path / "git" / "memhtml" / "state.db"
    if empty_file:
        path.parent.mkdir(parents=True)
        path.touch()
    plane = SqliteStatePlane(path)
    assert not path.exists() or path.stat().st_size == 0  # nothing until the first call
    ok(plane.bump(PAIR, "run-1", 2, AT))
    plane.close()
    assert _versions(path) == list(range(1, SCHEMA_VERSION + 1))
    assert {"schema_version", "corroboration", "corroboration_runs", "consolidations",
            "accesses", "mined_sets", "mined_edges"} <= _tables(path)
    assert len(MIGRATIONS) == SCHEMA_VERSION


def test_a_version_1_file_is_migrated_keeping_its_state(tmp_path: Path) -> None:
    # The file as the first schema left it: version 1's tables and rows, nothing newer.
    path = tmp_path / "state.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY)")
        for statement in MIGRATIONS[0]:
            db.execute(statement)
        db.execute("INSERT INTO schema_version (version) VALUES (1)")
        db.execute("INSERT INTO corroboration VALUES ('entity', ?, 1, 0, 0)", (MERGE.key,))
        db.execute("INSERT INTO corroboration_runs VALUES ('entity', ?, 'night-1', 1, 0)",
                   (MERGE.key,))
        db.execute("INSERT INTO consolidations VALUES ('s1', 'night-1', 0)")
        db.execute("INSERT INTO accesses VALUES ('a.html', 0, 'read')")
    db.close()
    plane = SqliteStatePlane(path)
    assert ok(plane.mined_edges(SHA, BASIS)) is None
    assert ok(plane.bump(MERGE, "night-2", 2, AT)) == Detection(2, counted=True, promotes=True)
    assert ok(plane.unconsolidated(["s1", "s2"])) == ("s2",)
    assert ok(plane.access_counts(datetime(1970, 1, 1, tzinfo=UTC)))["a.html"].count == 1
    ok(plane.save_mined_edges(SHA, BASIS, ROWS))
    plane.close()
    assert _versions(path) == [1, 2, 3] == list(range(1, SCHEMA_VERSION + 1))
    reopened = SqliteStatePlane(path)
    assert ok(reopened.mined_edges(SHA, BASIS)) == ROWS
    reopened.close()


def test_pruned_sets_leave_no_rows_behind(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    plane = SqliteStatePlane(path)
    for n in range(3 * MINED_SETS_KEPT):
        ok(plane.save_mined_edges(f"{n:040x}", BASIS, ROWS))
        ok(plane.save_mined_edges(f"{n:040x}", BASIS, ROWS))  # replaced, not added to
    plane.close()
    with sqlite3.connect(path) as db:
        sets = db.execute("SELECT COUNT(*) FROM mined_sets").fetchone()[0]
        edges = db.execute("SELECT COUNT(*) FROM mined_edges").fetchone()[0]
    db.close()
    assert (sets, edges) == (MINED_SETS_KEPT, MINED_SETS_KEPT * len(ROWS))


def test_the_file_is_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    plane = SqliteStatePlane(path)
    ok(plane.append_access("a.html", AT, "read"))
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    plane.close()


def test_what_one_plane_wrote_another_reads(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    first = SqliteStatePlane(path)
    ok(first.bump(MERGE, "night-1", 2, AT))
    ok(first.mark_consolidated(["s1"], "night-1", AT))
    ok(first.append_access("a.html", AT, "read"))
    first.close()
    second = SqliteStatePlane(path)
    assert ok(second.bump(MERGE, "night-2", 2, AT)) == Detection(2, counted=True, promotes=True)
    assert ok(second.unconsolidated(["s1", "s2"])) == ("s2",)
    assert ok(second.access_counts(AT))["a.html"].count == 1
    assert _versions(path) == list(range(1, SCHEMA_VERSION + 1))
    second.close()


def _assert_refused(path: Path, before: bytes) -> None:
    plane = SqliteStatePlane(path)
    for call in (lambda: plane.detections(PAIR), lambda: plane.append_access("a", AT, "read")):
        error = err(call())
        assert isinstance(error, StateUnusable), error
        assert error.path == str(path)
        assert str(path) in error.reason
    plane.close()
    assert path.read_bytes() == before  # refused, never recreated


def test_a_newer_schema_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    plane = SqliteStatePlane(path)
    ok(plane.bump(PAIR, "run-1", 2, AT))
    plane.close()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION + 1,))
    db.close()
    _assert_refused(path, path.read_bytes())
    error = err(SqliteStatePlane(path).detections(PAIR))
    assert f"version {SCHEMA_VERSION + 1}" in error.reason


def _a_database(path: Path) -> bytes:
    plane = SqliteStatePlane(path)
    for n in range(200):
        ok(plane.append_access(f"areas/{n:04d}.html", AT, "read"))
    plane.close()  # the last connection checkpoints the WAL into the file
    return path.read_bytes()


@pytest.mark.parametrize("damage", ["garbage", "header-only", "half-header", "foreign"])
def test_a_file_that_is_not_a_state_database_is_refused_naming_it(tmp_path: Path,
                                                                  damage: str) -> None:
    path = tmp_path / "state.db"
    if damage == "garbage":
        path.write_bytes(b"this is not a sqlite database, whatever its name says\n" * 50)
    elif damage == "foreign":
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE notes (body TEXT)")
        db.close()
    else:
        whole = _a_database(path)
        path.write_bytes(whole[:100] if damage == "header-only" else whole[:50])
    _assert_refused(path, path.read_bytes())


def test_a_file_cut_short_is_refused_not_reused(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    whole = _a_database(path)
    page = int.from_bytes(whole[16:18], "big")
    path.write_bytes(whole[: page * 2])  # the schema survives, the tables' pages do not
    plane = SqliteStatePlane(path)
    error = err(plane.access_counts(AT))
    assert isinstance(error, StateUnusable), error
    assert str(path) in error.reason
    plane.close()


def test_a_lock_held_past_the_busy_timeout_is_a_failure_not_a_refusal(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    ok(SqliteStatePlane(path).detections(PAIR))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        error = err(SqliteStatePlane(path, busy_timeout=0.05).bump(PAIR, "run-1", 2, AT))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert isinstance(error, StateFailure)
    assert error.operation == "bump"
    assert "locked" in error.reason


def _bump_in_process(path: str, worker: int, runs: int, start: threading.Barrier
                     ) -> tuple[int, int]:
    """One process's bumps: its own run ids and one run id every process shares.
    Returns (bumps it counted, promotions it was told of)."""
    start.wait()
    plane = SqliteStatePlane(Path(path))
    answers = [ok(plane.bump(MERGE, run, 2, AT))
               for run in [*(f"p{worker}-{n}" for n in range(runs)), "shared"]]
    plane.close()
    return sum(a.counted for a in answers), sum(a.promotes and a.counted for a in answers)


def test_processes_bumping_one_counter_at_once_lose_no_update(tmp_path: Path) -> None:
    # A fresh file, so the processes also race to create and migrate it.
    path = tmp_path / "memhtml" / "state.db"
    workers, runs = 4, 30
    context = child_context()
    with context.Manager() as manager:
        start = manager.Barrier(workers)
        with context.Pool(workers) as pool:
            answers = pool.starmap(_bump_in_process,
                                   [(str(path), w, runs, start) for w in range(workers)])
    plane = SqliteStatePlane(path)
    assert ok(plane.detections(MERGE)) == workers * runs + 1
    assert sum(counted for counted, _ in answers) == workers * runs + 1  # "shared" once
    assert sum(promoted for _, promoted in answers) == 1
    assert _versions(path) == list(range(1, SCHEMA_VERSION + 1))
    plane.close()
