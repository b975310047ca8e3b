"""The snapshot port on disk (``store.snapshot.SnapshotCache``): parsed versions under
``<git-dir>/memhtml/snapshots``, one file per commit. A file that fails to load,
fails its checksums, was written by another format or layout, or names a commit
other than its file name says is a miss, discarded and rebuilt, never trusted and
never a failed command.

A snapshot file holds data only, whoever wrote it: a run of ``.npy`` records, each
read with ``np.load(allow_pickle=False)``, which refuses object arrays and so can
never run code. The first record is a JSON header (a byte array) naming the format,
the record layout (``memhtml.head.codec.LAYOUT_KEY``), the commit, and the name,
size and CRC-32 of every array after it; the arrays are ``encode_version``'s.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt
from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.array_records import (
    Checksums,
    RecordsRefusedError,
    checksum,
    load_npy,
    read_arrays,
)
from memhtml.contracts.local_files import NotRegularFileError, create_exclusive, open_regular
from memhtml.head import HeadVersion
from memhtml.head.codec import LAYOUT_KEY as CODEC_LAYOUT_KEY
from memhtml.head.codec import decode_version, encode_version
from memhtml.head.deferred_text import RecoverBlob
from memhtml.store.snapshot import SNAPSHOTS_KEPT, SnapshotMiss

SNAPSHOT_FORMAT = 5
"""The framing's version (4 was the last pickle). Bumped by hand when the header or
the record order changes; the codec's own changes show in ``LAYOUT_KEY``."""
SUMMED_BESIDE = frozenset({"segment.doc_ids", "segment.tfs"})
"""Arrays memory-mapped and checked against their checksums on a thread of their own
while the rest decodes (``Checksums``): the lexical postings, 109 of the 160 MB a
100,000-memory snapshot reads. Copying them in and summing them was about a third of
a cold command's load; a search reads only its query's postings."""
MAPPED = frozenset({"record.html.bytes", "record.body_text.bytes"}) | SUMMED_BESIDE
"""Arrays memory-mapped rather than read: the files' text and article text, which most
commands never look at (the codec checks each text against its own checksum when it
is read), and which are most of a snapshot's bytes (70 of 103 MB at 20,000
memories); and the postings (``SUMMED_BESIDE``)."""
MAGIC = "memhtml-snapshot"
SNAPSHOT_DIR = "snapshots"
_SUFFIX = ".snapshot"
_LEGACY_SUFFIXES = (".pickle",)
"""Snapshots an older memhtml wrote, which this one never reads: removed on save."""
_TEMPORARY_AGE = 3600.0
"""A temporary file this many seconds old belongs to a writer that died."""
_HEADER_LIMIT = 1 << 20
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

LAYOUT_KEY = hashlib.sha256(
    f"format={SNAPSHOT_FORMAT}\n{CODEC_LAYOUT_KEY}".encode()).hexdigest()
"""The snapshot format with the codec's layout digest (record field names and kinds)."""

