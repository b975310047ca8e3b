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
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

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
    last_moved: RefMoved | None = None
    for attempt in range(MAX_ATTEMPTS):
        drafted = derive()
        if not is_successful(drafted):
            return IOFailure(unsafe_perform_io(drafted.failure()))
        draft = unsafe_perform_io(drafted.unwrap())
        paths = tuple(sorted(c.path for c in draft.changes))
        if not draft.changes:
            return IOSuccess(Landed(draft.parent or "", (), "", draft.primary))
        message = commit_message(draft)
        committed = deps.git.commit(
            deps.ref, draft.parent, draft.changes, message, deps.author, deps.clock.now()
        )
        if is_successful(committed):
            sha = unsafe_perform_io(committed.unwrap())
            unsynced = _sync(deps, sha, draft)
            return IOSuccess(Landed(sha, paths, message, draft.primary, unsynced))
        failure = unsafe_perform_io(committed.failure())
        if not isinstance(failure, RefMoved):
            return IOFailure(failure)
        last_moved = failure
        ceiling = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * (2 ** min(attempt, 10)))
        deps.clock.sleep(jitter.uniform(0.0, ceiling))
    assert last_moved is not None
    return IOFailure(last_moved)


def _sync(deps: StoreDeps, sha: str, draft: Draft) -> tuple[str, ...]:
    worktree = deps.worktree
    if worktree is None:
        return ()
    # Only a checkout whose HEAD is this very commit is touched: HEAD on another
    # branch, detached, or already moved on by another writer is left as it is.
    head = deps.git.resolve("HEAD")
    if not is_successful(head) or unsafe_perform_io(head.unwrap()) != sha:
        return tuple(sorted(c.path for c in draft.changes))
    return sync_checkout(deps.git, worktree, draft.changes, draft.before)
