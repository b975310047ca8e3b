"""One thread in front of the store: every tool call reads a fresh head, one at a time.

The SDK runs each synchronous tool on a worker thread, so calls that arrive together
run together. ``Store`` keeps its parsed head in a plain attribute and is not meant to
be shared between threads; two calls advancing it at once could cache the older of
two versions after the newer one. Git's compare-and-swap already keeps concurrent
*commits* safe, so the serialising is only about the cache, and it costs little: a
search takes about a millisecond, and a write waits on git anyway.

Every door runs on the gate's one store thread (the tool's worker thread waits for
it), not on whichever worker the SDK picked. glibc gives each thread that allocates
its own heap (an arena, up to eight per core), and memory freed in an arena stays
with that arena: with a head's versions built and dropped on a dozen worker threads,
the server's resident set grew with every arena the calls had touched (on 4,000
memories, 116 MB over 3,000 mixed calls on a thread per call; flat, apart from the
lexical index's compaction, on one thread). The lock stays for the sync timer, which
runs on a thread of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from returns.io import IOResult
from returns.result import Result

from memhtml.compose import Services, perform
from memhtml.mcp.syncing import ServerSync
from memhtml.store import Landed, Store, StoreError, finish_checkout

T = TypeVar("T")


class StoreGate:
    """The server's one store, behind a lock, brought up to date before each door
    (and, with ``sync``, shared through a remote: ``memhtml.mcp.syncing``)."""

    def __init__(self, services: Services, sync: ServerSync | None = None) -> None:
        self._services = services
        self._store = services.store()
        self._lock = threading.Lock()
        self._sync = sync
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memhtml-store")
        self._calls = threading.local()

    @property
    def store(self) -> Store:
        return self._store

    @property
    def services(self) -> Services:
        return self._services

    def run(self, door: Callable[[Store], IOResult[T, StoreError]]) -> Result[T, StoreError]:
        """Advance the head to the branch tip, then run ``door`` against it, on the
        store thread; what the sync has to say about it is kept for ``note``.

        Advancing first is what makes a commit made outside the server (the CLI, a
        person with git) visible to the very next call; ``advance_head`` costs only
        the paths that changed since the cached version.
        """
        outcome, note = self._thread.submit(self._run, door).result()
        self._calls.note = note
        return outcome

    def serial(self, work: Callable[[], T]) -> T:
        """Run ``work`` on the store thread under the lock, after finishing a write
        another process left half done, as a door runs: for an edge's work that is not
        a store door (a sleep run's review or merge, over the same repository)."""
        def locked() -> T:
            with self._lock:
                finish_checkout(self._store.deps)
                return work()

        return self._thread.submit(locked).result()

    def _run(self, door: Callable[[Store], IOResult[T, StoreError]]
             ) -> tuple[Result[T, StoreError], str | None]:
        with self._lock:
            # A write another process left half done is finished first, as every CLI
            # command does; its outcome is the door's concern only if git fails.
            finished = finish_checkout(self._store.deps)
            sync = self._sync
            if sync is not None:
                sync.before(self._store)
            before = self._tip() if sync is not None else None
            outcome = perform(finished.bind(lambda _: self._store.head()).bind(
                lambda _: self._store.run(door)))
            vectors = self._embedded(outcome)
            if sync is not None and self._tip() != before:
                sync.wrote(self.flush)
            note = None if sync is None else sync.take_note()
        return outcome, "\n".join(n for n in (vectors, note) if n) or None

    def _embedded(self, outcome: Result[T, StoreError]) -> str | None:
        """After a door landed memories, embed them (``Services.top_up``), so the next
        search is hybrid over them; what could not be embedded is the call's note."""
        landed = outcome.value_or(None)
        if not isinstance(landed, Landed) or not landed.paths:
            return None
        topped = perform(self._store.head().bind(
            lambda version: self._services.top_up(version, landed.paths)))
        return topped.map(lambda top: top.note).value_or(None)

    def _tip(self) -> str | None:
        return perform(self._store.tip()).value_or(None)

    def flush(self) -> None:
        """Sync now (the write timer's call): push what is waiting."""
        if self._sync is None:
            return
        with self._lock:
            self._sync.run(self._store)
            self._sync.flush_failed()

    def note(self) -> str | None:
        """What the sync had to tell about this thread's last ``run``, once."""
        text: str | None = getattr(self._calls, "note", None)
        self._calls.note = None
        return text

    def drain(self) -> None:
        """Wait until the store thread has run every door already handed to it. An
        HTTP server's stop cancels the requests still in flight, but not the doors
        their worker threads passed here: a write one of them started still lands
        before the process ends (the console entry ends it without waiting for
        threads)."""
        self._thread.submit(lambda: None).result()

    def close(self) -> None:
        """At the end of serving: push a write still waiting, stop the timer, and let
        the store thread go."""
        if self._sync is not None:
            self._sync.stop()
            if self._sync.pending:
                self.flush()
        self._thread.shutdown(wait=False)

    def warm(self) -> None:
        """Load the head now, on the store thread, so the first tool call does not
        pay for it. A failure is left for that call to report."""
        self._thread.submit(self._warm).result()

    def _warm(self) -> None:
        with self._lock:
            self._store.head()
