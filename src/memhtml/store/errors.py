"""The store's closed error union, and the one line each error reads as.

Everything a door can fail with is a value: what the head, the overlay or git
reported, passed through unchanged, plus ``Refused`` for the store's own rules
(a path that is taken, a body with a block tag, a task door on a non-task).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias, assert_never

from memhtml.contracts.errors import (
    GitFailure,
    InvalidMemory,
    NotFound,
    OverlayRefused,
    PathRefused,
    RefMoved,
)


@dataclass(frozen=True, slots=True)
class Refused:
    """A door declined the request: why, and every rule it broke when there are several."""

    reason: str
    violations: tuple[str, ...] = ()


StoreError: TypeAlias = (
    InvalidMemory | PathRefused | GitFailure | RefMoved | NotFound | OverlayRefused | Refused
)


def _listed(head: str, violations: tuple[str, ...]) -> str:
    if not violations:
        return head
    return f"{head}: " + "; ".join(violations)


def describe(error: StoreError) -> str:
    """One human-readable line, every violation listed, for the CLI and MCP to print."""
    match error:
        case InvalidMemory(path=path, reason=reason, violations=violations):
            where = path or "the memory"
            if violations:
                return _listed(f"{where} is not a valid memory ({len(violations)} violations)",
                               violations)
            return f"{where} is not a valid memory: {reason}"
        case PathRefused(path=path, reason=reason):
            return f"path {path!r} refused: {reason}"
        case GitFailure(operation=operation, reason=reason):
            return f"git {operation} failed: {reason}"
        case RefMoved(ref=ref, expected=expected, actual=actual):
            return (f"{ref} moved from {expected or '(unborn)'} to {actual or '(deleted)'} "
                    "while writing; gave up after retrying")
        case NotFound(what=what):
            return f"not found: {what}"
        case OverlayRefused(op=op, path=path, reason=reason):
            return f"{op} on {path} refused: {reason}"
        case Refused(reason=reason, violations=violations):
            return _listed(reason, violations)
        case _ as never:
            assert_never(never)
