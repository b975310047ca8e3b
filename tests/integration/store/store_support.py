"""Shared helpers for the store's tests: a real repository or its in-memory double, and
a fixed clock."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from returns.io import IOResult
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.clock import FixedClock
from memhtml.adapters.git import PygitService
from memhtml.adapters.journal_files import JournalFiles
from memhtml.adapters.local_state_files import LocalStateFiles
from memhtml.adapters.memory_git import InMemoryGit
from memhtml.adapters.memory_journals import MemoryJournals
from memhtml.adapters.memory_local_state import MemoryLocalState
from memhtml.adapters.memory_snapshots import MemorySnapshots
from memhtml.adapters.snapshot_files import SnapshotFiles
from memhtml.compose.services import blob_reader
from memhtml.contracts.services import Clock, Signature
from memhtml.store import Store, StoreDeps, init_store

T = TypeVar("T")
E = TypeVar("E")

AUTHOR = Signature("Memory Writer", "writer@example.org")
CLOCK = FixedClock(datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC))
NOW = "2026-05-01T12:00:00Z"


def ok(io: IOResult[T, E]) -> T:
    assert is_successful(io), io
    return unsafe_perform_io(io.unwrap())


def err(io: IOResult[T, E]) -> E:
    assert not is_successful(io), io
    return unsafe_perform_io(io.failure())


def make_store(root: Path, *, bare: bool = False, state: bool = True, worktree: bool = True,
               init: bool = True) -> tuple[Store, PygitService]:
    """A fresh repository at ``root`` made into a store (a checkout unless ``bare``)."""
    git = ok(PygitService.init(root, bare=bare))
    kept = state and not bare
    deps = StoreDeps(
        git=git,
        clock=CLOCK,
        author=AUTHOR,
        worktree=root if worktree and not bare else None,
        journals=JournalFiles(root / ".git") if worktree and not bare else None,
        snapshots=SnapshotFiles(root / ".memhtml", blob_reader(git)) if kept else None,
        local=LocalStateFiles(root / ".memhtml") if kept else None,
    )
    if init:
        ok(init_store(deps))
    return Store(deps), git


def state_dir_of(store: Store) -> Path:
    """The state directory of a store whose snapshots are on disk (``make_store``)."""
    snapshots = store.deps.snapshots
    assert isinstance(snapshots, SnapshotFiles), snapshots
    return snapshots.state_dir


def make_memory_store(git: InMemoryGit | None = None, *, clock: Clock = CLOCK,
                      init: bool = True) -> tuple[Store, InMemoryGit]:
    """A store on ``InMemoryGit`` (bare, no state directory): what ``make_store(bare=True)``
    builds, with no file system. Pass ``git`` to use a subclass that interferes."""
    memory = git if git is not None else InMemoryGit(bare=True)
    deps = StoreDeps(git=memory, clock=clock, author=AUTHOR)
    if init:
        ok(init_store(deps))
    return Store(deps), memory


IN_MEMORY_CHECKOUT = Path("/in-memory/checkout")
"""The ``worktree`` a store on the twins names: never opened, since its files, index,
lock, marks, snapshots and state directory are all the twins' (``InMemoryGit``,
``MemoryJournals``, ``MemorySnapshots``, ``MemoryLocalState``)."""


def make_memory_checkout_store(*, clock: Clock = CLOCK, init: bool = True
                               ) -> tuple[Store, InMemoryGit, MemoryJournals]:
    """A store keeping a checkout up to date, every part of it in memory: the twin's
    working tree and index, the marks of writes in flight, the snapshots and this
    clone's directory."""
    memory, journals = InMemoryGit(bare=False), MemoryJournals()
    deps = StoreDeps(git=memory, clock=clock, author=AUTHOR, worktree=IN_MEMORY_CHECKOUT,
                     journals=journals, snapshots=MemorySnapshots(),
                     local=MemoryLocalState(IN_MEMORY_CHECKOUT / ".git" / "memhtml"))
    if init:
        ok(init_store(deps))
    return Store(deps), memory, journals


def git_cli(root: Path, *args: str) -> str:
    """Run the git command line in ``root`` and return its stdout."""
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def tip(store: Store) -> str | None:
    return ok(store.tip())
