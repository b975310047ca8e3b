"""Bring a checkout up to date after a commit made without it, never clobbering.

Commits are built in memory, so a checkout beside the repository falls behind its
branch. A changed path is written into the working tree only when the file there
still holds the parent commit's bytes (or is absent where the parent had none);
anything else is a local modification and is left alone, reported as unsynced.
The index gets the same compare-and-set, so a later plain ``git commit`` in the
checkout does not read the memhtml commit as a change to revert.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path

from returns.io import IOResult, IOSuccess

from memhtml.contracts.services import GitService, IndexUpdate, PathChange
from memhtml.store.errors import StoreError


def git_blob_id(data: bytes) -> str:
    """The id git gives a blob of these bytes."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


def _through_symlink(worktree: Path, path: str) -> bool:
    current = worktree
    for part in path.split("/"):
        current = current / part
        if current.is_symlink():
            return True
    return False


def _current_bytes(target: Path) -> bytes | bool | None:
    """The file's bytes, None when absent, False when something else is there."""
    if not target.exists() and not target.is_symlink():
        return None
    if target.is_symlink() or not target.is_file():
        return False
    try:
        return target.read_bytes()
    except OSError:
        return False


def _write(worktree: Path, target: Path, data: bytes | None) -> bool:
    try:
        if data is None:
            target.unlink()
            parent = target.parent
            while parent != worktree and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent
            return True
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        temporary.write_bytes(data)
        os.replace(temporary, target)
    except OSError:
        return False
    return True


def sync_checkout(
    git: GitService,
    worktree: Path,
    changes: Sequence[PathChange],
    before: Mapping[str, bytes | None],
) -> IOResult[tuple[str, ...], StoreError]:
    """Apply ``changes`` to the checkout where it is safe; return the paths left behind.

    ``before`` holds each changed path's bytes at the parent commit. The caller has
    checked that the checkout's HEAD is the new commit.
    """
    unsynced: list[str] = []
    updates: list[IndexUpdate] = []
    for change in changes:
        old = before.get(change.path)
        updates.append(
            IndexUpdate(
                change.path,
                None if old is None else git_blob_id(old),
                None if change.data is None else git_blob_id(change.data),
            )
        )
        target = worktree / change.path
        if _through_symlink(worktree, change.path) or _current_bytes(target) != old:
            unsynced.append(change.path)
            continue
        if old is None and change.data is None:
            continue
        if not _write(worktree, target, change.data):
            unsynced.append(change.path)
    # The commit has landed; an index that could not be updated (locked by a
    # concurrent git command) only means the checkout shows the change as unstaged.
    every = tuple(sorted({*unsynced, *(u.path for u in updates)}))
    return git.update_index(updates).map(lambda _: tuple(sorted(unsynced))).lash(
        lambda _: IOSuccess(every))
