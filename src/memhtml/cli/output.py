"""Rendering: every command's answer as human text, or as JSON on stdout.

A command builds a ``Reply`` (the JSON payload and the text a person reads) or
raises ``CliError``; ``respond`` prints whichever the ``--json`` flag asks for and
turns the outcome into the exit code: 0 done, 1 refused or failed. Usage errors
(exit 2) never get here: the argument parser reports them before a command runs.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from returns.io import IOResult

    from memhtml.store import StoreError

T = TypeVar("T")
E = TypeVar("E")

EXIT_OK = 0
EXIT_FAILED = 1


class CliError(Exception):
    """A refusal or failure to report: one line, and every violation behind it."""

    def __init__(self, message: str, violations: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.violations = violations


@dataclass(frozen=True)
class Reply:
    """What a command answers: the JSON payload, the human text, the exit code."""

    payload: object
    text: str
    code: int = EXIT_OK
    notes: tuple[str, ...] = field(default=())
    """Lines for stderr in text mode (warnings, hints); dropped in JSON mode."""


def jsonable(value: object) -> object:
    """Plain JSON data from dataclasses, tuples, paths and datetimes."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value) if isinstance(value, (set, frozenset)) else value
        return [jsonable(v) for v in items]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return value


def dumps(payload: object) -> str:
    return json.dumps(jsonable(payload), ensure_ascii=False, indent=2, sort_keys=True)


def print_out(text: str) -> None:
    if text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()


def print_err(text: str) -> None:
    sys.stderr.write(text if text.endswith("\n") else text + "\n")
    sys.stderr.flush()


def respond(as_json: bool, command: Callable[[], Reply]) -> int:
    """Run a command body and print its reply or its failure; the exit code."""
    try:
        reply = command()
    except CliError as failure:
        if as_json:
            print_out(dumps({"ok": False, "error": failure.message,
                             "violations": list(failure.violations)}))
        else:
            print_err(f"error: {failure.message}")
            if len(failure.violations) > 1:
                for violation in failure.violations:
                    print_err(f"  - {violation}")
        return EXIT_FAILED
    if as_json:
        print_out(dumps(reply.payload))
    else:
        print_out(reply.text)
        for note in reply.notes:
            print_err(note)
    return reply.code


def violations_of(error: object) -> tuple[str, ...]:
    found = getattr(error, "violations", ())
    return tuple(found) if isinstance(found, tuple) else ()


def unwrap_io(result: IOResult[T, E], describe: Callable[[E], str]) -> T:
    """The success value, or a ``CliError`` carrying the error's line and violations."""
    from returns.pipeline import is_successful
    from returns.unsafe import unsafe_perform_io

    if is_successful(result):
        return unsafe_perform_io(result.unwrap())
    error = unsafe_perform_io(result.failure())
    raise CliError(describe(error), violations_of(error))


def store_value(result: IOResult[T, StoreError]) -> T:
    """A store door's value, or its error described with every violation."""
    from memhtml.store import describe

    return unwrap_io(result, describe)


def table(rows: list[tuple[str, ...]], header: tuple[str, ...] | None = None) -> str:
    """Left-aligned columns, two spaces apart; the last column is never padded."""
    body = ([header] if header else []) + rows
    if not body:
        return ""
    widths = [max(len(row[i]) for row in body) for i in range(len(body[0]) - 1)]
    lines = []
    for row in body:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines)
