"""A store handle: the branch tip as a parsed version, kept warm between calls.

``Store`` caches the last version it built and reaches every later tip with
``advance_head``, which costs the paths that changed rather than the tree. A cold
handle first tries a snapshot (``StoreDeps.snapshots``) and advances that instead
of parsing the whole corpus.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce
from typing import TypeVar

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.services import FanOut
from memhtml.head import HeadVersion, LoadProgress, advance_head, empty_indexes, load_head
from memhtml.head.deferred_text import DeferredTextError
from memhtml.head.indexes import Indexes
from memhtml.store.deps import StoreDeps
from memhtml.store.errors import StoreError, widen
from memhtml.store.snapshot import SnapshotCache

T = TypeVar("T")

SNAPSHOT_EVERY = 64
"""A warm handle re-saves its snapshot after this many advances, so a long-lived
process leaves a recent one behind for the next cold start."""
SNAPSHOT_STALE_PATHS = 64
"""A cold start re-saves only when its snapshot was this many changed paths behind.
Writing a snapshot of a large store costs about as much as loading one, so a CLI
call that advanced a few paths leaves the old snapshot to be advanced again."""


def empty_version() -> HeadVersion:
    """The version of an unborn branch: no commit, no records."""
    return HeadVersion(empty_indexes(), None)


@dataclass(frozen=True, slots=True)
class _Miss:
    """A snapshot that was not used. ``final`` ends the search: the snapshot was good
    but advancing it failed, so the others would fail the same way."""

    final: bool = False


class Store:
    """One store, through its injected services. Not shared between threads.

    A handle, not a value: it remembers the last version it built (and how many
    advances ago it saved a snapshot) so the next call costs the paths that changed.
    """

    def __init__(self, deps: StoreDeps) -> None:
        self._deps = deps
        self._cached: HeadVersion | None = None
        self._advances = 0

    @property
    def deps(self) -> StoreDeps:
        return self._deps

    def tip(self) -> IOResult[str | None, StoreError]:
        """The branch's commit, or None while the branch is unborn."""
        return self._deps.tip()

    def head(self, *, fan: FanOut | None = None, progress: LoadProgress | None = None
             ) -> IOResult[HeadVersion, StoreError]:
        """The version at the branch tip. An unborn branch is the empty version.

        ``fan`` and ``progress`` serve a full parse only (no snapshot to start from: the
        first command in a fresh clone): the parse is spread over ``fan``'s workers
        and ``progress`` is told how far it is (``head.LoadProgress``), the snapshot's
        write included."""
        return self.tip().bind(lambda tip: self._version_for_tip(tip, fan, progress))

    def version_at(self, rev: str) -> IOResult[HeadVersion, StoreError]:
        """The version at any commit a rev names, advanced from the cached head when
        there is one (a delta from a near commit is cheaper than a full parse). The
        head cache is left as it was."""
        git = self._deps.git

        def build(sha: str) -> IOResult[HeadVersion, StoreError]:
            cached = self._cached
            if cached is not None and cached.sha == sha:
                return IOSuccess(cached)
            if cached is not None and cached.sha is not None:
                return advance_head(git, cached, sha).alt(widen)
            return load_head(git, sha).alt(widen)

        return git.resolve(rev).alt(widen).bind(build)

    def adopt_landed(self, base: HeadVersion, indexes: Indexes, commit: str,
                     touched: int) -> None:
        """Keep warm the version a door just landed: ``indexes`` is ``base`` with the
        door's ops applied, which is what the tree at ``commit`` holds. Only when this
        handle still holds ``base`` (nothing else moved it meanwhile). A write that
        touched ``SNAPSHOT_STALE_PATHS`` paths or more saves a snapshot of it, so the
        next cold start loads the records this write parsed instead of parsing them
        again (a second import of 3,000 notes spent most of its time there)."""
        if self._cached is not base:
            return
        self._cached = HeadVersion(indexes, commit, None, base.skipped_files)
        self._advances += 1
        if touched >= SNAPSHOT_STALE_PATHS:
            self._save(self._cached)

    def forget(self) -> None:
        """Drop the cached version, so the next call starts cold (tests, benchmarks)."""
        self._cached = None
        self._advances = 0

    def run(self, door: Callable[[Store], IOResult[T, StoreError]]) -> IOResult[T, StoreError]:
        """``door`` over this store, with a snapshot's damage as its typed failure.

        A restored record reads its texts from the snapshot when first asked, and a
        text damaged since the load that git cannot give back raises
        ``DeferredTextError`` from that attribute read, wherever the door was. Here it
        becomes the door's failure (``TextUnreadable``) and the cached version is
        dropped; the snapshot cache dropped the damaged file when git failed it, so the
        next call reads the store from git again.
        """
        try:
            return door(self)
        except DeferredTextError as damaged:
            self.forget()
            return IOFailure(damaged.error)

    # -- internals -------------------------------------------------------------------

    def _version_for_tip(self, tip: str | None, fan: FanOut | None = None,
                         progress: LoadProgress | None = None
                         ) -> IOResult[HeadVersion, StoreError]:
        if tip is None:
            return self._remember(empty_version())
        cached = self._cached
        if cached is not None and cached.sha == tip:
            return IOSuccess(cached)
        if cached is not None and cached.sha is not None:
            return advance_head(self._deps.git, cached, tip).alt(widen).bind(self._keep_warm)
        return self._cold(tip, fan, progress)

    def _remember(self, version: HeadVersion) -> IOResult[HeadVersion, StoreError]:
        self._cached = version
        return IOSuccess(version)

    def _keep_warm(self, version: HeadVersion) -> IOResult[HeadVersion, StoreError]:
        # The parent pointer is dropped from what is cached: a long-lived handle
        # would otherwise hold every version it ever advanced through.
        self._cached = HeadVersion(version.indexes, version.sha, None, version.skipped_files)
        self._advances += 1
        if self._advances >= SNAPSHOT_EVERY:
            return self._save(self._cached)
        return IOSuccess(self._cached)

    def _cold(self, tip: str, fan: FanOut | None = None,
              progress: LoadProgress | None = None) -> IOResult[HeadVersion, StoreError]:
        snapshots = self._deps.snapshots
        keys = snapshots.saved() if snapshots is not None else ()

        def then(found: IOResult[HeadVersion, _Miss], key: str
                 ) -> IOResult[HeadVersion, _Miss]:
            return found.lash(lambda miss: IOFailure(miss) if miss.final or snapshots is None
                              else self._from_snapshot(snapshots, tip, key))

        start: IOResult[HeadVersion, _Miss] = IOFailure(_Miss())
        def loaded(version: HeadVersion) -> IOResult[HeadVersion, StoreError]:
            if progress is not None:
                count = len(version.indexes.records)
                progress("saving the snapshot", count, count)
            return self._loaded(version)

        return reduce(then, keys, start).lash(
            lambda _: load_head(self._deps.git, tip, fan=fan, progress=progress).alt(
                widen).bind(loaded))

    def _from_snapshot(self, snapshots: SnapshotCache, tip: str, key: str
                       ) -> IOResult[HeadVersion, _Miss]:
        git = self._deps.git

        def unusable(_: object) -> IOResult[HeadVersion, _Miss]:
            snapshots.discard(key)
            return IOFailure(_Miss())

        def ancestor(version: HeadVersion) -> IOResult[HeadVersion, _Miss]:
            # Only an ancestor of the tip is advanced: any commit would give the right
            # version, but one off another line of history could cost a diff as large
            # as the tree.
            return git.commits_between(tip, key).alt(lambda _: _Miss()).bind(
                lambda ahead: IOFailure(_Miss()) if ahead else IOSuccess(version))

        def advance(version: HeadVersion) -> IOResult[HeadVersion, _Miss]:
            changed: IOResult[tuple[str, ...], StoreError] = git.changed_paths(key, tip)
            return changed.bind(lambda paths: advance_head(git, version, tip).alt(
                widen).map(lambda advanced: (advanced, len(paths)))).alt(
                lambda _: _Miss(final=True)).bind(self._adopt)

        return snapshots.load(key).lash(unusable).bind(ancestor).bind(advance)

    def _adopt(self, advanced: tuple[HeadVersion, int]) -> IOResult[HeadVersion, _Miss]:
        version, behind = advanced
        self._cached = version
        if behind >= SNAPSHOT_STALE_PATHS:
            return self._save(version).alt(lambda _: _Miss())
        return IOSuccess(version)

    def _loaded(self, version: HeadVersion) -> IOResult[HeadVersion, StoreError]:
        self._cached = version
        return self._save(version)

    def _save(self, version: HeadVersion) -> IOResult[HeadVersion, StoreError]:
        """Save a snapshot of ``version``; a snapshot is a cache, so failing to write
        one never fails the read."""
        self._advances = 0
        snapshots = self._deps.snapshots
        if snapshots is None or version.sha is None:
            return IOSuccess(version)
        return snapshots.save(version).map(lambda _: version).lash(
            lambda _: IOSuccess(version))
