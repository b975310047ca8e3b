"""``StatePlane`` on sqlite: ``<git-dir>/memhtml/state.db``, this clone's sleep state.

The file holds what no commit can give back (corroboration counts, consolidation
watermarks, the access log), so it is treated as data, never as a cache: a file this
code cannot read (not sqlite, or a schema from a newer memhtml) is refused with the
file named, and left exactly as it is. It also keeps relationship-mining's edges for the
newest few commits, the one part that is a cache: losing it costs a recomputation.

- Numbered migrations: ``MIGRATIONS[n - 1]`` takes the schema from version ``n - 1``
  to ``n``, recorded one row per version in ``schema_version``; they run in one
  ``BEGIN IMMEDIATE`` transaction, so two processes opening a new file at once apply
  them once.
- WAL, a busy timeout, and ``BEGIN IMMEDIATE`` for every write: several processes
  (the CLI, an MCP server, a sleep run) share the file, a writer takes the write lock
  before it reads what it will change, and none loses another's update.
- Opened on first use, and sqlite3 imported then: a command that never touches the
  state (status, search, a write) pays for neither.
"""

from __future__ import annotations

import functools
import math
import os
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Concatenate, Final, ParamSpec, Protocol, TypeVar

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import StateError, StateFailure, StateUnusable
from memhtml.contracts.local_files import not_regular
from memhtml.contracts.services import (
    AccessCount,
    AccessKind,
    Counter,
    CounterKey,
    CounterKind,
    Detection,
    MinedRow,
    QuietRun,
)

if TYPE_CHECKING:
    import sqlite3

_T = TypeVar("_T")
_P = ParamSpec("_P")

MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (
    # 1: corroboration counters (one row per counter, one per run that bumped it, so
    # a run is counted once), consolidation watermarks, the access log.
    (
        """CREATE TABLE corroboration (
               kind TEXT NOT NULL,
               key TEXT NOT NULL,
               detections INTEGER NOT NULL CHECK (detections >= 1),
               first_at INTEGER NOT NULL,
               last_at INTEGER NOT NULL,
               PRIMARY KEY (kind, key)
           ) WITHOUT ROWID""",
        """CREATE TABLE corroboration_runs (
               kind TEXT NOT NULL,
               key TEXT NOT NULL,
               run_id TEXT NOT NULL,
               detection INTEGER NOT NULL CHECK (detection >= 1),
               at INTEGER NOT NULL,
               PRIMARY KEY (kind, key, run_id)
           ) WITHOUT ROWID""",
        """CREATE TABLE consolidations (
               session_id TEXT PRIMARY KEY,
               run_id TEXT NOT NULL,
               at INTEGER NOT NULL
           ) WITHOUT ROWID""",
        """CREATE TABLE accesses (
               path TEXT NOT NULL,
               at INTEGER NOT NULL,
               kind TEXT NOT NULL
           )""",
        "CREATE INDEX accesses_by_kind_time ON accesses (kind, at)",
    ),
    # 2: relationship-mining's edges, one set per (commit, basis). AUTOINCREMENT so an
    # id is never reused: the largest ids are the newest sets, which pruning keeps.
    (
        """CREATE TABLE mined_sets (
               id INTEGER PRIMARY KEY AUTOINCREMENT,
               commit_sha TEXT NOT NULL,
               basis TEXT NOT NULL,
               UNIQUE (commit_sha, basis)
           )""",
        """CREATE TABLE mined_edges (
               set_id INTEGER NOT NULL,
               ordinal INTEGER NOT NULL,
               source TEXT NOT NULL,
               target TEXT NOT NULL,
               similarity REAL NOT NULL,
               PRIMARY KEY (set_id, ordinal)
           ) WITHOUT ROWID""",
    ),
    # 3: the sleep runs that found nothing to do (no commit, no branch: recorded only
    # here), one per run id and base.
    (
        """CREATE TABLE quiet_runs (
               run_id TEXT NOT NULL,
               base TEXT NOT NULL,
               stamp INTEGER NOT NULL,
               phases TEXT NOT NULL,
               PRIMARY KEY (run_id, base)
           ) WITHOUT ROWID""",
    ),
)
"""Ordered; append a new tuple for a change, never edit a released one."""
SCHEMA_VERSION: Final = len(MIGRATIONS)

