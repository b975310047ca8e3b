"""Writers keep landing on main while a run is open: every write lands, and the run's
merge lands beside them (a merge commit on main's tip), keeping every write."""

from __future__ import annotations

import queue
import time
from datetime import UTC, datetime
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from pathlib import Path

import pytest
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.clock import FixedClock
from memhtml.adapters.git import PygitService
from memhtml.adapters.memory_state import InMemoryState
from memhtml.compose.sleep import head_gate
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.merge import merge_run
from memhtml.sleep.runner import run_sleep
from memhtml.store import Store, StoreDeps, WriteInput, describe, write
from tests.child_processes import child_context
from tests.integration.store.store_support import AUTHOR, CLOCK, make_store, ok

WRITERS = 8
WRITES = 20
RUN_AT = datetime(2026, 11, 30, 4, 0, 0, tzinfo=UTC)


def _writer(git_dir: str, writer: int, go: Event, results: Queue[str]) -> None:
    git = unsafe_perform_io(PygitService.open(git_dir).unwrap())
    store = Store(StoreDeps(git, CLOCK, AUTHOR))
    go.wait(60)
    for i in range(WRITES):
        landed = write(store, WriteInput(title=f"Writer {writer} note {i}",
                                         claim=f"Writer {writer} wrote note {i}."))
        results.put(unsafe_perform_io(landed.unwrap()).primary or "" if is_successful(landed)
                    else "FAILED " + describe(unsafe_perform_io(landed.failure())))


@pytest.mark.slow
def test_writes_during_a_run_all_land_and_the_merge_keeps_them(tmp_path: Path) -> None:
    store, git = make_store(tmp_path / "store.git", bare=True)
    ok(write(store, WriteInput(title="Before", claim="Written before the run.")))
    context = child_context()
    go = context.Event()
    results: Queue[str] = context.Queue()
    procs = [context.Process(target=_writer, args=(git.path, w, go, results))
             for w in range(WRITERS)]
    for proc in procs:
        proc.start()
    state = InMemoryState()

    def release(position: int, phase: str, what: str) -> None:
        if phase == "preflight" and what == "start":
            go.set()  # the branch is cut: the writers go while the phases run

    deps = SleepDeps(git=git, clock=FixedClock(RUN_AT), author=AUTHOR, state=state,
                     gate=head_gate, progress=release)
    base = ok(git.resolve("main"))
    report = ok(run_sleep(deps))
    assert report.ok and report.base_sha == base
    landed: list[str] = []
    deadline = time.monotonic() + 180
    while len(landed) < WRITERS * WRITES and time.monotonic() < deadline:
        try:
            landed.append(results.get(timeout=1))
        except queue.Empty:
            if not any(proc.is_alive() for proc in procs) and results.empty():
                break
    for proc in procs:
        proc.join(timeout=60)
    assert [proc.exitcode for proc in procs] == [0] * WRITERS
    assert [r for r in landed if r.startswith("FAILED")] == []
    assert len(set(landed)) == WRITERS * WRITES
    store.forget()
    version = ok(store.head())
    assert all(version.get(path) is not None for path in landed)

    main = ok(git.resolve("main"))
    merged = ok(merge_run(deps, report.run_id))
    assert merged.merged and merged.replayed_onto == main, merged
    assert ok(git.commit_info(ok(git.resolve("main")))).parents == (main, report.head_sha)
    final = ok(Store(StoreDeps(git, CLOCK, AUTHOR)).head())
    assert all(final.get(path) is not None for path in landed)
