"""Where a memory went when its path holds nothing and no archive names it: moved.

An archive keeps the original path below ``archive/<YYYY>/``, so ``store.archived``
finds it in the version alone. A move (``memhtml move``, a sleep run's placement, a
person's ``git mv``) leaves no such trace in the tree: the record of it is the commit.
So the failure path of a read asks the history, as ``git log --follow`` would but by
the memory's own identity rather than by similarity: the newest commit that touched
the path; if that commit removed it, the path it added holding the same article (the
content hash, which reads the article only, and a move rewrites links in the head,
never the article; the title too for an article with no claim), the same file name
first, then the smallest path. From there the memory is followed on, at most
``MOVE_HOPS`` moves, to where the version at hand holds it: live, or archived there.
A path removed in any other way (deleted, or rewritten past recognition while moved)
has moved nowhere, and the read says the memory is not there.

Only the failure path pays for this, and it costs the commits the walk reads back to
the one that touched the path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import reduce
from typing import Final, TypeAlias

from returns.io import IOResult, IOSuccess

from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import CommitInfo, Repository, TreeEntry
from memhtml.head import HeadVersion, is_active, is_archived_path, is_candidate_path, record_from
from memhtml.store.archived import archived_copy
from memhtml.store.errors import Moved, StoreError

MOVE_HOPS: Final = 8
"""Moves followed at most from one path: each costs a walk of the history."""


def _identity(record: MemoryRecord) -> tuple[str, str]:
    return record.content_hash, "" if record.claim.strip() else record.title


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _records(git: Repository, entries: tuple[TreeEntry, ...]
             ) -> IOResult[dict[str, MemoryRecord], StoreError]:
    ids = {e.path: e.blob_id for e in entries if not e.is_symlink}
    blobs: IOResult[Mapping[str, bytes], StoreError] = git.read_blobs(
        sorted(set(ids.values())))

    def parsed(got: Mapping[str, bytes]) -> dict[str, MemoryRecord]:
        out: dict[str, MemoryRecord] = {}
        for path, blob in sorted(ids.items()):
            data = got.get(blob)
            record = None if data is None else record_from(
                data.decode("utf-8", "replace"), path).value_or(None)
            if record is not None:
                out[path] = record
        return out

    return blobs.map(parsed)


def moved_in(git: Repository, commit: CommitInfo, path: str
             ) -> IOResult[str | None, StoreError]:
    """The path ``commit`` moved the memory at ``path`` to, or None when it did not
    move it (it did not remove ``path``, or added nothing holding the same article)."""
    if not commit.parents:
        return IOSuccess(None)
    parent = commit.parents[0]
    before: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(parent, [path])
    after: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(commit.sha, [path])

    def removed(was: tuple[TreeEntry, ...], now: tuple[TreeEntry, ...]
                ) -> IOResult[str | None, StoreError]:
        if not was or now:
            return IOSuccess(None)
        changed: IOResult[tuple[str, ...], StoreError] = git.changed_paths(parent, commit.sha)
        return changed.bind(lambda paths: added(was, sorted(
            p for p in paths if p != path and is_candidate_path(p)
            and not is_archived_path(p))))

    def added(was: tuple[TreeEntry, ...], paths: list[str]) -> IOResult[str | None, StoreError]:
        if not paths:
            return IOSuccess(None)
        old: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(parent, paths)
        new: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(commit.sha, paths)

        def fresh(held: tuple[TreeEntry, ...], made: tuple[TreeEntry, ...]
                  ) -> tuple[TreeEntry, ...]:
            there = {e.path for e in held}
            return (*was, *(e for e in made if e.path not in there))

        return old.bind(lambda held: new.bind(lambda made: _records(
            git, fresh(held, made)).map(lambda records: _chosen(records, path))))

    return before.bind(lambda was: after.bind(lambda now: removed(was, now)))


def _chosen(records: Mapping[str, MemoryRecord], path: str) -> str | None:
    record = records.get(path)
    if record is None:
        return None
    same = sorted(p for p, r in records.items()
                  if p != path and is_active(r) and _identity(r) == _identity(record))
    named = [p for p in same if _name(p) == _name(path)]
    chosen = named or same
    return chosen[0] if chosen else None


def moved_from(git: Repository, version: HeadVersion, rev: str, tree: str
               ) -> IOResult[Moved | None, StoreError]:
    """Where the memory last held at ``tree`` is now, as ``version`` (read at ``rev``)
    holds it, when a commit moved it away; None when no move explains the empty path."""

    def hop(path: str, first: CommitInfo | None, n: int
            ) -> IOResult[Moved | None, StoreError]:
        touching: IOResult[tuple[CommitInfo, ...], StoreError] = git.commits_touching(
            rev, path, 1)
        return touching.bind(lambda found: step(path, found, first, n))

    def step(path: str, found: tuple[CommitInfo, ...], first: CommitInfo | None, n: int
             ) -> IOResult[Moved | None, StoreError]:
        if not found:
            return IOSuccess(None)
        commit = found[0]
        return moved_in(git, commit, path).bind(
            lambda to: IOSuccess(None) if to is None
            else landed(to, first or commit, n))

    def landed(to: str, first: CommitInfo, n: int) -> IOResult[Moved | None, StoreError]:
        held = version.get(to)
        on = first.time.date().isoformat()
        if held is not None and is_active(held):
            return IOSuccess(Moved(tree, to, first.sha, on))
        copy = archived_copy(version.records(), to) if held is None else held
        if copy is not None and copy.archived:
            return IOSuccess(Moved(tree, copy.path, first.sha, on))
        if held is None and n + 1 < MOVE_HOPS:
            return hop(to, first, n + 1)
        return IOSuccess(None)

    return hop(tree, None, 0)


# -- following a memory back: ``log`` -----------------------------------------------------


_Found: TypeAlias = "tuple[list[PathCommit], tuple[str, str] | None]"
"""A scan's state: the history so far, and the (parent, path) a move found goes on at."""