MINED_SETS_KEPT: Final = 4
"""Sets of mined edges kept, newest saved first. A run reads back only the set of the
commit it is at (a resume, a second invocation), so a few cover every live run and the
table stays small however many nights go by."""

QUIET_RUNS_KEPT: Final = 16
"""Quiet runs kept, newest stamp first: what ``sleep status`` and ``merge`` read is the
latest, and a store run every hour must not grow the table for ever."""

BUSY_TIMEOUT_S: Final = 10.0
"""How long a call waits on another process's write lock before failing."""
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_SQLITE_CORRUPT: Final = 11
_SQLITE_NOTADB: Final = 26
_SQLITE_BUSY: Final = 5
_WAL_RETRY_S: Final = 0.01
_UNUSABLE = (_SQLITE_CORRUPT, _SQLITE_NOTADB)
_MIN_SQLITE: Final = (3, 35, 0)
"""RETURNING, which the bump's one statement needs."""


class RefusalError(Exception):
    """Raised inside a call, returned at its edge; a ``str`` is a ``StateFailure`` reason."""

    def __init__(self, error: StateError | str) -> None:
        super().__init__(error)
        self.error = error


# -- what both implementations check the same way ----------------------------------------


def utc_micros(at: datetime) -> int:
    """An aware instant as integer microseconds since the epoch (UTC), the one form
    stored and compared; a naive instant is refused, since its zone is a guess."""
    if at.tzinfo is None or at.utcoffset() is None:
        raise RefusalError(f"a naive time ({at.isoformat()}) has no zone; pass an aware one")
    return (at - _EPOCH) // timedelta(microseconds=1)


def from_micros(micros: int) -> datetime:
    return _EPOCH + timedelta(microseconds=micros)


def check_bump(counter: CounterKey, run_id: str, threshold: int) -> None:
    if not counter.key:
        raise RefusalError("a counter needs a non-empty key")
    if not run_id:
        raise RefusalError("a bump needs a non-empty run id")
    if threshold < 1:
        raise RefusalError(f"a promotion threshold is at least 1, not {threshold}")


def check_mined(commit: str, basis: str, rows: Sequence[MinedRow] = ()) -> None:
    if not commit:
        raise RefusalError("mined edges need a non-empty commit")
    if not basis:
        raise RefusalError("mined edges need a non-empty basis")
    for row in rows:
        # sqlite keeps a NaN as NULL: such a row could not come back as it went in.
        if not math.isfinite(row.similarity):
            raise RefusalError(f"mined edge {row.source} -> {row.target} has a non-finite "
                               f"similarity ({row.similarity})")


def check_quiet(run: QuietRun) -> None:
    if not run.run_id or not run.base:
        raise RefusalError("a quiet run needs a run id and a base")
    if any(not phase or "," in phase for phase in run.phases):
        raise RefusalError(f"a quiet run's phases are names without commas: {run.phases}")
    utc_micros(run.stamp)


def quiet_order(runs: Sequence[QuietRun]) -> tuple[QuietRun, ...]:
    """Newest stamp first, then the later run id (a day's ``-n`` suffix counts as a
    number) first."""
    def key(run: QuietRun) -> tuple[datetime, str, int]:
        suffix = run.run_id[11:]
        plain = suffix.isascii() and suffix.isdecimal() and len(suffix) < 6
        return (run.stamp, run.run_id[:10], int(suffix) if plain else 1)

    return tuple(sorted(runs, key=key, reverse=True))


def refused(path: str, operation: str, error: StateError | str) -> StateError:
    return error if not isinstance(error, str) else StateFailure(path, operation, error)


