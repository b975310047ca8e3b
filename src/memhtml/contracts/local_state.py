"""The local-state port: this clone's own directory, ``<git-dir>/memhtml/``, as a whole.

What lives inside has ports of its own (the write marks, ``contracts.journals``; the
snapshots, ``store.snapshot``; the vectors, ``contracts.vectors``; the state plane,
``contracts.services.StatePlane``). This one answers for the directory itself: made
when a store is set up, and looked over by ``doctor`` for entries memhtml never put
there. A store reads and writes none of it with the OS directly, so the store's laws
run on the in-memory twin as on disk.

On disk: ``adapters.local_state_files.LocalStateFiles``; in memory:
``adapters.memory_local_state.MemoryLocalState``; both run
``tests/contract/test_local_state_contract.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from returns.io import IOResult

STATE_DIRECTORIES = frozenset({"pending", "snapshots", "vectors"})
"""Directories local state keeps at its top (and ``vectors/<space>/`` below)."""
STATE_FILE_NAMES = (".snapshot", ".json", ".npy", ".txt", ".tmp", "state.db",
                    "state.db-wal", "state.db-shm", "state.db-journal")
"""How the files local state keeps end: a directory with such a name stands where a
file of memhtml's belongs."""


@dataclass(frozen=True, slots=True)
class OddEntry:
    """An entry in local state that memhtml never puts there: ``path`` is where it is
    (under ``LocalState.root``), ``what`` says what it is (``a FIFO``, ``a directory
    named as a file``, ``a file where a directory belongs``, ...)."""

    path: Path
    what: str


class LocalState(Protocol):
    """This clone's own directory."""

    @property
    def root(self) -> Path:
        """Where it is: ``<git-dir>/memhtml``. A name for messages; everything read or
        written under it goes through a port."""
        ...

    def prepare(self) -> IOResult[None, str]:
        """Make the directory when it is missing (an existing one is fine); why not,
        in words, when it cannot be made."""
        ...

    def odd_entries(self) -> tuple[OddEntry, ...]:
        """Every entry memhtml never puts there: a FIFO, a socket, a device or a
        symbolic link anywhere, a directory with a file's name, a file where a
        directory belongs, the directory itself not one. Looked at by name only,
        nothing followed or opened, so nothing found there can hang the look."""
        ...