# What a damaged or foreign file can raise while its records load; all mean "not usable".
_UNREADABLE = (OSError, EOFError, ValueError, TypeError, KeyError, IndexError,
               AttributeError, OverflowError, MemoryError, BufferError)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The parsed state at one commit: its ``HeadVersion``, restored."""

    sha: str
    restored: HeadVersion

    def version(self) -> HeadVersion:
        return self.restored


@dataclass(frozen=True, slots=True)
class SnapshotUnusable:
    """Why a snapshot file was not used."""

    path: Path
    reason: str


def snapshot_dir(state_dir: Path) -> Path:
    return state_dir / SNAPSHOT_DIR


def snapshot_path(state_dir: Path, sha: str) -> Path:
    return snapshot_dir(state_dir) / (sha + _SUFFIX)


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


# --------------------------------------------------------------------------- read


_RefusedError = RecordsRefusedError


def _header(stream: BinaryIO, path: Path) -> dict[str, Any]:
    raw = load_npy(stream)
    if not isinstance(raw, np.ndarray) or raw.dtype != np.uint8 or raw.ndim != 1 \
            or raw.nbytes > _HEADER_LIMIT:
        raise _RefusedError("not a memhtml snapshot")
    header = json.loads(raw.tobytes())
    if not isinstance(header, dict) or header.get("magic") != MAGIC:
        raise _RefusedError("not a memhtml snapshot")
    found = header.get("format")
    if found != SNAPSHOT_FORMAT:
        newer = isinstance(found, int) and found > SNAPSHOT_FORMAT
        raise _RefusedError(f"written in {'a newer' if newer else 'another'} format ({found!r})")
    if header.get("layout") != LAYOUT_KEY:
        raise _RefusedError("written by another snapshot layout")
    sha = header.get("sha")
    # The content names its commit; a file renamed (or copied) to another commit's
    # name would otherwise be advanced as if it were that commit's version.
    if not isinstance(sha, str) or not _COMMIT.fullmatch(sha) or path.name != sha + _SUFFIX:
        raise _RefusedError("commit does not match the file name")
    if not isinstance(header.get("arrays"), list):
        raise _RefusedError("the header lists no arrays")
    return header


def read_snapshot(path: Path, recover: RecoverBlob | None = None
                  ) -> IOResult[Snapshot, SnapshotUnusable]:
    """Load and check one snapshot file. The files' text stays mapped and is read on
    first use; ``recover`` reads a blob from git for a text whose bytes were damaged
    since (``decode_version``)."""
    try:
        # Only a regular file is opened: a FIFO or a link put at a snapshot's name is
        # an unusable snapshot (discarded, rebuilt), never a command that waits.
        with open_regular(path) as stream:
            header = _header(stream, path)
            arrays = read_arrays(stream, header["arrays"], mapped=MAPPED)
            summing = Checksums(arrays, _expected(header["arrays"], SUMMED_BESIDE))
    except NotRegularFileError as odd:
        return IOFailure(SnapshotUnusable(path, f"{odd.kind}, not a regular file"))
    except _RefusedError as refused:
        return IOFailure(SnapshotUnusable(path, str(refused)))
    except _UNREADABLE as exc:
        return IOFailure(SnapshotUnusable(path, f"unreadable: {type(exc).__name__}"))
    sha: str = header["sha"]
    decoded = decode_version(arrays, sha, recover)
    # The version is handed out only once the postings it searches are known whole.
    failed = summing.failed()
    if failed is not None:
        return IOFailure(SnapshotUnusable(path, failed))
    return IOResult.from_result(decoded).map(lambda version: Snapshot(sha, version)).alt(
        lambda failure: SnapshotUnusable(path, f"does not decode: {failure.reason}"))


def _expected(listed: list[object], names: frozenset[str]) -> dict[str, int]:
    """The checksums the header lists for ``names`` (each must be listed, with one)."""
    found = {entry[0]: entry[2] for entry in listed
             if isinstance(entry, list) and entry[0] in names}
    if set(found) != names or not all(type(crc) is int for crc in found.values()):
        raise _RefusedError("the header lists no checksum for the postings")
    return found


def discard_snapshot(path: Path) -> IOResult[None, SnapshotUnusable]:
    """Remove an unusable snapshot; a file already gone (or that cannot be removed)
    is fine: the next reader judges it again.

    Even a snapshot a newer memhtml wrote is removed: it is rebuilt from git in one
    full load, and leaving it would only make every cold start here judge it again.
    """
    with contextlib.suppress(OSError):
        path.unlink()
    return IOSuccess(None)


# --------------------------------------------------------------------------- write


def _write(stream: BinaryIO, sha: str, arrays: dict[str, npt.NDArray[Any]]) -> None:
    listed = [[name, int(a.nbytes), checksum(a)] for name, a in arrays.items()]
    header = {"magic": MAGIC, "format": SNAPSHOT_FORMAT, "layout": LAYOUT_KEY, "sha": sha,
              "arrays": listed}
    text = json.dumps(header, separators=(",", ":")).encode("ascii")
    np.save(stream, np.frombuffer(text, dtype=np.uint8), allow_pickle=False)
    for array in arrays.values():
        np.save(stream, array, allow_pickle=False)


def save_snapshot(state_dir: Path, version: HeadVersion) -> IOResult[Path, SnapshotUnusable]:
    """Write the version's snapshot atomically and keep only the newest few.

    The payload goes to a uniquely named temporary file first and is renamed into
    place, so a concurrent reader sees a whole snapshot or none, and two writers
    of the same commit each rename a complete file. Not fsynced: a crash that
    leaves a short file leaves one the next reader discards.
    """
    if version.sha is None:
        return IOFailure(SnapshotUnusable(state_dir, "an empty version has no commit"))
    sha = version.sha
    target = snapshot_path(state_dir, sha)
    return IOResult.from_result(encode_version(version)).alt(
        lambda failure: SnapshotUnusable(target, failure.reason)).bind(
        lambda arrays: _save_arrays(state_dir, sha, arrays))


def _save_arrays(state_dir: Path, sha: str, arrays: dict[str, npt.NDArray[Any]]
                 ) -> IOResult[Path, SnapshotUnusable]:
    folder = snapshot_dir(state_dir)
    target = snapshot_path(state_dir, sha)
    temporary = folder / f".{sha}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with create_exclusive(temporary) as stream:
            _write(stream, sha, arrays)
        os.replace(temporary, target)
    except (OSError, ValueError) as exc:
        discard_snapshot(temporary)
        return IOFailure(SnapshotUnusable(target, f"not written: {type(exc).__name__}: {exc}"))
    for stale in snapshot_files(state_dir)[SNAPSHOTS_KEPT:]:
        if stale != target:
            discard_snapshot(stale)
    _remove_leftovers(folder)
    return IOSuccess(target)


def _remove_leftovers(folder: Path) -> None:
    """Remove snapshots in a format this memhtml never reads (an older memhtml's
    pickles) and temporary files whose writer died."""
    now = time.time()
    try:
        entries = list(folder.iterdir())
    except OSError:
        return
    for path in entries:
        name = path.name
        with contextlib.suppress(OSError):
            legacy = name.endswith(_LEGACY_SUFFIXES)
            if legacy or (name.startswith(".") and name.endswith(".tmp")
                          and now - path.stat().st_mtime > _TEMPORARY_AGE):
                path.unlink()


# --------------------------------------------------------------------------- the port


class SnapshotFiles:
    """``SnapshotCache`` over the files under ``<state_dir>/snapshots``.

    ``recover`` reads a damaged text again from git by blob id (the composition root
    builds it over the ``Repository`` port, where IO may be run: ``compose.services
    .blob_reader``); the codec asks for it only when a mapped text fails its own
    checksum, and checks what it gives against the blob id. The file is kept while
    git gives each damaged text back (a blob read costs far less than the full load a
    rebuild would), and dropped when git cannot, so the next command builds its
    version from git again. None reads nothing again (a damaged text is then
    ``DeferredTextError``).
    """

    def __init__(self, state_dir: Path, recover: RecoverBlob | None = None) -> None:
        self.state_dir = state_dir
        self._recover = recover

    def saved(self) -> tuple[str, ...]:
        return tuple(path.name.removesuffix(_SUFFIX) for path in snapshot_files(self.state_dir))

    def load(self, key: str) -> IOResult[HeadVersion, SnapshotMiss]:
        path = snapshot_path(self.state_dir, key)
        return read_snapshot(path, self._recovery(path)).map(Snapshot.version).alt(
            lambda unusable: SnapshotMiss(key, unusable.reason))

    def save(self, version: HeadVersion) -> IOResult[None, SnapshotMiss]:
        return save_snapshot(self.state_dir, version).map(lambda _: None).alt(
            lambda unusable: SnapshotMiss(version.sha or "", unusable.reason))

    def discard(self, key: str) -> None:
        discard_snapshot(snapshot_path(self.state_dir, key))

    def _recovery(self, path: Path) -> RecoverBlob | None:
        reread = self._recover
        if reread is None:
            return None

        def recover(blob_sha: str) -> bytes | None:
            data = reread(blob_sha)
            if data is None:
                # The text is lost to this command (``DeferredTextError``); the file
                # goes, so the next command builds its version from git again.
                discard_snapshot(path)
            return data

        return recover