class Guarded(Protocol):
    """What ``state_operation`` needs of an implementation: one lock for every call, a
    name for the failures, and the exceptions it converts."""

    lock: threading.Lock
    name: str

    def convert(self, operation: str, error: Exception) -> StateError | None:
        """The typed failure for ``error``; None for one this implementation does not
        convert (a bug), which is raised as it is."""
        ...


_S = TypeVar("_S", bound=Guarded)


def state_operation(name: str) -> Callable[
    [Callable[Concatenate[_S, _P], _T]], Callable[Concatenate[_S, _P], IOResult[_T, StateError]]
]:
    """Run a method under the instance's lock, returning a refusal as the failure."""

    def wrap(method: Callable[Concatenate[_S, _P], _T]
             ) -> Callable[Concatenate[_S, _P], IOResult[_T, StateError]]:
        @functools.wraps(method)
        def run(self: _S, /, *args: _P.args, **kwargs: _P.kwargs
                ) -> IOResult[_T, StateError]:
            with self.lock:
                try:
                    return IOSuccess(method(self, *args, **kwargs))
                except RefusalError as refusal:
                    return IOFailure(refused(self.name, name, refusal.error))
                except Exception as error:
                    converted = self.convert(name, error)
                    if converted is None:
                        raise
                    return IOFailure(converted)

        return run

    return wrap


# -- the adapter ---------------------------------------------------------------------------


