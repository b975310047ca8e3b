"""The task list: open tasks with their due dates, and which are overdue.

Due dates are compared as strings, the way the format keeps every datetime
sortable: an instant against now's instant, a date against today's date, so a
task due today is not overdue until the day is over.
"""

from __future__ import annotations

from dataclasses import dataclass

from returns.io import IOResult

from memhtml.contracts.record import MemoryRecord
from memhtml.store.errors import StoreError
from memhtml.store.session import Store
from memhtml.store.stamps import now_stamp


@dataclass(frozen=True, slots=True)
class TaskRow:
    path: str
    title: str
    status: str
    due_at: str | None
    overdue: bool


def is_overdue(due_at: str | None, now: str, status: str | None) -> bool:
    """Due before now; a finished task is never overdue."""
    if due_at is None or status == "done":
        return False
    if len(due_at) == 10:
        return due_at < now[:10]
    return due_at < now


def _row(record: MemoryRecord, now: str) -> TaskRow:
    status = record.task_status or "todo"
    return TaskRow(record.path, record.title, status, record.due_at,
                   is_overdue(record.due_at, now, status))


def task_rows(records: list[MemoryRecord], now: str, include_done: bool) -> list[TaskRow]:
    """Overdue first, then by due date (undated last), then by path."""
    rows = [
        _row(r, now)
        for r in records
        if r.memory_type == "task"
        and (include_done or (r.task_status != "done" and not r.archived and r.status == "active"))
    ]
    rows.sort(key=lambda row: (not row.overdue, row.due_at is None, row.due_at or "", row.path))
    return rows


def task_list(store: Store, include_done: bool = False) -> IOResult[list[TaskRow], StoreError]:
    """The tasks at the tip: open ones, or every task with ``include_done``."""
    now = now_stamp(store.deps.clock.now())
    return store.head().map(lambda version: task_rows(list(version.records()), now,
                                                      include_done))
