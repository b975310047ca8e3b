"""``StatePlane`` in memory: the test double of ``SqliteStatePlane``, held to the same
contract by ``tests/contract/test_state_plane_contract.py``.

It checks arguments and stores instants with the adapter's own helpers, so the two
cannot disagree on what is refused or on the precision an instant keeps. One lock
serializes every call, as the adapter's does, so threads may share an instance.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType

from memhtml.adapters.state_db import (
    MINED_SETS_KEPT,
    QUIET_RUNS_KEPT,
    RefusalError,
    check_bump,
    check_mined,
    check_quiet,
    from_micros,
    quiet_order,
    state_operation,
    utc_micros,
)
from memhtml.contracts.errors import StateError
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


@dataclass(frozen=True, slots=True)
class _Access:
    path: str
    at: int
    kind: AccessKind


class InMemoryState:
    """The state plane as dicts. ``failing`` makes every call fail as a broken file
    would, for the tests of a caller that must shrug such a failure off."""

    def __init__(self, *, failing: StateError | None = None) -> None:
        self.name = "memory"
        self.lock = threading.Lock()
        self.failing = failing
        self._counters: dict[CounterKey, int] = {}
        self._runs: dict[tuple[CounterKey, str], int] = {}
        self._marks: dict[str, str] = {}
        self._accesses: list[_Access] = []
        self._mined: dict[tuple[str, str], tuple[int, tuple[MinedRow, ...]]] = {}
        self._mined_saves = 0
        self._quiet: dict[tuple[str, str], QuietRun] = {}

    def convert(self, operation: str, error: Exception) -> StateError | None:
        return None

    def _up(self) -> None:
        if self.failing is not None:
            raise RefusalError(self.failing)

    @property
    def accesses(self) -> tuple[tuple[str, datetime, AccessKind], ...]:
        """Every access appended, in order (what a test reads back)."""
        with self.lock:
            return tuple((a.path, from_micros(a.at), a.kind) for a in self._accesses)

    @state_operation("bump")
    def bump(self, counter: CounterKey, run_id: str, threshold: int, at: datetime
             ) -> Detection:
        self._up()
        check_bump(counter, run_id, threshold)
        utc_micros(at)
        earlier = self._runs.get((counter, run_id))
        if earlier is not None:
            return Detection(self._counters[counter], counted=False,
                             promotes=earlier == threshold)
        detections = self._counters.get(counter, 0) + 1
        self._counters[counter] = detections
        self._runs[(counter, run_id)] = detections
        return Detection(detections, counted=True, promotes=detections == threshold)

    @state_operation("detections")
    def detections(self, counter: CounterKey) -> int:
        self._up()
        return self._counters.get(counter, 0)

    @state_operation("readings")
    def readings(self, counter: CounterKey) -> tuple[str, ...]:
        self._up()
        counted = [(n, run) for (key, run), n in self._runs.items() if key == counter]
        return tuple(run for _, run in sorted(counted))

    @state_operation("counters")
    def counters(self, kind: CounterKind) -> tuple[Counter, ...]:
        self._up()
        return tuple(Counter(key, count) for key, count in
                     sorted(self._counters.items(), key=lambda item: item[0].key)
                     if key.kind == kind)

    @state_operation("mark_consolidated")
    def mark_consolidated(self, session_ids: Collection[str], run_id: str, at: datetime
                          ) -> tuple[str, ...]:
        self._up()
        if not run_id:
            raise RefusalError("a mark needs a non-empty run id")
        utc_micros(at)
        fresh = tuple(s for s in sorted(set(session_ids)) if s not in self._marks)
        self._marks.update(dict.fromkeys(fresh, run_id))
        return fresh

    @state_operation("unconsolidated")
    def unconsolidated(self, session_ids: Collection[str]) -> tuple[str, ...]:
        self._up()
        return tuple(s for s in sorted(set(session_ids)) if s not in self._marks)

    @state_operation("append_access")
    def append_access(self, path: str, at: datetime, kind: AccessKind) -> None:
        self._up()
        self._accesses.append(_Access(path, utc_micros(at), kind))

    @state_operation("access_counts")
    def access_counts(self, since: datetime, kind: AccessKind = "read"
                      ) -> Mapping[str, AccessCount]:
        self._up()
        floor = utc_micros(since)
        counts: dict[str, tuple[int, int]] = {}
        for access in self._accesses:
            if access.kind == kind and access.at >= floor:
                count, last = counts.get(access.path, (0, access.at))
                counts[access.path] = (count + 1, max(last, access.at))
        return MappingProxyType({path: AccessCount(path, count, from_micros(last))
                                 for path, (count, last) in sorted(counts.items())})

    @state_operation("mined_edges")
    def mined_edges(self, commit: str, basis: str) -> tuple[MinedRow, ...] | None:
        self._up()
        check_mined(commit, basis)
        kept = self._mined.get((commit, basis))
        return None if kept is None else kept[1]

    @state_operation("save_mined_edges")
    def save_mined_edges(self, commit: str, basis: str, rows: Sequence[MinedRow]) -> None:
        self._up()
        check_mined(commit, basis, rows)
        # The adapter's order of saves, as a counter: a re-save is the newest set.
        self._mined_saves += 1
        self._mined[(commit, basis)] = (self._mined_saves, tuple(rows))
        newest = sorted(self._mined.items(), key=lambda item: item[1][0], reverse=True)
        self._mined = dict(newest[:MINED_SETS_KEPT])

    @state_operation("record_quiet_run")
    def record_quiet_run(self, run: QuietRun) -> None:
        self._up()
        check_quiet(run)
        # Stored as the adapter reads it back: the stamp to the microsecond, in UTC.
        kept = QuietRun(run.run_id, run.base, from_micros(utc_micros(run.stamp)),
                        tuple(run.phases))
        self._quiet[(run.run_id, run.base)] = kept
        newest = quiet_order(tuple(self._quiet.values()))[:QUIET_RUNS_KEPT]
        self._quiet = {(q.run_id, q.base): q for q in newest}

    @state_operation("quiet_runs")
    def quiet_runs(self) -> tuple[QuietRun, ...]:
        self._up()
        return quiet_order(tuple(self._quiet.values()))
