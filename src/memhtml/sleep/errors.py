"""The sleep room's closed error union, and the one line each reads as.

A phase's failure is not here: it is recorded as a value in the run's report and the
run goes on. These are the failures of a whole command: a run id naming no run, a
store with nothing to curate, git or the state plane failing underneath.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from memhtml.contracts.errors import StateFailure, StateUnusable
from memhtml.store.errors import StoreError, describe


@dataclass(frozen=True, slots=True)
class RunNotFound:
    """No run branch carries this id (``no-run``): a lookup failure."""

    run_id: str


@dataclass(frozen=True, slots=True)
class SleepRefused:
    """A sleep command declined: why."""

    reason: str


SleepError: TypeAlias = StoreError | RunNotFound | SleepRefused | StateUnusable | StateFailure


def describe_sleep_error(error: SleepError) -> str:
    """One human-readable line for the CLI."""
    match error:
        case RunNotFound(run_id=run_id):
            return f"no sleep run {run_id!r} (no branch sleep/{run_id})"
        case SleepRefused(reason=reason):
            return reason
        case StateUnusable(path=path, reason=reason):
            return f"the state database {path} cannot be used: {reason}"
        case StateFailure(path=path, operation=operation, reason=reason):
            return f"the state database {path}: {operation} failed: {reason}"
        case _:
            return describe(error)

