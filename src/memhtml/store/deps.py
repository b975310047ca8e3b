"""What a store needs from outside: the services and the few settings a caller picks.

Every byte a store reads or writes outside its repository goes through a port here:
git (the repository and its checkout), the write marks (``journals``), the
snapshots, this clone's directory (``local``), the state plane. The two paths a
store holds, ``worktree`` and ``git_dir``, say whether there is a checkout to keep
up to date and name its files in messages; nothing is opened through them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import NotFound
from memhtml.contracts.journals import Journals
from memhtml.contracts.local_state import LocalState
from memhtml.contracts.services import AccessKind, Clock, GitService, Signature, StatePlane
from memhtml.store.errors import StoreError
from memhtml.store.snapshot import SnapshotCache

Detector: TypeAlias = Callable[[str], str | None]
"""Guesses an unlabeled code fence's language for a write (None: no guess)."""


@dataclass(frozen=True)
class StoreDeps:
    """Built once by the composition root (CLI, MCP, a test) and handed to ``Store``."""

    git: GitService
    clock: Clock
    author: Signature
    branch: str = "main"
    worktree: Path | None = None
    """A checkout to bring up to date after each commit; None for a bare repository."""
    git_dir: Path | None = None
    """The repository's git directory, where a checkout's index and lock live; None
    derives it as ``<worktree>/.git``."""
    detect: Detector | None = None
    """The fence-language guess a write uses; None leaves unlabeled fences unlabeled.
    A guess is pinned to one release of its lexers, so the composition root picks it."""
    state: StatePlane | None = None
    """This clone's sleep state, where the read doors log accesses; None logs none."""
    journals: Journals | None = None
    """This clone's marks of writes in flight (``store.checkout``): needed with a
    ``worktree``, which the marks keep safe from a person's stale index."""
    snapshots: SnapshotCache | None = None
    """This clone's parsed versions by commit (``store.snapshot``), which a cold handle
    advances instead of parsing the tree; None keeps none."""
    local: LocalState | None = None
    """This clone's own directory, ``<git-dir>/memhtml`` (``contracts.local_state``):
    made by ``init``, looked over by ``doctor``; None where a store keeps no state."""

    def __post_init__(self) -> None:
        if self.worktree is not None and self.journals is None:
            raise ValueError("a store keeping a checkout up to date needs its journals "
                             "(the marks of writes in flight)")

    @property
    def ref(self) -> str:
        """The full name of the branch every door writes to."""
        return self.branch if self.branch.startswith("refs/") else f"refs/heads/{self.branch}"

    @property
    def checkout_git_dir(self) -> Path | None:
        """The git directory of the checkout writes keep up to date; None without one."""
        if self.worktree is None:
            return None
        return self.git_dir if self.git_dir is not None else self.worktree / ".git"

    def note_access(self, path: str, kind: AccessKind = "read") -> None:
        """Log one access of ``path`` now. The log is a side record beside the answer
        (retention reads it), so a failure to append is dropped: it never fails, or
        even shows in, the read that caused it."""
        if self.state is not None:
            self.state.append_access(path, self.clock.now(), kind)

    def tip(self) -> IOResult[str | None, StoreError]:
        """The branch's commit, or None while the branch is unborn."""
        resolved: IOResult[str | None, StoreError] = self.git.resolve(self.ref)
        return resolved.lash(lambda failure: IOSuccess(None) if isinstance(failure, NotFound)
                             else IOFailure(failure))
