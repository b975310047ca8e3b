"""The sync's own refusal: a remote branch bringing paths the doors would refuse.

Everything else a sync can fail with is the store's (``StoreError``) or the
transport's (``RemoteError``); this one is decided by the sync before anything moves,
so it carries every offending path for the person to fix at the source.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RemotePathsRefused", "describe_refusal"]


@dataclass(frozen=True, slots=True)
class RemotePathsRefused:
    """The remote's branch brings paths the doors refuse (a name no checkout can hold,
    a case or normalization twin, a symbolic link at a layout path, a name some file
    system reads as another): nothing was brought in, nothing was pushed."""

    remote: str
    """``<remote>/<branch>``, as the sync summary names it."""
    commit: str
    """The remote tip that brings them."""
    paths: tuple[str, ...]
    """Each offending path, sorted, once."""
    violations: tuple[str, ...]
    """One line per path: the path and the rule it breaks."""


def describe_refusal(error: RemotePathsRefused) -> str:
    """The line a person reads, every path listed with its rule."""
    count = len(error.paths)
    head = (f"{error.remote} at {error.commit[:12]} brings {count} "
            f"path{'' if count == 1 else 's'} this store refuses, the rules every write "
            "meets; nothing was brought in (the local branch and the checkout are as they "
            "were, and writes still commit here). Rename or remove "
            f"{'it' if count == 1 else 'each'} where it was pushed from, then sync again")
    return head + ": " + "; ".join(error.violations)
