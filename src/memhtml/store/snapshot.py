"""Parsed versions cached on disk, keyed by commit, so a cold process skips the parse.

A CLI call is a fresh process; re-parsing five thousand files each time costs
seconds, while unpickling the indexes of a recent commit and advancing them to the
tip costs the delta. A snapshot is a cache and nothing more: one that fails to load,
was written by another layout of the record types, or names a commit git does not
know is ignored and replaced, never trusted. Pickle runs code on load, so a
snapshot is read only from the store's own ``.memhtml/`` directory, which has the
same trust as the repository's ``.git/``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import pickle
import secrets
from dataclasses import dataclass
from pathlib import Path

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.record import CitationValue, FacetValue, Link, MemoryRecord
from memhtml.head import HeadVersion, Indexes, LexicalIndex, SkippedFile
from memhtml.head.lexical import Segment, TermCounts

SNAPSHOT_FORMAT = 4  # bumped when a pickled class changes its state layout
"""Bumped by hand when the payload's shape changes in a way field names cannot show."""
SNAPSHOTS_KEPT = 2
SNAPSHOT_DIR = "snapshots"
_SUFFIX = ".pickle"

# What a damaged or foreign pickle can raise while loading; all mean "not usable".
_UNREADABLE = (
    OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, IndexError,
    KeyError, TypeError, ValueError, MemoryError,
)


def _layout_key() -> str:
    """A digest of every pickled class's field names, with the format number.

    A record type that gained or lost a field would unpickle into an object with
    missing slots; comparing this key refuses such a snapshot before it is used.
    """
    classes = (MemoryRecord, Link, FacetValue, CitationValue, Indexes, LexicalIndex, Segment,
               TermCounts, SkippedFile)
    spec = [f"format={SNAPSHOT_FORMAT}"]
    for cls in classes:
        names = ",".join(f.name for f in dataclasses.fields(cls))
        spec.append(f"{cls.__module__}.{cls.__qualname__}({names})")
    return hashlib.sha256("\n".join(spec).encode()).hexdigest()


LAYOUT_KEY = _layout_key()


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The parsed state at one commit: enough to rebuild its ``HeadVersion``."""

    sha: str
    indexes: Indexes
    skipped_files: tuple[SkippedFile, ...]

    def version(self) -> HeadVersion:
        return HeadVersion(self.indexes, self.sha, None, self.skipped_files)


@dataclass(frozen=True, slots=True)
class SnapshotUnusable:
    """Why a snapshot file was not used."""

    path: Path
    reason: str


def snapshot_dir(state_dir: Path) -> Path:
    return state_dir / SNAPSHOT_DIR


def snapshot_files(state_dir: Path) -> list[Path]:
    """Snapshot files, newest first (by modification time, then name)."""
    folder = snapshot_dir(state_dir)
    try:
        found = [p for p in folder.iterdir() if p.name.endswith(_SUFFIX)]
    except OSError:
        return []
    stamped: list[tuple[int, str, Path]] = []
    for path in found:
        try:
            stamped.append((path.stat().st_mtime_ns, path.name, path))
        except OSError:
            continue
    stamped.sort(reverse=True)
    return [path for _, _, path in stamped]


def read_snapshot(path: Path) -> IOResult[Snapshot, SnapshotUnusable]:
    """Load and check one snapshot file."""
    try:
        payload = pickle.loads(path.read_bytes())
    except _UNREADABLE as exc:
        return IOFailure(SnapshotUnusable(path, f"unreadable: {type(exc).__name__}"))
    if not isinstance(payload, dict) or payload.get("layout") != LAYOUT_KEY:
        return IOFailure(SnapshotUnusable(path, "written by another snapshot layout"))
    sha, indexes, skipped = payload.get("sha"), payload.get("indexes"), payload.get("skipped")
    if not isinstance(sha, str) or path.name != sha + _SUFFIX:
        return IOFailure(SnapshotUnusable(path, "commit does not match the file name"))
    if not isinstance(indexes, Indexes) or not isinstance(skipped, tuple):
        return IOFailure(SnapshotUnusable(path, "payload has the wrong types"))
    if not all(isinstance(s, SkippedFile) for s in skipped):
        return IOFailure(SnapshotUnusable(path, "payload has the wrong types"))
    return IOSuccess(Snapshot(sha, indexes, skipped))


def discard_snapshot(path: Path) -> IOResult[None, SnapshotUnusable]:
    """Remove an unusable snapshot; a file already gone (or that cannot be removed)
    is fine: the next reader judges it again."""
    with contextlib.suppress(OSError):
        path.unlink()
    return IOSuccess(None)


def save_snapshot(state_dir: Path, version: HeadVersion) -> IOResult[Path, SnapshotUnusable]:
    """Write the version's snapshot atomically and keep only the newest few.

    The payload goes to a uniquely named temporary file first and is renamed into
    place, so a concurrent reader sees a whole snapshot or none, and two writers
    of the same commit each rename a complete file.
    """
    if version.sha is None:
        return IOFailure(SnapshotUnusable(state_dir, "an empty version has no commit"))
    folder = snapshot_dir(state_dir)
    target = folder / (version.sha + _SUFFIX)
    temporary = folder / f".{version.sha}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    payload = {
        "layout": LAYOUT_KEY,
        "sha": version.sha,
        "indexes": version.indexes,
        "skipped": version.skipped_files,
    }
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(temporary, target)
    except (OSError, pickle.PicklingError, RecursionError) as exc:
        discard_snapshot(temporary)
        return IOFailure(SnapshotUnusable(target, f"not written: {type(exc).__name__}: {exc}"))
    for stale in snapshot_files(state_dir)[SNAPSHOTS_KEPT:]:
        if stale != target:
            discard_snapshot(stale)
    return IOSuccess(target)
