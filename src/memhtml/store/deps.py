"""What a store needs from outside: the services and the few settings a caller picks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memhtml.contracts.services import Clock, GitService, Signature


@dataclass(frozen=True)
class StoreDeps:
    """Built once by the composition root (CLI, MCP, a test) and handed to ``Store``."""

    git: GitService
    clock: Clock
    author: Signature
    branch: str = "main"
    state_dir: Path | None = None
    """``<store>/.memhtml``: snapshots and config, never committed. None keeps no state."""
    worktree: Path | None = None
    """A checkout to bring up to date after each commit; None for a bare repository."""

    @property
    def ref(self) -> str:
        """The full name of the branch every door writes to."""
        return self.branch if self.branch.startswith("refs/") else f"refs/heads/{self.branch}"
