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
from pathlib import Path

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import RefMoved
from memhtml.contracts.journals import Journal, PathStep
from memhtml.contracts.services import GitService, PathChange, TreeEntry
from memhtml.store.checkout import (
    Synced,
    bring_up_to_date,
    drop_journal,
    git_blob_id,
    index_lock_free,
    mark_landed,
    write_journal,
)
from memhtml.store.deps import StoreDeps
from memhtml.store.edits import uncommitted_in
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
    pending: bool = False
    """The commit landed but git's index lock kept the checkout from following; the
    next memhtml command brings it up to date (the write is marked until then)."""
    off_branch: bool = False
    """The checkout is on another branch than the one written, so it was left alone."""


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
    trailers: tuple[tuple[str, str], ...] = ()
    """More trailers after the op and path ones, in order (a sleep phase's
    ``Memhtml-Run``, ``Memhtml-Phase``, ``Memhtml-Counts``, ``Memhtml-Base``)."""
    merge_parent: str | None = None
    """A second parent: the draft is a merge of this commit into ``parent`` (sync),
    so the other side's history stays reachable. It lands even with no changes."""


Derive = Callable[[], IOResult[Draft, StoreError]]


def commit_message(draft: Draft) -> str:
    """Subject, one body line, and the trailers ``log`` and review read back."""
    op = draft.label or (draft.ops[0] if len(set(draft.ops)) == 1 else "batch")
    body = _WS.sub(" ", draft.body).strip()
    if len(body) > BODY_LINE_MAX:
        body = body[: BODY_LINE_MAX - 1].rstrip() + "…"
    trailers = [f"Memhtml-Op: {name}" for name in dict.fromkeys(draft.ops)]
    trailers += [f"Memhtml-Path: {c.path}" for c in sorted(draft.changes, key=lambda c: c.path)]
    trailers += [f"{key}: {_WS.sub(' ', value).strip()}" for key, value in draft.trailers]
    parts = [f"memhtml {op}: {draft.subject}"]
    if body:
        parts.append(body)
    parts.append("\n".join(trailers))
    return "\n\n".join(parts) + "\n"


def land(deps: StoreDeps, derive: Derive, rng: random.Random | None = None, *,
         guard_edits: bool = False, attempts: int = MAX_ATTEMPTS
         ) -> IOResult[Landed, StoreError]:
    """Derive and commit until the swap holds, the derivation fails, or ``attempts``
    run out (``RefMoved`` then: the branch kept moving).

    With ``guard_edits`` (every door a person or an agent calls), a draft that would
    change a path the person has edited in the checkout and not committed is refused,
    as is any draft while git has a merge or rebase waiting there: the person's next
    ``git commit -a`` would otherwise put their file back over the change.

    In a checkout, each attempt first waits for git's index lock to be free (and
    refuses, committing nothing, when it stays held) and records the write's paths
    in a durable mark; the mark is dropped once the checkout is up to date, so a
    process killed between the branch moving and the index following leaves it for
    the next command to finish (``checkout.finish_journals``).
    """
    jitter = rng or random.Random()
    git_dir = deps.checkout_git_dir

    def attempt(number: int) -> IOResult[Landed, StoreError]:
        return derive().bind(lambda draft: commit(number, draft))

    def commit(number: int, draft: Draft) -> IOResult[Landed, StoreError]:
        if not draft.changes and draft.merge_parent is None:
            return IOSuccess(Landed(draft.parent or "", (), "", draft.primary))
        checked = _unedited(deps, draft) if guard_edits else IOSuccess(None)
        return checked.bind(lambda _: _marked(deps, git_dir, draft)).bind(
            lambda journal: swap(number, draft, journal))

    def swap(number: int, draft: Draft, journal: Journal | None
             ) -> IOResult[Landed, StoreError]:
        message = commit_message(draft)
        committed: IOResult[str, StoreError] = (
            deps.git.commit(deps.ref, draft.parent, draft.changes, message, deps.author,
                            deps.clock.now())
            if draft.merge_parent is None or draft.parent is None else
            deps.git.commit_merge(deps.ref, draft.parent, draft.merge_parent, draft.changes,
                                  message, deps.author, deps.clock.now()))

        def lost(failure: StoreError) -> IOResult[Landed, StoreError]:
            unmarked = drop_journal(deps.journals, journal)
            return unmarked.bind(lambda _: retry(number, failure))

        # Bringing the checkout up to date never fails (what it cannot do it reports,
        # and leaves marked), so ``lash`` below only ever sees the commit's failure.
        return committed.bind(lambda sha: _synced(deps, sha, draft, message, journal)).lash(
            lost)

    def retry(number: int, failure: StoreError) -> IOResult[Landed, StoreError]:
        if not isinstance(failure, RefMoved) or number + 1 >= attempts:
            return IOFailure(failure)
        ceiling = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * (2 ** min(number, 10)))
        deps.clock.sleep(jitter.uniform(0.0, ceiling))
        return attempt(number + 1)

    return attempt(0)


def _steps(draft: Draft) -> tuple[PathStep, ...]:
    return tuple(PathStep(c.path, _blob(draft.before.get(c.path)), _blob(c.data))
                 for c in draft.changes)


