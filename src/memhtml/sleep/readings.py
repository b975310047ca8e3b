"""Independent readings: when a second detection is evidence.

A merge of two entity names that only a model proposed, and a contradiction only a
model saw, are promoted at their second detection (``ENTITY_PROMOTION_DETECTIONS``,
``EDGE_TYPING_DETECTIONS``). The second detection is evidence only when the corpus it
read is not the corpus the first read. Counting a new base commit as a new corpus is
not enough: every merged run moves main (its decay, its archives, its report), so a
run merged and followed by another with nobody writing in between read the same
memories twice, counted two, and promoted on one answer. An entity merge is a one-way
door on stored identity; the second night must be a second reading.

**The rule.** A detection is counted under its reading's key, ``base:<sha>`` (the
main commit the run was cut at); the state plane counts a key once. Before a reading
at a new base is counted, the history between the latest counted reading's base and
this one (``commits_between``) is read, and the reading counts only when one of those
commits is *independent* and changed a path of the finding's *neighbourhood*:

- *Independent*: not a sleep run's own. A run's commit carries ``Memhtml-Run`` (every
  phase commit, and the merge commit that replays a run onto a moved main) or a
  ``Memhtml-Op`` of ``sleep`` or ``sleep-merge``; every other commit is someone's
  write: memhtml's doors (write, edit, archive, restore, task), a sync merge bringing
  a colleague's writes, a person's own ``git commit``. Trailers alone decide, so a
  person who types a run's trailers by hand makes the rule stricter, never looser.
- *Changed*: a commit with one parent changed the paths its tree differs from its
  parent on; a merge commit, the paths it differs from every parent on (what the
  merge itself decided: what it brought in is read off the commits it brought, each
  judged on its own, so a run brought in by a sync is still a run); a root commit,
  every path it holds.
- *Neighbourhood*: the phase's, over the version the run reads (see
  ``entity_resolution.claimants`` and ``edge_typing.pair_neighbourhood``).

A reading at a base already counted (a resume, a second run before the first was
merged) is the same reading and counts nothing, as before. An earlier reading that
names no base (an older release counted a prompt digest) or whose base this
repository no longer holds cannot be compared: the new one is not counted and a
warning says why, so the finding stays with a person rather than promoting on a
reading nobody can place. A failure to read the history is the same: not counted,
warned, never the phase's failure.

The history since one earlier base is read once per phase, however many findings
compare against it (the ordinary case is one: the night before).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import reduce
from typing import Final

from returns.io import IOResult, IOSuccess

from memhtml.contracts.errors import GitError, StateError
from memhtml.contracts.services import (
    CommitInfo,
    CounterKey,
    Detection,
    Repository,
    StatePlane,
    TreeEntry,
)
from memhtml.sleep.contract import MERGE_OP, SLEEP_OP, TRAILER_OP, TRAILER_RUN
from memhtml.store.errors import describe

READING_PREFIX: Final = "base:"
"""A reading's key is its base commit under this prefix."""


def reading_key(base: str) -> str:
    """The run key a detection at ``base`` is counted under."""
    return f"{READING_PREFIX}{base}"


def reading_base(key: str) -> str | None:
    """The base commit a reading's key names, or None for a key that names none."""
    if not key.startswith(READING_PREFIX):
        return None
    base = key[len(READING_PREFIX):]
    return base if base else None


def is_run_commit(info: CommitInfo) -> bool:
    """Whether a commit is a sleep run's own (see the module docstring)."""
    for name, value in info.trailers:
        lowered = name.lower()
        if lowered == TRAILER_RUN.lower():
            return True
        if lowered == TRAILER_OP.lower() and value.strip() in (SLEEP_OP, MERGE_OP):
            return True
    return False


@dataclass(frozen=True, slots=True)
class Change:
    """One independent commit and the paths it changed."""

    sha: str
    paths: frozenset[str]


@dataclass(frozen=True, slots=True)
class ChangesSince:
    """The commits from an earlier reading's base to this one's: the independent ones
    with their paths, and how many were a run's own."""

    since: str
    independent: tuple[Change, ...]
    run_commits: int

    def touching(self, paths: Collection[str]) -> tuple[str, ...]:
        """The independent commits that changed any of ``paths``, oldest first."""
        wanted = frozenset(paths)
        return tuple(change.sha for change in self.independent if change.paths & wanted)


def _paths_of(git: Repository, info: CommitInfo) -> IOResult[frozenset[str], GitError]:
    """What a commit changed (see the module docstring)."""
    if not info.parents:
        listed: IOResult[tuple[TreeEntry, ...], GitError] = git.list_tree(info.sha)
        return listed.map(lambda entries: frozenset(e.path for e in entries))

    def against(parent: str) -> IOResult[frozenset[str], GitError]:
        diffed: IOResult[tuple[str, ...], GitError] = git.changed_paths(parent, info.sha)
        return diffed.map(frozenset)

    first, *others = info.parents

    def narrowed(done: IOResult[frozenset[str], GitError], parent: str
                 ) -> IOResult[frozenset[str], GitError]:
        return done.bind(lambda so_far: against(parent).map(lambda more: so_far & more)
                         if so_far else IOSuccess(so_far))

    return reduce(narrowed, others, against(first))


