"""Processes writing into one store at once: every write lands, none collides.

The one real multi-process race left: what it adds to the retry tests on the
in-memory double (``tests/unit/store/test_landing_retries.py``) and the threaded race
in the contract suite is libgit2's ref lock file holding between processes.
"""

from __future__ import annotations

import itertools
import queue
import subprocess
import time
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.git import PygitService
from memhtml.adapters.snapshot_files import SnapshotFiles
from memhtml.compose.services import blob_reader
from memhtml.store import Store, StoreDeps, WriteInput, describe, write
from tests.child_processes import child_context
from tests.integration.store.store_support import AUTHOR, CLOCK, make_store, ok

WRITERS = 4
WRITES = 20


def _writer(git_dir: str, state_dir: str, writer: int, start: Barrier,
            results: Queue[tuple[int, int, str]]) -> None:
    git = unsafe_perform_io(PygitService.open(git_dir).unwrap())
    snapshots = SnapshotFiles(Path(state_dir), blob_reader(git))
    store = Store(StoreDeps(git, CLOCK, AUTHOR, snapshots=snapshots))
    start.wait()
    for i in range(WRITES):
        # Every writer uses the same titles, so each path is contested by all of them.
        landed = write(store, WriteInput(title=f"Shared note {i}",
                                         claim=f"Writer {writer} wrote note {i}."))
        if is_successful(landed):
            results.put((writer, i, unsafe_perform_io(landed.unwrap()).primary or ""))
        else:
            results.put((writer, i, "FAILED " + describe(unsafe_perform_io(landed.failure()))))


@pytest.mark.slow
def test_racing_processes_land_every_write(tmp_path: Path) -> None:
    store, git = make_store(tmp_path / "store.git", bare=True)
    state = tmp_path / "state"
    context = child_context()
    start = context.Barrier(WRITERS)
    results: Queue[tuple[int, int, str]] = context.Queue()
    procs = [context.Process(target=_writer, args=(git.path, str(state), w, start, results))
             for w in range(WRITERS)]
    for proc in procs:
        proc.start()
    landed: list[tuple[int, int, str]] = []
    deadline = time.monotonic() + 120
    # A writer that dies says so by its exit code at once, not by a queue that never fills.
    while len(landed) < WRITERS * WRITES and time.monotonic() < deadline:
        try:
            landed.append(results.get(timeout=1))
        except queue.Empty:
            if not any(proc.is_alive() for proc in procs) and results.empty():
                break
    for proc in procs:
        proc.join(timeout=60)
    assert [proc.exitcode for proc in procs] == [0] * WRITERS
    assert len(landed) == WRITERS * WRITES
    failures = [r for r in landed if r[2].startswith("FAILED")]
    assert failures == []
    paths = [r[2] for r in landed]
    assert len(set(paths)) == WRITERS * WRITES
    version = ok(store.head())
    assert version.size == WRITERS * WRITES
    for writer, i, path in landed:
        record = version.get(path)
        assert record is not None
        assert record.claim == f"Writer {writer} wrote note {i}."
    commits = ok(git.commits_between(None, version.sha or ""))
    assert len(commits) == WRITERS * WRITES + 1
    for older, newer in itertools.pairwise(commits):
        assert ok(git.commit_info(newer)).parents == (older,)
    fsck = subprocess.run(["git", "--git-dir", git.path, "fsck", "--strict"],
                          capture_output=True, text=True, check=False)
    assert fsck.returncode == 0, fsck.stderr
    assert "error" not in fsck.stderr.lower()