class SqliteStatePlane:
    """The state plane in one sqlite file, opened (and migrated) on the first call.

    One connection per instance, shared by threads (the MCP server runs tools on
    worker threads) under a lock.
    """

    def __init__(self, path: Path, *, busy_timeout: float = BUSY_TIMEOUT_S) -> None:
        self.path = path
        self.name = str(path)
        self.lock = threading.Lock()
        self._busy_timeout = busy_timeout
        self._connection: sqlite3.Connection | None = None

    def convert(self, operation: str, error: Exception) -> StateError | None:
        import sqlite3

        if isinstance(error, sqlite3.Error):
            code = getattr(error, "sqlite_errorcode", None)
            if isinstance(code, int) and code & 0xFF in _UNUSABLE:
                self._drop()
                return StateUnusable(self.name, _unusable(self.name, str(error)))
            return StateFailure(self.name, operation, str(error))
        if isinstance(error, OSError):
            return StateFailure(self.name, operation, str(error))
        return None

    def close(self) -> None:
        with self.lock:
            self._drop()

    def _drop(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _db(self) -> sqlite3.Connection:
        if self._connection is None:
            _refuse_odd_files(self.path, self.name)
            self._connection = _open(self.path, self._busy_timeout)
        return self._connection

    def _reader(self) -> sqlite3.Connection | None:
        """The connection for a read, or None while no plane exists on disk: a read
        (a dry run, a plan, a search) answers from an empty plane rather than create
        one, so looking at a fresh clone leaves nothing behind in it."""
        if self._connection is None:
            _refuse_odd_files(self.path, self.name)
            if not os.path.lexists(self.path):
                return None
        return self._db()

    def _write(self, body: Callable[[sqlite3.Connection], _T]) -> _T:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            result = body(db)
            db.execute("COMMIT")
        except BaseException:
            _roll_back(db)
            raise
        return result

    @state_operation("bump")
    def bump(self, counter: CounterKey, run_id: str, threshold: int, at: datetime
             ) -> Detection:
        check_bump(counter, run_id, threshold)
        stamp = utc_micros(at)
        where = (counter.kind, counter.key)

        def bumped(db: sqlite3.Connection) -> Detection:
            earlier = db.execute(
                "SELECT r.detection, c.detections FROM corroboration_runs AS r "
                "JOIN corroboration AS c USING (kind, key) "
                "WHERE r.kind = ? AND r.key = ? AND r.run_id = ?", (*where, run_id)).fetchone()
            if earlier is not None:
                return Detection(earlier[1], counted=False, promotes=earlier[0] == threshold)
            # The count and the promotion decision come back from the one statement
            # that moves the counter, so no second reader sits between them.
            detections, promotes = db.execute(
                "INSERT INTO corroboration (kind, key, detections, first_at, last_at) "
                "VALUES (?, ?, 1, ?, ?) ON CONFLICT (kind, key) DO UPDATE SET "
                "detections = detections + 1, last_at = excluded.last_at "
                "RETURNING detections, detections = ?",
                (*where, stamp, stamp, threshold)).fetchone()
            db.execute("INSERT INTO corroboration_runs (kind, key, run_id, detection, at) "
                       "VALUES (?, ?, ?, ?, ?)", (*where, run_id, detections, stamp))
            return Detection(detections, counted=True, promotes=bool(promotes))

        return self._write(bumped)

    @state_operation("detections")
    def detections(self, counter: CounterKey) -> int:
        db = self._reader()
        if db is None:
            return 0
        row = db.execute("SELECT detections FROM corroboration WHERE kind = ? AND "
                         "key = ?", (counter.kind, counter.key)).fetchone()
        return 0 if row is None else int(row[0])

    @state_operation("readings")
    def readings(self, counter: CounterKey) -> tuple[str, ...]:
        db = self._reader()
        if db is None:
            return ()
        rows = db.execute("SELECT run_id FROM corroboration_runs WHERE kind = ? AND key = ? "
                          "ORDER BY detection, run_id", (counter.kind, counter.key)).fetchall()
        return tuple(str(row[0]) for row in rows)

    @state_operation("counters")
    def counters(self, kind: CounterKind) -> tuple[Counter, ...]:
        db = self._reader()
        if db is None:
            return ()
        rows = db.execute("SELECT key, detections FROM corroboration WHERE kind = ?",
                          (kind,)).fetchall()
        return tuple(Counter(CounterKey(kind, key), detections)
                     for key, detections in sorted(rows))

    @state_operation("mark_consolidated")
    def mark_consolidated(self, session_ids: Collection[str], run_id: str, at: datetime
                          ) -> tuple[str, ...]:
        if not run_id:
            raise RefusalError("a mark needs a non-empty run id")
        stamp = utc_micros(at)
        wanted = sorted(set(session_ids))

        def marked(db: sqlite3.Connection) -> tuple[str, ...]:
            fresh = [session for session in wanted if db.execute(
                "INSERT INTO consolidations (session_id, run_id, at) VALUES (?, ?, ?) "
                "ON CONFLICT (session_id) DO NOTHING", (session, run_id, stamp)).rowcount]
            return tuple(fresh)

        return self._write(marked) if wanted else ()

    @state_operation("unconsolidated")
    def unconsolidated(self, session_ids: Collection[str]) -> tuple[str, ...]:
        wanted = sorted(set(session_ids))
        db = self._reader()
        if not wanted or db is None:
            return tuple(wanted)
        return tuple(session for session in wanted if db.execute(
            "SELECT 1 FROM consolidations WHERE session_id = ?", (session,)).fetchone() is None)

    @state_operation("append_access")
    def append_access(self, path: str, at: datetime, kind: AccessKind) -> None:
        stamp = utc_micros(at)
        self._write(lambda db: db.execute(
            "INSERT INTO accesses (path, at, kind) VALUES (?, ?, ?)", (path, stamp, kind)))

    @state_operation("access_counts")
    def access_counts(self, since: datetime, kind: AccessKind = "read"
                      ) -> Mapping[str, AccessCount]:
        since_micros = utc_micros(since)  # refuses a naive time even with no plane yet
        db = self._reader()
        if db is None:
            return MappingProxyType({})
        rows = db.execute(
            "SELECT path, COUNT(*), MAX(at) FROM accesses WHERE kind = ? AND at >= ? "
            "GROUP BY path", (kind, since_micros)).fetchall()
        return MappingProxyType({path: AccessCount(path, count, from_micros(last))
                                 for path, count, last in sorted(rows)})


    @state_operation("mined_edges")
    def mined_edges(self, commit: str, basis: str) -> tuple[MinedRow, ...] | None:
        check_mined(commit, basis)
        db = self._reader()
        if db is None:
            return None
        found = db.execute("SELECT id FROM mined_sets WHERE commit_sha = ? AND basis = ?",
                           (commit, basis)).fetchone()
        if found is None:
            return None
        rows = db.execute("SELECT source, target, similarity FROM mined_edges "
                          "WHERE set_id = ? ORDER BY ordinal", (found[0],)).fetchall()
        return tuple(MinedRow(source, target, float(similarity))
                     for source, target, similarity in rows)

    @state_operation("save_mined_edges")
    def save_mined_edges(self, commit: str, basis: str, rows: Sequence[MinedRow]) -> None:
        check_mined(commit, basis, rows)
        values = [(row.source, row.target, row.similarity) for row in rows]

        def saved(db: sqlite3.Connection) -> None:
            # Replaced, not updated: the new set takes a new id, so it counts as newest.
            _drop_mined(db, "WHERE commit_sha = ? AND basis = ?", (commit, basis))
            set_id = db.execute("INSERT INTO mined_sets (commit_sha, basis) VALUES (?, ?) "
                                "RETURNING id", (commit, basis)).fetchone()[0]
            db.executemany("INSERT INTO mined_edges (set_id, ordinal, source, target, "
                           "similarity) VALUES (?, ?, ?, ?, ?)",
                           [(set_id, n, *value) for n, value in enumerate(values)])
            _drop_mined(db, "WHERE id NOT IN (SELECT id FROM mined_sets ORDER BY id DESC "
                        "LIMIT ?)", (MINED_SETS_KEPT,))

        self._write(saved)


    @state_operation("record_quiet_run")
    def record_quiet_run(self, run: QuietRun) -> None:
        check_quiet(run)

        def recorded(db: sqlite3.Connection) -> None:
            db.execute("INSERT OR REPLACE INTO quiet_runs (run_id, base, stamp, phases) "
                       "VALUES (?, ?, ?, ?)", (run.run_id, run.base, utc_micros(run.stamp),
                                               ",".join(run.phases)))
            kept = quiet_order(_quiet_rows(db))[:QUIET_RUNS_KEPT]
            db.execute("DELETE FROM quiet_runs")
            db.executemany("INSERT INTO quiet_runs (run_id, base, stamp, phases) "
                           "VALUES (?, ?, ?, ?)",
                           [(q.run_id, q.base, utc_micros(q.stamp), ",".join(q.phases))
                            for q in kept])

        self._write(recorded)

    @state_operation("quiet_runs")
    def quiet_runs(self) -> tuple[QuietRun, ...]:
        db = self._reader()
        return () if db is None else quiet_order(_quiet_rows(db))


def _quiet_rows(db: sqlite3.Connection) -> tuple[QuietRun, ...]:
    rows = db.execute("SELECT run_id, base, stamp, phases FROM quiet_runs").fetchall()
    return tuple(QuietRun(str(run_id), str(base), from_micros(int(stamp)),
                          tuple(p for p in str(phases).split(",") if p))
                 for run_id, base, stamp, phases in rows)


def _drop_mined(db: sqlite3.Connection, where: str, args: tuple[object, ...]) -> None:
    """Delete the sets ``where`` selects and their edges."""
    db.execute(f"DELETE FROM mined_edges WHERE set_id IN (SELECT id FROM mined_sets {where})",
               args)
    db.execute(f"DELETE FROM mined_sets {where}", args)


def _unusable(name: str, why: str) -> str:
    return (f"{name} is not a usable memhtml state database ({why}); it holds state the "
            f"tree cannot rebuild, so it is left as it is: move it aside to start afresh")


_SIDE_FILES: Final = ("-wal", "-shm", "-journal")
"""The files sqlite keeps beside the database, opened by name like it."""


def _refuse_odd_files(path: Path, name: str) -> None:
    """Refuse the plane when its file, or a file sqlite keeps beside it, is anything
    but a regular file: sqlite opens them by name and would wait forever on a FIFO's
    read (or write through a link to wherever it points). Refused as unusable, never
    removed: the name is a person's to clear. sqlite takes no descriptor, so this look
    by name is as close as the check can come to sqlite's own open."""
    for candidate in (path, *(path.with_name(path.name + side) for side in _SIDE_FILES)):
        odd = not_regular(candidate)
        if odd is not None:
            raise RefusalError(StateUnusable(name, (
                f"{candidate} is {odd}, not a regular file, and memhtml opens nothing "
                "else as its state database; move it aside and run the command again")))


def _open(path: Path, busy_timeout: float) -> sqlite3.Connection:
    import sqlite3

    if sqlite3.sqlite_version_info < _MIN_SQLITE:
        raise RefusalError(f"sqlite {sqlite3.sqlite_version} is older than "
                           f"{'.'.join(map(str, _MIN_SQLITE))}, which the state plane needs")
    path.parent.mkdir(parents=True, exist_ok=True)
    # Autocommit (isolation_level None): every transaction here is an explicit BEGIN.
    db = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None,
                         check_same_thread=False)
    try:
        _migrate(db, str(path), busy_timeout)
        # Durable against a crash of the process; a power loss may drop the last
        # commits, and each loss errs safe: a lost bump delays a promotion a night, a
        # lost watermark has its session read again, a lost access is one read.
        db.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        db.close()
        raise
    return db