@dataclass(frozen=True, slots=True)
class PathCommit:
    """One commit of a memory's history, and the path the memory had in it."""

    commit: CommitInfo
    path: str


def came_from(git: Repository, commit: CommitInfo, path: str
              ) -> IOResult[str | None, StoreError]:
    """The path ``commit`` moved the memory at ``path`` from, or None: ``commit``
    added ``path`` and removed a path holding the same article (a move, an archive, a
    restore; the same file name first, then the smallest path). A new memory, or a
    correction (a new article), came from nowhere."""
    if not commit.parents:
        return IOSuccess(None)
    parent = commit.parents[0]
    before: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(parent, [path])
    after: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(commit.sha, [path])

    def added(was: tuple[TreeEntry, ...], now: tuple[TreeEntry, ...]
              ) -> IOResult[str | None, StoreError]:
        if was or not now:
            return IOSuccess(None)
        changed: IOResult[tuple[str, ...], StoreError] = git.changed_paths(parent, commit.sha)
        return changed.bind(lambda paths: removed(now, sorted(
            p for p in paths if p != path and is_candidate_path(p))))

    def removed(now: tuple[TreeEntry, ...], paths: list[str]
                ) -> IOResult[str | None, StoreError]:
        if not paths:
            return IOSuccess(None)
        held: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(parent, paths)
        kept: IOResult[tuple[TreeEntry, ...], StoreError] = git.entries_at(commit.sha, paths)

        def sources(then: tuple[TreeEntry, ...], still: tuple[TreeEntry, ...]
                    ) -> IOResult[str | None, StoreError]:
            there = {e.path for e in still}
            gone = tuple(e for e in then if e.path not in there)
            return _records(git, (*now, *gone)).map(lambda records: _source(records, path))

        return held.bind(lambda then: kept.bind(lambda still: sources(then, still)))

    return before.bind(lambda was: after.bind(lambda now: added(was, now)))


def _source(records: Mapping[str, MemoryRecord], path: str) -> str | None:
    record = records.get(path)
    if record is None:
        return None
    same = sorted(p for p, r in records.items() if p != path and _identity(r) == _identity(record))
    named = [p for p in same if _name(p) == _name(path)]
    chosen = named or same
    return chosen[0] if chosen else None


def followed_log(git: Repository, rev: str, tree: str, limit: int
                 ) -> IOResult[list[PathCommit], StoreError]:
    """The commits that touched the memory at ``tree``, newest first, at most
    ``limit``, as ``git log --follow`` would but by the memory's article rather than
    by similarity: the commits that touched the path, until one that moved the memory
    there (``came_from``); from its parent on, those that touched the path it came
    from; and so on, at most ``MOVE_HOPS`` moves. A memory moved away and back is
    followed through where it was meanwhile."""

    def walk(at: str, path: str, got: list[PathCommit], hops: int
             ) -> IOResult[list[PathCommit], StoreError]:
        touching: IOResult[tuple[CommitInfo, ...], StoreError] = git.commits_touching(
            at, path, limit - len(got))
        return touching.bind(lambda found: scan(path, found, got, hops))

    def scan(path: str, found: tuple[CommitInfo, ...], got: list[PathCommit], hops: int
             ) -> IOResult[list[PathCommit], StoreError]:
        def step(so_far: IOResult[_Found, StoreError], commit: CommitInfo
                 ) -> IOResult[_Found, StoreError]:
            def then(state: _Found) -> IOResult[_Found, StoreError]:
                listed, moved = state
                if moved is not None or len(listed) >= limit:
                    return IOSuccess(state)
                source: IOResult[str | None, StoreError] = came_from(
                    git, commit, path) if hops < MOVE_HOPS else IOSuccess(None)
                return source.map(lambda came: (
                    [*listed, PathCommit(commit, path)],
                    None if came is None else (commit.parents[0], came)))

            return so_far.bind(then)

        start: IOResult[_Found, StoreError] = IOSuccess((got, None))
        return reduce(step, found, start).bind(
            lambda state: IOSuccess(state[0]) if state[1] is None
            else walk(state[1][0], state[1][1], state[0], hops + 1))

    return walk(rev, tree, [], 0)
