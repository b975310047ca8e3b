"""What every pygit2 adapter call shares: the exceptions it turns into values, and how.

pygit2's own errors subclass ``GitError`` plus ``KeyError`` or ``ValueError``; ``OSError``
covers the file system under ``.git``. Anything else is a bug and is left to surface.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pygit2
from returns.io import IOFailure, IOResult
from returns.result import Result

from memhtml.contracts.errors import GitError, GitFailure

_T = TypeVar("_T")

CONVERTED = (pygit2.GitError, KeyError, ValueError, OSError)


def failure_reason(exc: BaseException) -> str:
    """The exception as one line: its type, and its text when it has one."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def guarded(operation: str, thunk: Callable[[], Result[_T, GitError]]) -> IOResult[_T, GitError]:
    """Run ``thunk`` now; a converted exception becomes ``GitFailure(operation, ...)``."""
    try:
        outcome = thunk()
    except CONVERTED as exc:
        return IOFailure(GitFailure(operation, failure_reason(exc)))
    return IOResult.from_result(outcome)