def _version(db: sqlite3.Connection, name: str) -> int:
    """The schema's version: 0 for an empty file; a database that holds tables but no
    ``schema_version`` is someone else's and is refused."""
    objects = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    if "schema_version" not in objects:
        if objects:
            raise RefusalError(StateUnusable(name, _unusable(
                name, "a sqlite database without a schema_version table")))
        return 0
    version = db.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 0
    if version > SCHEMA_VERSION:
        raise RefusalError(StateUnusable(name, (
            f"{name} has state schema version {version}, newer than this memhtml knows "
            f"({SCHEMA_VERSION}); upgrade memhtml to use it. The file is left as it is")))
    return int(version)


def _into_wal(db: sqlite3.Connection, name: str, busy_timeout: float) -> None:
    """Switch a new file to WAL (a setting the file keeps). The switch wants the file to
    itself and sqlite answers busy at once instead of waiting, so when processes open a
    new file together, each retries until one has switched it or the timeout is up."""
    import sqlite3

    deadline = time.monotonic() + busy_timeout
    while True:
        try:
            mode = str(db.execute("PRAGMA journal_mode = WAL").fetchone()[0])
            break
        except sqlite3.OperationalError as error:
            if getattr(error, "sqlite_errorcode", None) != _SQLITE_BUSY \
                    or time.monotonic() >= deadline:
                raise
            time.sleep(_WAL_RETRY_S)
    if mode.lower() != "wal":
        raise RefusalError(f"{name}: sqlite kept journal mode {mode!r}; the state plane "
                           f"needs WAL")


def _migrate(db: sqlite3.Connection, name: str, busy_timeout: float) -> None:
    if _version(db, name) == SCHEMA_VERSION:
        return
    _into_wal(db, name, busy_timeout)
    db.execute("BEGIN IMMEDIATE")
    try:
        # Read again under the write lock: another process may have migrated meanwhile.
        version = _version(db, name)
        if version == 0:
            db.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY)")
        for number in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[number - 1]:
                db.execute(statement)
            db.execute("INSERT INTO schema_version (version) VALUES (?)", (number,))
        db.execute("COMMIT")
    except BaseException:
        _roll_back(db)
        raise


def _roll_back(db: sqlite3.Connection) -> None:
    # Some errors (a full disk, an I/O error) end the transaction themselves.
    if db.in_transaction:
        db.execute("ROLLBACK")
