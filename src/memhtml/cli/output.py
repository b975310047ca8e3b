"""Rendering: every command's answer as human text, or as JSON on stdout.

A command builds a ``Reply`` (the JSON payload and the text a person reads) or
raises ``CliError``; ``respond`` prints whichever the ``--json`` flag asks for and
turns the outcome into the exit code: 0 done, 1 refused or failed, 2 a usage error.
The parser's own usage errors (an unknown option, a missing argument, a value off
its list) never reach a command: ``report_usage`` renders them the same way, and the
parser exits 2. A command's own check of how it was called raises ``UsageError``.

Every failure carries a stable code (``ERR_...``) in its JSON, so an agent matches on
the code rather than on the wording: a typed error's code comes from
``memhtml.compose.error_code``; the few failures the CLI finds itself use the
constants below.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Mapping, Sequence
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
EXIT_USAGE = 2

ERR_FAILED = "ERR_FAILED"
"""A failure with no typed error behind it (the same code ``error_code`` gives a bare
string)."""
ERR_USAGE = "ERR_USAGE"
"""The command line itself is wrong: fix it and run again; nothing was attempted."""
ERR_INPUT = "ERR_INPUT"
"""A file the command line names cannot be used (missing, unreadable, not what the
command reads)."""


class CliError(Exception):
    """A refusal or failure to report: one line, every violation behind it, and the
    stable code an agent matches on."""

    exit_code = EXIT_FAILED

    def __init__(self, message: str, violations: tuple[str, ...] = (), *,
                 code: str = ERR_FAILED) -> None:
        super().__init__(message)
        self.message = message
        self.violations = violations
        self.code = code


class UsageError(CliError):
    """The command was called wrongly in a way the parser cannot see (one of several
    options is needed, a value is not in the form the option takes): exit 2, like
    the parser's own usage errors. The message names what to pass instead."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, violations: tuple[str, ...] = ()) -> None:
        super().__init__(message, violations, code=ERR_USAGE)


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


def failure_payload(code: str, message: str, violations: tuple[str, ...] = (),
                    **extra: object) -> dict[str, object]:
    """The one JSON shape of every failure: ``ok`` false, the stable ``code``, the
    ``error`` line and each violation; ``extra`` adds what a reader needs beside them
    (a gate's report)."""
    return {"ok": False, "code": code, "error": message, "violations": list(violations),
            **extra}


def report_failure(as_json: bool, failure: CliError) -> int:
    """Print a failure (JSON on stdout, or ``error: ...`` on stderr with each violation
    below it when there are several); its exit code."""
    if as_json:
        print_out(dumps(failure_payload(failure.code, failure.message, failure.violations)))
    else:
        print_err(f"error: {failure.message}")
        if len(failure.violations) > 1:
            for violation in failure.violations:
                print_err(f"  - {violation}")
    return failure.exit_code


def json_asked(tokens: Sequence[str]) -> bool:
    """Whether a command line asks for JSON, read from its tokens: a usage error is
    found before the options are bound, and still answers in the form asked for."""
    for token in tokens:
        if token == "--":
            return False
        if token == "--json":
            return True
        if token.startswith("--json="):
            return token.partition("=")[2].lower() not in ("", "0", "false", "no", "off")
    return False


def report_usage(message: str, command: Sequence[str], tokens: Sequence[str]) -> None:
    """Print a usage error the parser found, in the form the command line asked for,
    with where to read the command's options."""
    where = " ".join(("memhtml", *command))
    failure = UsageError(f"{message.strip()} Run `{where} --help` for usage.")
    report_failure(json_asked(tokens), failure)


def respond(as_json: bool, command: Callable[[], Reply]) -> int:
    """Run a command body and print its reply or its failure; the exit code."""
    try:
        reply = command()
    except CliError as failure:
        return report_failure(as_json, failure)
    except ValueError as crash:
        # A snapshot's text damaged after the load, that git could not give back, is
        # raised from the attribute read that found it (``head.codec``), carrying its
        # typed error: answered here as the door's failure would be.
        from memhtml.contracts.errors import TextUnreadable

        damaged = getattr(crash, "error", None)
        if not isinstance(damaged, TextUnreadable):
            raise
        from memhtml.compose import error_code, explain

        return report_failure(as_json, CliError(explain(damaged), code=error_code(damaged)))
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


def unwrap_io(result: IOResult[T, E], describe: Callable[[E], str] | None = None) -> T:
    """The success value, or a ``CliError`` carrying the error's line (``describe``'s,
    else the composition root's plain wording), its violations and its stable code."""
    from returns.pipeline import is_successful
    from returns.unsafe import unsafe_perform_io

    if is_successful(result):
        return unsafe_perform_io(result.unwrap())
    from memhtml.compose import error_code, explain

    error = unsafe_perform_io(result.failure())
    message = describe(error) if describe is not None else explain(error)
    raise CliError(message, violations_of(error), code=error_code(error))


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
