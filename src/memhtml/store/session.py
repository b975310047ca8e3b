"""A store handle: the branch tip as a parsed version, kept warm between calls.

``Store`` caches the last version it built and reaches every later tip with
``advance_head``, which costs the paths that changed rather than the tree. A cold
handle first tries a snapshot under ``state_dir`` and advances that instead of
parsing the whole corpus.
"""

from __future__ import annotations

from returns.io import IOFailure, IOResult, IOSuccess
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.contracts.errors import NotFound
from memhtml.head import HeadVersion, advance_head, empty_indexes, load_head
from memhtml.store.deps import StoreDeps
from memhtml.store.errors import StoreError
from memhtml.store.snapshot import discard_snapshot, read_snapshot, save_snapshot, snapshot_files

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


class Store:
    """One store, through its injected services. Not shared between threads."""

    def __init__(self, deps: StoreDeps) -> None:
        self._deps = deps
        self._cached: HeadVersion | None = None
        self._advances = 0

    @property
    def deps(self) -> StoreDeps:
        return self._deps

    def tip(self) -> IOResult[str | None, StoreError]:
        """The branch's commit, or None while the branch is unborn."""
        resolved = self._deps.git.resolve(self._deps.ref)
        if not is_successful(resolved):
            failure = unsafe_perform_io(resolved.failure())
            if isinstance(failure, NotFound):
                return IOSuccess(None)
            return IOFailure(failure)
        return IOSuccess(unsafe_perform_io(resolved.unwrap()))

    def head(self) -> IOResult[HeadVersion, StoreError]:
        """The version at the branch tip. An unborn branch is the empty version."""
        return self.tip().bind(self._version_for_tip)

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
                return advance_head(git, cached, sha).alt(_widen)
            return load_head(git, sha).alt(_widen)

        return git.resolve(rev).alt(_widen).bind(build)

    def forget(self) -> None:
        """Drop the cached version, so the next call starts cold (tests, benchmarks)."""
        self._cached = None
        self._advances = 0

    # -- internals -------------------------------------------------------------------

    def _version_for_tip(self, tip: str | None) -> IOResult[HeadVersion, StoreError]:
        if tip is None:
            version = empty_version()
            self._cached = version
            return IOSuccess(version)
        cached = self._cached
        if cached is not None and cached.sha == tip:
            return IOSuccess(cached)
        if cached is not None and cached.sha is not None:
            advanced = advance_head(self._deps.git, cached, tip).alt(_widen)
            return advanced.map(self._keep_warm)
        return self._cold(tip)

    def _keep_warm(self, version: HeadVersion) -> HeadVersion:
        # The parent pointer is dropped from what is cached: a long-lived handle
        # would otherwise hold every version it ever advanced through.
        version = HeadVersion(version.indexes, version.sha, None, version.skipped_files)
        self._cached = version
        self._advances += 1
        if self._advances >= SNAPSHOT_EVERY:
            self._save(version)
        return version

    def _cold(self, tip: str) -> IOResult[HeadVersion, StoreError]:
        git = self._deps.git
        state_dir = self._deps.state_dir
        if state_dir is not None:
            for path in snapshot_files(state_dir):
                loaded = read_snapshot(path)
                if not is_successful(loaded):
                    discard_snapshot(path)
                    continue
                snapshot = unsafe_perform_io(loaded.unwrap())
                # Only an ancestor of the tip is advanced: any commit would give the
                # right version, but one off another line of history could cost a
                # diff as large as the tree.
                between = git.commits_between(tip, snapshot.sha)
                if not is_successful(between) or unsafe_perform_io(between.unwrap()):
                    continue
                changed = git.changed_paths(snapshot.sha, tip)
                advanced = advance_head(git, snapshot.version(), tip)
                if is_successful(advanced) and is_successful(changed):
                    version = unsafe_perform_io(advanced.unwrap())
                    self._cached = version
                    if len(unsafe_perform_io(changed.unwrap())) >= SNAPSHOT_STALE_PATHS:
                        self._save(version)
                    return IOSuccess(version)
                break
        loaded_head = load_head(git, tip).alt(_widen)
        return loaded_head.map(self._loaded)

    def _loaded(self, version: HeadVersion) -> HeadVersion:
        self._cached = version
        self._save(version)
        return version

    def _save(self, version: HeadVersion) -> None:
        self._advances = 0
        if self._deps.state_dir is not None and version.sha is not None:
            # A snapshot is a cache: failing to write one never fails the read.
            save_snapshot(self._deps.state_dir, version)


def _widen(error: StoreError) -> StoreError:
    """Lift a narrower error union into ``StoreError`` for the checker."""
    return error
