"""The MCP server sharing its store through a git remote (the ``sync_remote`` setting).

Off by default. When on, a call first pulls if the last pull is older than
``sync_seconds``, and a write is pushed ``sync_seconds`` after it by a timer, so the
writes an agent makes in a burst go out in one push. Pull and push are one
``memhtml sync`` (fetch, merge fact by fact, push), run under the gate's lock like
any door, so a sync never interleaves with a write.

A sync that fails (the remote unreachable, a credential refused, a checkout edit in
the way, a remote bringing paths the doors refuse) never touches the local write: it
is committed before any sync starts. The failure is told in the reply of the call
that ran it (or, for the timer's, of the next call), and the push is tried again on
the next call. A sync that took out live memories the remote deleted says which.

A remote that lets this clone read but not push (a read-only member's credentials)
is not a failure: pulls go on, and the refusal is told once, in the reply of the call
whose sync first met it, not on every call after.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.compose import Services, explain
from memhtml.contracts.credentials import redact_credentials
from memhtml.store import Store

__all__ = ["ServerSync"]


class ServerSync:
    """When to pull and push, and what went wrong last. Every method runs under the
    gate's lock; the timer ``wrote`` starts takes the lock through the gate's ``flush``."""

    def __init__(self, services: Services, remote: str, seconds: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._services = services
        self._remote = remote
        self._seconds = seconds
        self._clock = clock
        self._last_pull: float | None = None
        self._pending = False
        self._timer: threading.Timer | None = None
        self._unreported: str | None = None
        self._told_read_only = False
        self._notes = threading.local()

    @property
    def pending(self) -> bool:
        """A write has not reached the remote yet."""
        return self._pending

    def before(self, store: Store) -> None:
        """Pull when the last pull is stale, or push a write still waiting."""
        stale = self._last_pull is None or self._clock() - self._last_pull >= self._seconds
        if stale or (self._pending and self._timer is None):
            self.run(store)

    def wrote(self, flush: Callable[[], None]) -> None:
        """A door committed: push it ``sync_seconds`` from now, with whatever follows."""
        self._pending = True
        if self._timer is None:
            timer = threading.Timer(self._seconds, flush)
            timer.daemon = True
            self._timer = timer
            timer.start()

    def run(self, store: Store) -> None:
        """One sync now; its failure becomes the note of the call that ran it."""
        from memhtml.sync.door import sync

        # A sync now pushes what the timer was waiting to push: it is not needed again.
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        branch = self._services.settings.branch
        remotes = self._services.remote
        if remotes is None:
            self._note("sync is on but this store has no repository to run git in")
            return
        try:
            outcome = sync(store, remotes, self._remote, branch)
        except Exception as crash:
            # Every failure a sync knows is a value; one it does not know must still
            # cost no call and no write (the door runs after this, on the local branch),
            # so it is told like any other, by its type and words.
            self._note(f"sync with {self._remote} failed unexpectedly "
                       f"({type(crash).__name__}: {redact_credentials(str(crash))}). "
                       "Every write is committed in "
                       "this clone; the sync is tried again on the next call")
            return
        if is_successful(outcome):
            self._last_pull = self._clock()
            self._pending = False
            done = unsafe_perform_io(outcome.unwrap())
            deleted = done.deleted
            if done.push_refused is not None and not self._told_read_only:
                self._told_read_only = True
                self._note(f"sync with {self._remote}: {explain(done.push_refused)}")
            if deleted:
                self._note(f"sync with {self._remote} took out {len(deleted)} live "
                           f"memor{'y' if len(deleted) == 1 else 'ies'} the remote "
                           f"deleted: {', '.join(deleted)}; memhtml restore PATH brings "
                           "one back")
            return
        error = unsafe_perform_io(outcome.failure())
        self._note(f"sync with {self._remote} failed: {explain(error)}. Every write is "
                   "committed in this clone; the push is tried again on the next call")

    def flush_failed(self) -> None:
        """Called by the timer's sync: keep its note for the next call's reply."""
        self._unreported = getattr(self._notes, "text", None)
        self._notes.text = None

    def take_note(self) -> str | None:
        """What this thread's call should add to its reply, once."""
        text: str | None = getattr(self._notes, "text", None)
        self._notes.text = None
        if self._unreported is not None:
            text = self._unreported if text is None else f"{self._unreported}\n{text}"
            self._unreported = None
        return text

    def stop(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def _note(self, text: str) -> None:
        prior: str | None = getattr(self._notes, "text", None)
        self._notes.text = text if prior is None else f"{prior}\n{text}"
