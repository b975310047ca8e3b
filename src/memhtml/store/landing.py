"""Landing a change: one commit, moved onto the branch by compare-and-swap, retried.

A door never edits a tree in place. It derives its changes from the version at
the tip it read, and the commit names that tip as its expected parent; when
another writer moved the branch first, the swap is refused and the door derives
again from the new tip. Re-deriving, rather than replaying the old changes, is
what keeps a second writer's work: a path chosen as free, an inbound href to
rewrite, a stamp, are all recomputed against what actually landed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import RefMoved
from memhtml.contracts.services import PathChange
from memhtml.store.checkout import sync_checkout
from memhtml.store.deps import StoreDeps
from memhtml.store.errors import StoreError

MAX_ATTEMPTS = 64
"""Bound on re-derivations after a lost swap. Each loss means another writer
landed, so the bound is only reached by sustained contention from many writers."""
BACKOFF_BASE_SECONDS = 0.002
BACKOFF_CAP_SECONDS = 0.05
BODY_LINE_MAX = 200

_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class Landed:
    """What a door committed. ``commit`` is the tip the change landed as (the tip it
    read when there was nothing to change, and then ``paths`` is empty)."""

    commit: str
    paths: tuple[str, ...]
    message: str
    primary: str | None = None
    """The path the door was about: the new memory of a write or correct, the
    original path of an archive or move. None for a batch or an init."""
    unsynced: tuple[str, ...] = ()
    """Paths the checkout was not brought up to date for (a local modification)."""


@dataclass(frozen=True)
class Draft:
    """One attempt's derivation against one tip."""

    parent: str | None
    changes: tuple[PathChange, ...]
    ops: tuple[str, ...]
    """Door names, in order, one ``Memhtml-Op`` trailer each."""
    subject: str
    """The part after ``memhtml <op>: `` in the subject line."""
    body: str
    before: Mapping[str, bytes | None] = field(default_factory=dict)
    """Each changed path's bytes at ``parent``, for the checkout sync."""
    primary: str | None = None
    label: str | None = None
    """The op named in the subject when it is not the single door's (``batch``)."""


Derive = Callable[[], IOResult[Draft, StoreError]]


def commit_message(draft: Draft) -> str:
    """Subject, one body line, and the trailers ``log`` and review read back."""
    op = draft.label or (draft.ops[0] if len(set(draft.ops)) == 1 else "batch")
    body = _WS.sub(" ", draft.body).strip()
    if len(body) > BODY_LINE_MAX:
        body = body[: BODY_LINE_MAX - 1].rstrip() + "…"
    trailers = [f"Memhtml-Op: {name}" for name in dict.fromkeys(draft.ops)]
    trailers += [f"Memhtml-Path: {c.path}" for c in sorted(draft.changes, key=lambda c: c.path)]
    parts = [f"memhtml {op}: {draft.subject}"]
    if body:
        parts.append(body)
    parts.append("\n".join(trailers))
    return "\n\n".join(parts) + "\n"


def land(deps: StoreDeps, derive: Derive, rng: random.Random | None = None
         ) -> IOResult[Landed, StoreError]:
    """Derive and commit until the swap holds, the derivation fails, or attempts run out."""
    jitter = rng or random.Random()

    def attempt(number: int) -> IOResult[Landed, StoreError]:
        return derive().bind(lambda draft: commit(number, draft))

    def commit(number: int, draft: Draft) -> IOResult[Landed, StoreError]:
        if not draft.changes:
            return IOSuccess(Landed(draft.parent or "", (), "", draft.primary))
        message = commit_message(draft)
        committed: IOResult[str, StoreError] = deps.git.commit(
            deps.ref, draft.parent, draft.changes, message, deps.author, deps.clock.now()
        )
        # Syncing the checkout never fails (what it cannot sync it reports as
        # unsynced), so ``lash`` below only ever sees the commit's own failure.
        return committed.bind(lambda sha: _synced(deps, sha, draft, message)).lash(
            lambda failure: retry(number, failure))

    def retry(number: int, failure: StoreError) -> IOResult[Landed, StoreError]:
        if not isinstance(failure, RefMoved) or number + 1 >= MAX_ATTEMPTS:
            return IOFailure(failure)
        ceiling = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * (2 ** min(number, 10)))
        deps.clock.sleep(jitter.uniform(0.0, ceiling))
        return attempt(number + 1)

    return attempt(0)


def _synced(deps: StoreDeps, sha: str, draft: Draft, message: str
            ) -> IOResult[Landed, StoreError]:
    paths = tuple(sorted(c.path for c in draft.changes))

    def landed(unsynced: tuple[str, ...]) -> Landed:
        return Landed(sha, paths, message, draft.primary, unsynced)

    worktree = deps.worktree
    if worktree is None:
        return IOSuccess(landed(()))

    def sync(head: str) -> IOResult[tuple[str, ...], StoreError]:
        # Only a checkout whose HEAD is this very commit is touched: HEAD on another
        # branch, detached, or already moved on by another writer is left as it is.
        if head != sha:
            return IOSuccess(paths)
        return sync_checkout(deps.git, worktree, draft.changes, draft.before)

    resolved: IOResult[str, StoreError] = deps.git.resolve("HEAD")
    return resolved.bind(sync).lash(lambda _: IOSuccess(paths)).map(landed)