def _unedited(deps: StoreDeps, draft: Draft) -> IOResult[None, StoreError]:
    """The draft's paths as the tip it read holds them, checked against the checkout."""
    before = {c.path: _blob(draft.before.get(c.path)) for c in draft.changes}
    return uncommitted_in(deps, before)


def _blob(data: bytes | None) -> str | None:
    return None if data is None else git_blob_id(data)


def _marked(deps: StoreDeps, git_dir: Path | None, draft: Draft
            ) -> IOResult[Journal | None, StoreError]:
    journals = deps.journals
    if git_dir is None or journals is None:
        return IOSuccess(None)
    free = index_lock_free(deps.git, git_dir, deps.clock.sleep)
    at = deps.clock.now().timestamp()
    # A merge commit is made only on a parent (see ``swap``): its mark names both.
    second = draft.merge_parent if draft.parent is not None else None
    return free.bind(lambda _: write_journal(journals, deps.ref, draft.parent, _steps(draft),
                                             at, merge_parent=second))


def _synced(deps: StoreDeps, sha: str, draft: Draft, message: str, journal: Journal | None
            ) -> IOResult[Landed, StoreError]:
    # The mark is kept after landing (``recovery`` drops it once it is safe): a
    # person's git commit started from an index read before this write could still
    # undo it. The checkout is brought to the branch as it stands (a later writer's
    # version included), and only where it still holds what was there before.
    paths = tuple(sorted(c.path for c in draft.changes))
    return _followed(deps, sha, paths, journal, message, draft.primary)


def forward(deps: StoreDeps, expected: str | None, target: str, *, guard_edits: bool = True
            ) -> IOResult[Landed, StoreError]:
    """Move the store's branch from ``expected`` to the existing commit ``target`` (a
    fast-forward: a pull that found nothing local to merge), and bring the checkout
    along the way a write does: refused when the person has edited, and not
    committed, a path the move changes; marked durably before the branch moves;
    each path rewritten only where the checkout still holds the old version.
    ``RefMoved`` when the branch no longer names ``expected``."""
    git = deps.git

    def checked(found: tuple[PathStep, ...]) -> IOResult[tuple[PathStep, ...], StoreError]:
        if not guard_edits:
            return IOSuccess(found)
        return uncommitted_in(deps, {s.path: s.before for s in found}).map(lambda _: found)

    def move(found: tuple[PathStep, ...]) -> IOResult[Landed, StoreError]:
        git_dir, journals = deps.checkout_git_dir, deps.journals
        marked: IOResult[Journal | None, StoreError] = IOSuccess(None)
        if git_dir is not None and journals is not None and found:
            at = deps.clock.now().timestamp()
            marked = index_lock_free(deps.git, git_dir, deps.clock.sleep).bind(
                lambda _: write_journal(journals, deps.ref, expected, found, at,
                                        target=target))
        paths_moved = tuple(s.path for s in found)

        def moved(journal: Journal | None) -> IOResult[Landed, StoreError]:
            swapped: IOResult[None, StoreError] = git.move_ref(deps.ref, expected, target)

            def lost(error: StoreError) -> IOResult[Journal | None, StoreError]:
                unmarked = drop_journal(deps.journals, journal)
                return unmarked.bind(lambda _: IOFailure(error))

            return swapped.map(lambda _: journal).lash(lost).bind(
                lambda kept: _followed(deps, target, paths_moved, kept))

        return marked.bind(moved)

    return moved_steps(git, expected, target).bind(checked).bind(move)


def moved_steps(git: GitService, old: str | None, new: str
                ) -> IOResult[tuple[PathStep, ...], StoreError]:
    """Each path that differs between two commits with its blob at each (None: absent
    there, or a symbolic link, which the checkout never writes): the steps a checkout
    takes when its branch moves from ``old`` (None: no commit) to ``new``."""
    def blobs(entries: tuple[TreeEntry, ...]) -> dict[str, str]:
        return {e.path: e.blob_id for e in entries if not e.is_symlink}

    def paths() -> IOResult[tuple[str, ...], StoreError]:
        if old is None:
            return git.list_tree(new).map(lambda es: tuple(e.path for e in es))
        return git.changed_paths(old, new)

    def steps(changed: tuple[str, ...]) -> IOResult[tuple[PathStep, ...], StoreError]:
        before: IOResult[tuple[TreeEntry, ...], StoreError] = (
            IOSuccess(()) if old is None else git.entries_at(old, changed))
        return before.bind(lambda was: git.entries_at(new, changed).map(
            lambda now: tuple(PathStep(p, blobs(was).get(p), blobs(now).get(p))
                              for p in changed)))

    return paths().bind(steps)


def _followed(deps: StoreDeps, sha: str, paths: tuple[str, ...], journal: Journal | None,
              message: str = "", primary: str | None = None) -> IOResult[Landed, StoreError]:
    """The checkout brought to the branch after it moved to ``sha``, where it still
    holds what was there before; what it cannot do is reported, never a failure."""
    worktree = deps.worktree
    if worktree is None or journal is None:
        return IOSuccess(Landed(sha, paths, message, primary))
    synced = bring_up_to_date(deps.git, deps.ref, journal.steps).lash(
        lambda _: IOSuccess(Synced((), paths, False)))
    return synced.bind(lambda done: mark_landed(deps.journals, journal, sha, done).map(
        lambda _: Landed(sha, paths, message, primary, done.kept,
                         pending=not done.index_updated, off_branch=done.off_branch)))
