"""``memhtml task``: add a task, move it through its statuses, list what is open."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cyclopts import App

from memhtml.cli.choices import TaskStatusName
from memhtml.cli.common import Common, open_common, with_vectors
from memhtml.cli.inputs import TaskFields, parse_links
from memhtml.cli.landed import landed_reply
from memhtml.cli.output import Reply, respond, store_value, table

if TYPE_CHECKING:
    from memhtml.store import TaskRow

task_app = App(name="task", help="Tasks: add one, set its status, list the open ones.")

_COMMON = Common()
_FIELDS = TaskFields()


@task_app.command(name="add")
def task_add(*, fields: TaskFields = _FIELDS, status: TaskStatusName = "todo",
             common: Common = _COMMON) -> int:
    """Add a task (one commit), by default under areas/tasks/.

    Example: memhtml task add --title "Rotate the API key" --claim "Rotate the key."
    --due 2026-12-01

    Parameters
    ----------
    status
        The starting status.
    """
    from memhtml import store as doors

    def body() -> Reply:
        services, store = open_common(common)
        landed = store_value(doors.task_add(
            store, fields.title, fields.claim, fields.due, fields.entity, body=fields.body,
            tags=fields.tag, links=parse_links(fields.link), directory=fields.dir,
            importance=fields.importance, task_status=status,
        ))
        return with_vectors(services, store, landed, landed_reply(landed))

    return respond(common.json, body)


@task_app.command(name="status")
def task_status(path: str, status: TaskStatusName, /, *, common: Common = _COMMON) -> int:
    """Set a task's status; done also archives it.

    Parameters
    ----------
    path
        The task's path.
    status
        todo, doing, blocked or done.
    """
    from memhtml import store as doors

    def body() -> Reply:
        services, store = open_common(common)
        landed = store_value(doors.task_status(store, path, status))
        return with_vectors(services, store, landed, landed_reply(landed, f"already {status}"))

    return respond(common.json, body)


def render_tasks(rows: list[TaskRow]) -> str:
    """One line per task, overdue ones flagged; overdue first, then by due date."""
    if not rows:
        return "no open tasks"
    return table([
        ("OVERDUE" if row.overdue else "", row.status, row.due_at or "-", row.path, row.title)
        for row in rows
    ])


@task_app.command(name="list")
def task_list(*, all: bool = False, common: Common = _COMMON) -> int:
    """List open tasks, overdue first (flagged OVERDUE), then by due date.

    Parameters
    ----------
    all
        Include finished and archived tasks.
    """
    from memhtml import store as doors

    def body() -> Reply:
        _, store = open_common(common, writes=False)
        rows = store_value(doors.task_list(store, include_done=all))
        return Reply({"tasks": rows, "overdue": sum(1 for r in rows if r.overdue)},
                     render_tasks(rows))

    return respond(common.json, body)