def changes_since(git: Repository, since: str, base: str
                  ) -> IOResult[ChangesSince, GitError]:
    """The commits reachable from ``base`` and not from ``since``, split into a run's
    own (counted) and the independent ones (each with its paths), oldest first."""

    def read(shas: tuple[str, ...]) -> IOResult[ChangesSince, GitError]:
        def then(done: IOResult[ChangesSince, GitError], sha: str
                 ) -> IOResult[ChangesSince, GitError]:
            def one(so_far: ChangesSince) -> IOResult[ChangesSince, GitError]:
                info: IOResult[CommitInfo, GitError] = git.commit_info(sha)
                return info.bind(lambda got: _judged(so_far, got))

            return done.bind(one)

        start: IOResult[ChangesSince, GitError] = IOSuccess(ChangesSince(since, (), 0))
        return reduce(then, shas, start)

    def _judged(so_far: ChangesSince, info: CommitInfo) -> IOResult[ChangesSince, GitError]:
        if is_run_commit(info):
            return IOSuccess(ChangesSince(since, so_far.independent, so_far.run_commits + 1))
        return _paths_of(git, info).map(lambda paths: ChangesSince(
            since, (*so_far.independent, Change(info.sha, paths)), so_far.run_commits))

    if since == base:
        return IOSuccess(ChangesSince(since, (), 0))
    listed: IOResult[tuple[str, ...], GitError] = git.commits_between(since, base)
    return listed.bind(read)


@dataclass(frozen=True, slots=True)
class Reading:
    """What one detection amounted to.

    ``detection`` is the state plane's answer when the reading was counted (or was
    already); when it was not put to the plane, the counter as it stands, not counted,
    promoting nothing. ``since`` is the earlier reading's base it was compared with
    (None: none to compare, or the same base), ``by`` the independent commits that
    changed the neighbourhood in between, ``repeated`` whether it was refused as a
    reading of an unchanged neighbourhood, and ``note`` why it could not be compared.
    """

    detection: Detection
    since: str | None = None
    by: tuple[str, ...] = ()
    repeated: bool = False
    note: str | None = None

    @property
    def refused(self) -> bool:
        """Not counted for want of an independent change (or of a way to show one)."""
        return self.repeated or self.note is not None


def evidence_fields(reading: Reading) -> dict[str, str]:
    """What a promotion's ledger mark records of the reading that made it: the earlier
    reading's base (``since``) and the newest write between them that reached the
    neighbourhood (``by``); nothing for a reading compared with none."""
    if reading.since is None or not reading.by:
        return {}
    return {"since": reading.since, "by": reading.by[-1]}


class Readings:
    """One phase's reader of independent readings: the state plane, the history, and
    the changes since each earlier base, read once."""

    def __init__(self, git: Repository, state: StatePlane, base: str, at: datetime) -> None:
        self.git = git
        self.state = state
        self.base = base
        self.at = at
        self._since: dict[str, ChangesSince | str] = {}

    def _changes(self, since: str) -> IOResult[ChangesSince | str, StateError]:
        held = self._since.get(since)
        if held is not None:
            return IOSuccess(held)
        read: IOResult[ChangesSince, GitError] = changes_since(self.git, since, self.base)

        def kept(found: ChangesSince | str) -> ChangesSince | str:
            self._since[since] = found
            return found

        def unread(error: GitError) -> IOResult[ChangesSince | str, StateError]:
            return IOSuccess(kept(f"the history since {since[:12]} cannot be read: "
                                  f"{describe(error)}"))

        widened: IOResult[ChangesSince | str, GitError] = read.map(kept)
        return widened.lash(unread)

    def read(self, counter: CounterKey, neighbourhood: Collection[str], threshold: int
             ) -> IOResult[Reading, StateError]:
        """This run's detection of ``counter``, counted only when it is an independent
        reading of ``neighbourhood`` (the module docstring's rule)."""
        key = reading_key(self.base)

        def counted(since: str | None = None, by: tuple[str, ...] = ()
                    ) -> IOResult[Reading, StateError]:
            bumped: IOResult[Detection, StateError] = self.state.bump(
                counter, key, threshold, self.at)
            return bumped.map(lambda detection: Reading(detection, since, by))

        def held(readings: Sequence[str], since: str | None, *, repeated: bool = False,
                 note: str | None = None) -> IOResult[Reading, StateError]:
            return IOSuccess(Reading(Detection(len(readings), counted=False, promotes=False),
                                     since, repeated=repeated, note=note))

        def judged(readings: tuple[str, ...]) -> IOResult[Reading, StateError]:
            # A reading already counted (a resume) is compared again with the one before
            # it, so its record (``since``, ``by``) is the one the first attempt made.
            again = key in readings
            before = readings[:readings.index(key)] if again else readings
            if not before:
                return counted()
            since = reading_base(before[-1])
            if since is None:
                if again:
                    return counted()
                return held(readings, None, note=(
                    f"{counter.kind} {counter.key}: its earlier reading names no base commit, "
                    "so no change since can be shown; not counted"))

            def compared(found: ChangesSince | str) -> IOResult[Reading, StateError]:
                if isinstance(found, str):
                    if again:
                        return counted(since)
                    return held(readings, since, note=f"{counter.kind} {counter.key}: {found}; "
                                                      "not counted")
                by = found.touching(neighbourhood)
                if by or again:
                    return counted(since, by)
                return held(readings, since, repeated=True)

            return self._changes(since).bind(compared)

        return self.state.readings(counter).bind(judged)
