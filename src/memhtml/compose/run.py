"""Running a container for a Python caller: the value, or the error as a typed value.

Every door and read returns an ``IOResult`` whose failure side is a typed error (a
frozen dataclass). A program that wants the value, and an exception carrying the
error when there is none, calls ``value_of``; one that prefers to match on the
outcome calls ``perform`` and gets a plain ``Result``. Either way the failure reads
as one line with every violation listed, not as a bare ``UnwrapFailedError``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, TypeVar, get_args

from returns.io import IOResult
from returns.pipeline import is_successful
from returns.result import Failure, Result, Success
from returns.unsafe import unsafe_perform_io

T = TypeVar("T")
E = TypeVar("E")


class MemhtmlError(Exception):
    """A failed call: ``error`` is the typed error value, ``str()`` the line to show."""

    def __init__(self, error: object) -> None:
        super().__init__(explain(error))
        self.error = error


def explain(error: object) -> str:
    """One human-readable line for any memhtml error value, every violation listed."""
    from memhtml.store.errors import StoreError, describe

    if isinstance(error, get_args(StoreError)):
        return describe(error)
    reason = getattr(error, "reason", None)
    if isinstance(reason, str):
        return f"{type(error).__name__}: {reason}"
    return repr(error)


ERROR_CODES: Final[Mapping[str, str]] = MappingProxyType({
    # The spec's name for a refused landing; every other code is derived below.
    "HeadGateFailed": "ERR_DISCRIMINATION_FAILED",
})
"""Codes that differ from the derived spelling. A code, once published, never changes
(agents match on it); renaming an error class means adding its old code here."""


def error_code(error: object) -> str:
    """The stable code of a memhtml error value, for ``--json`` output and MCP tool
    errors: ``ERR_`` and the error type's name in upper snake case (``NotFound`` is
    ``ERR_NOT_FOUND``), unless ``ERROR_CODES`` names another. A value that is not a
    memhtml error (a bare string) is ``ERR_FAILED``."""
    name = type(error).__name__
    if name in ERROR_CODES:
        return ERROR_CODES[name]
    if isinstance(error, (str, bytes)) or type(error).__module__ == "builtins":
        return "ERR_FAILED"
    return "ERR_" + re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def perform(io: IOResult[T, E]) -> Result[T, E]:
    """The outcome of an IO result as a plain ``Result``, to match or chain on."""
    if is_successful(io):
        return Success(unsafe_perform_io(io.unwrap()))
    return Failure(unsafe_perform_io(io.failure()))


def value_of(io: IOResult[T, E]) -> T:
    """The value of an IO result, or ``MemhtmlError`` carrying its typed error."""
    if is_successful(io):
        return unsafe_perform_io(io.unwrap())
    raise MemhtmlError(unsafe_perform_io(io.failure()))
