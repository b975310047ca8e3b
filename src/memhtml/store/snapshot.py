"""The snapshot port: this clone's parsed versions, kept by commit, so a cold process
skips the parse.

A CLI call is a fresh process; re-parsing five thousand files each time costs
seconds, while loading a recent commit's version and advancing it to the tip costs
the delta. A snapshot is a cache and nothing more: one that cannot be used (missing,
damaged, written by another format, naming another commit) is a ``SnapshotMiss``,
discarded and rebuilt from git, never trusted and never a failed command.

On disk the snapshots are ``adapters.snapshot_files.SnapshotFiles`` (arrays under
``<git-dir>/memhtml/snapshots``, read without ever running code); in memory,
``adapters.memory_snapshots.MemorySnapshots``. Both run one contract suite
(``tests/contract/test_snapshot_contract.py``). Here, in the store, because a
snapshot holds a ``HeadVersion``, which ``contracts`` cannot name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from returns.io import IOResult

from memhtml.head import HeadVersion

SNAPSHOTS_KEPT = 2
"""Snapshots a cache keeps: the newest saved, and the one before it (a reader that
started on it while the newest was written still finds it)."""


@dataclass(frozen=True, slots=True)
class SnapshotMiss:
    """Why a snapshot was not used or not kept: ``key`` names it (its commit, or what
    the cache found under a snapshot's name), ``reason`` says what was wrong."""

    key: str
    reason: str


class SnapshotCache(Protocol):
    """This clone's snapshots. Each key is the commit whose version it holds."""

    def saved(self) -> tuple[str, ...]:
        """The snapshots there are, newest saved first. A key may name something that
        will not load (a damaged file under a commit's name): ``load`` says so."""
        ...

    def load(self, key: str) -> IOResult[HeadVersion, SnapshotMiss]:
        """The version ``key`` holds, checked whole (its postings summed, its records'
        layout checked); its texts are checked when first read, and a text damaged
        since is read again from git by blob id (or the cache's ``DeferredTextError``
        names it, and the snapshot is dropped)."""
        ...

    def save(self, version: HeadVersion) -> IOResult[None, SnapshotMiss]:
        """Keep ``version`` under its commit (a reader sees it whole or not at all),
        and only the newest ``SNAPSHOTS_KEPT``. A version with no commit is refused."""
        ...

    def discard(self, key: str) -> None:
        """Drop a snapshot that will not be used. One already gone, or one that cannot
        be removed, is fine: the next reader judges it again."""
        ...
