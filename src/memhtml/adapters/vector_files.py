"""The vector cache on disk: one file set per vector space, keyed by content hash.

``VectorFiles`` is this layout as the ``VectorCacheStore`` port
(``memhtml.contracts.vectors``); the functions below are its parts, and what the
contract cannot see (healing, refused reads, concurrent saves) is tested on them
directly. What a manifest and a part may hold, and the rows' rules every read and
save applies, are ``vector_parts`` (pure). Over 600 lines, on purpose: the reader,
the writer and the repair of one layout under one lock, each relying on what the
others do with the same files (a save removes only the parts no reader's manifest
can name; a read that finds a part gone reads the manifest again; a repair removes
exactly the set that was judged).

Layout under ``root`` (``<git-dir>/memhtml/vectors`` in a store)::

    <space.key>/manifest.json        the format, the space, and the parts, in order
    <space.key>/vectors-<gen>.npy    a part's float32 matrix, one row per key
    <space.key>/hashes-<gen>.txt     its keys, one a line, in row order
    <space.key>/covers.json          a coverage claim about the set (``vector_marks``)
    .locks/<space.key>.lock          held by a save (and a repair) while it works
    .aside/<space.key>.<why>/        a file set moved aside (see below)

A set is a base and the segments saved after it (format 3): its vectors are the
union of the parts, a key repeated in a later part taking that part's vector (the
merge semantics of ``VectorCacheStore.save``). A save writes only what it adds: one
new segment (a matrix and a hash list, each written to a temporary file, synced and
renamed into place), then a manifest listing the base, the segments before and the
new one, swapped in by rename. A reader therefore sees one manifest's parts, never a
matrix of one save with the keys of another. ``Compaction`` (``vector_layout``) says
when a save merges the newest segments into its own and when it folds the whole set
into one new base instead, so segments stay few and each row is rewritten a bounded
number of times. Formats 1 and 2 (one generation, no segments) still load; the first
save on such a set lists that generation as its base.

Saves take one lock per space (``.locks/<key>.lock``, released by the system when
the process ends). Under it a save reads the set, writes its parts and the manifest,
then removes the parts no manifest will name again: those the new manifest does not
list and whose serial is lower than the newest it lists (a part of a higher serial
could only be a save still under way in a memhtml that does not take the lock).
So two saves never race: neither lists a part the other removed, and neither loses
the other's rows. Loads never wait for the lock (only a repair does): a load that
finds a part gone reads the manifest again (a fold replaced it meanwhile). A save
that cannot take the lock within ``LOCK_WAIT`` seconds fails; its vectors are
embedded again later.

A handle kept by a long-lived process passes ``WarmSets``: a load whose manifest is
byte-identical to the one it read or wrote last answers from memory, and one whose
manifest only lists more segments reads just those. A changed base reads it all.

``load_cache`` reports what does not add up and uses none of it: a missing file, a
shape or count that disagrees with the manifest, a non-finite value, a manifest
naming anything but a generation of this folder (``VectorFilesCorrupt``); a set
written in a newer format or for another vector space (``VectorFilesForeign``).
``load_or_heal`` then repairs the cache so the next command starts clean, and says
once what it did: a corrupt set is deleted (its vectors cannot be trusted, and
``memhtml embed`` rebuilds them), while a foreign set is moved aside whole, because
it is good data to whoever wrote it (a newer memhtml, or an embedder whose space key
collides with this one's) and its vectors may have cost an API bill; deleting it
would make an older memhtml destroy a newer one's cache just by running ``search``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
from immutables import Map
from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.adapters.vector_layout import DEFAULT_COMPACTION, MANIFEST, Compaction
from memhtml.adapters.vector_marks import covers as covered_commit
from memhtml.adapters.vector_marks import stands, write_mark
from memhtml.adapters.vector_parts import (
    FORMAT_VERSION,
    NOT_A_FILE,
    Manifest,
    Part,
    VectorFilesCorrupt,
    VectorFilesError,
    VectorFilesFailure,
    VectorFilesForeign,
    covers,
    extended,
    gap_among,
    gap_reason,
    hash_lines,
    parse_manifest,
    passage_of,
    serial,
    storable_hash,
    union,
    whole_groups,
)
from memhtml.contracts.array_records import load_npy
from memhtml.contracts.local_files import (
    NotRegularFileError,
    blocking_entry,
    kind_of,
    open_regular,
    read_regular,
)
from memhtml.contracts.services import Vector, VectorSpace
from memhtml.contracts.vectors import (
    NO_SET,
    Covering,
    LoadedVectors,
    SetStamp,
    VectorCache,
    VectorCacheFault,
    empty_vector_cache,
)

ASIDE_DIR = ".aside"
LOCKS_DIR = ".locks"
LOCK_WAIT = 10.0
"""Seconds a save (or a repair) waits for another to release the space's lock."""
_PART_FILE = re.compile(r"(\.)?(?:vectors-(?P<matrix>[0-9]{1,12}-[0-9a-f]{8})\.npy"
                        r"|hashes-(?P<hashes>[0-9]{1,12}-[0-9a-f]{8})\.txt)(?(1)\..+\.tmp)")
"""A part's file, or the temporary file a save writes it through (``_write_atomic``)."""
_READ_ATTEMPTS = 4
_HEAL_ATTEMPTS = 3

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SaveCounts:
    """What a save did: vectors in the file set afterwards, and how many were new."""

    stored: int
    added: int


@dataclass(frozen=True, slots=True)
class FileSet:
    """A file set as read or written: the manifest's bytes, its parts (the base
    first), their union (a later part's vector winning) and the passage rows in it."""

    manifest: bytes
    parts: tuple[Part, ...]
    cache: VectorCache
    passages: int

    @property
    def stamp(self) -> SetStamp:
        """This state of the set, for a coverage claim (``vector_marks``)."""
        return SetStamp(tuple(part.generation for part in self.parts))


class WarmSets:
    """The file set one handle read or wrote last, per space key: what lets a
    long-lived process answer a load from memory. Threads may share it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sets: dict[str, FileSet] = {}

    def get(self, space: VectorSpace) -> FileSet | None:
        with self._lock:
            found = self._sets.get(space.key)
        return found if found is not None and found.cache.space == space else None

    def put(self, space: VectorSpace, found: FileSet | None) -> None:
        with self._lock:
            if found is None:
                self._sets.pop(space.key, None)
            else:
                self._sets[space.key] = found


def space_dir(root: Path, space: VectorSpace) -> Path:
    return root / space.key


def aside_dir(root: Path) -> Path:
    return root / ASIDE_DIR


def lock_path(root: Path, space: VectorSpace) -> Path:
    return root / LOCKS_DIR / f"{space.key}.lock"


def _guard(path: Path, thunk: Callable[[], IOResult[T, VectorFilesError]]
           ) -> IOResult[T, VectorFilesError]:
    try:
        return thunk()
    except OSError as exc:
        # Two levels up is the state directory: name what stands where a folder belongs.
        blocked = blocking_entry(path, path.parent.parent)
        return IOFailure(VectorFilesFailure(str(path), f"{type(exc).__name__}: {exc}" + (
            f" ({blocked}: move it aside)" if blocked else "")))


def fault_of(error: VectorFilesError) -> VectorCacheFault:
    """The port's failure for a file set's: the reason names the folder."""
    return VectorCacheFault(f"vector cache {error.path}: {error.reason}")


# --------------------------------------------------------------------------- lock

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


@contextlib.contextmanager
def _writer_lock(root: Path, space: VectorSpace) -> Iterator[None]:
    """Hold the space's lock: at most one save or repair works on a set at a time.

    The lock is the open file's (``flock``; a byte-range lock on Windows), so the
    system releases it when the process ends however it ends. Waiting is by polling
    up to ``LOCK_WAIT`` seconds, then a ``TimeoutError``.
    """
    path = lock_path(root, space)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Never through a link, never blocking on a FIFO someone put there.
    fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o644)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, kind_of(mode))
        deadline = time.monotonic() + LOCK_WAIT
        pause = 0.0005
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                raise TimeoutError(f"another save has held {path} for {LOCK_WAIT:g} s")
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        with contextlib.suppress(OSError):
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


# --------------------------------------------------------------------------- load


def load_cache(root: Path, space: VectorSpace, *, warm: WarmSets | None = None
               ) -> IOResult[VectorCache, VectorFilesError]:
    """The cached vectors of ``space`` under ``root``; an empty cache when none is saved.
    Reads only: a set that does not add up is reported, not repaired."""
    folder = space_dir(root, space)

    def read() -> IOResult[VectorCache, VectorFilesError]:
        found = _read_set(folder, space, warm.get(space) if warm else None)
        if found is None:
            return IOSuccess(empty_vector_cache(space))
        if isinstance(found, FileSet):
            if warm is not None:
                warm.put(space, found)
            return IOSuccess(found.cache)
        return IOFailure(found)

    return _guard(folder, read)


def load_or_heal(root: Path, space: VectorSpace, *, warm: WarmSets | None = None
                 ) -> IOResult[LoadedVectors, VectorFilesError]:
    """``load_cache``, except that a corrupt set is deleted and a foreign one moved
    aside, and either loads as an empty cache with a note saying what happened.

    Only a file system that refuses a read (or the repair) is a failure. The repair
    holds the space's lock and judges the set again first: what looked wrong to a
    read racing a save is read again, not discarded.
    """
    folder = space_dir(root, space)
    return _guard(folder, lambda: _heal(root, folder, space, warm))


def _heal(root: Path, folder: Path, space: VectorSpace, warm: WarmSets | None
          ) -> IOResult[LoadedVectors, VectorFilesError]:
    found = _read_set(folder, space, warm.get(space) if warm else None)
    if not isinstance(found, VectorFilesCorrupt | VectorFilesForeign):
        return _loaded(folder, space, found, warm)
    with _writer_lock(root, space):
        for _ in range(_HEAL_ATTEMPTS):
            found = _read_set(folder, space, None)
            if not isinstance(found, VectorFilesCorrupt | VectorFilesForeign):
                return _loaded(folder, space, found, warm)
            if warm is not None:
                warm.put(space, None)
            empty = empty_vector_cache(space)
            if isinstance(found, VectorFilesForeign):
                moved = _move_aside(root, folder, found.tag)
                return IOSuccess(LoadedVectors(
                    empty, f"vector cache {folder}: {found.reason}; moved aside to {moved}",
                    stamp=NO_SET))
            if _delete_judged(folder, found):
                return IOSuccess(LoadedVectors(
                    empty, f"vector cache {folder}: {found.reason}; discarded", stamp=NO_SET))
    return IOFailure(VectorFilesFailure(str(folder), "the file set kept changing while it "
                                                     "was read"))


def _loaded(folder: Path, space: VectorSpace, found: FileSet | VectorFilesFailure | None,
            warm: WarmSets | None) -> IOResult[LoadedVectors, VectorFilesError]:
    if isinstance(found, VectorFilesFailure):
        return IOFailure(found)
    if warm is not None:
        warm.put(space, found)
    if found is None:
        return IOSuccess(LoadedVectors(empty_vector_cache(space), stamp=NO_SET))
    stamp = found.stamp
    return IOSuccess(LoadedVectors(found.cache, covers=covered_commit(folder, stamp),
                                   stamp=stamp))


def _delete_judged(folder: Path, judged: VectorFilesCorrupt) -> bool:
    """Delete the corrupt set ``judged`` describes; False when its manifest has changed
    since (or is gone), so the caller judges the set again."""
    manifest = folder / MANIFEST
    current = _manifest_bytes(manifest)
    if current is None or current != judged.manifest:
        return False
    # The manifest goes first: without it the set loads as empty, whatever is left.
    # Unlinking a FIFO or a link removes only the name; a directory there stays, and
    # the failure says so.
    manifest.unlink(missing_ok=True)
    if judged.generation is not None:
        limit = serial(judged.generation)
        for name, generation in _part_files(folder):
            if serial(generation) <= limit:
                _remove(folder / name)
    return True


def _move_aside(root: Path, folder: Path, tag: str) -> Path:
    """Rename the whole space folder to ``.aside/<name>.<tag>``, replacing an older
    set moved aside under the same tag (the one found now is the newer)."""
    import shutil

    target = aside_dir(root) / f"{folder.name}.{tag}"
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        shutil.rmtree(target)
    with contextlib.suppress(FileNotFoundError):  # another process moved it first
        folder.rename(target)
    return target


def _manifest_bytes(manifest: Path) -> bytes | None:
    """The manifest's bytes; None when there is none; ``NOT_A_FILE`` when something
    other than a regular file stands there (never opened, so a FIFO cannot block)."""
    try:
        return read_regular(manifest)
    except FileNotFoundError:
        return None
    except NotRegularFileError:
        return NOT_A_FILE


def _read_set(folder: Path, space: VectorSpace, prior: FileSet | None
              ) -> FileSet | VectorFilesError | None:
    """The set in ``folder`` (None when there is none), reading of it only what
    ``prior`` lacks. A verdict of corrupt given while the manifest changed (a save
    folded the set meanwhile and removed the parts read) is not kept: the set is read
    again."""
    manifest = folder / MANIFEST
    found: FileSet | VectorFilesError | None = None
    for _ in range(_READ_ATTEMPTS):
        raw = _manifest_bytes(manifest)
        if raw is None:
            return None
        found = _read_from(folder, space, raw, prior)
        if not isinstance(found, VectorFilesCorrupt) or _manifest_bytes(manifest) == raw:
            return found
    return found


def _read_from(folder: Path, space: VectorSpace, raw: bytes, prior: FileSet | None
               ) -> FileSet | VectorFilesError:
    if prior is not None and prior.manifest == raw and prior.cache.space == space:
        return prior
    manifest = parse_manifest(folder, space, raw)
    if not isinstance(manifest, Manifest):
        return manifest
    newest = max(manifest.parts, key=lambda part: serial(part[0]))[0]

    def corrupt(reason: str) -> VectorFilesCorrupt:
        return VectorFilesCorrupt(str(folder), reason, raw, newest)

    reused = _reused(prior, manifest, space)
    parts = list(prior.parts[:reused]) if prior is not None else []
    for generation, count in manifest.parts[reused:]:
        part = _read_part(folder, space, generation, count)
        if isinstance(part, str):
            return corrupt(part)
        parts.append(part)
    read = parts[reused:]
    if prior is not None and reused and covers(read, prior.parts[reused:]):
        # The parts read hold every key of those they replaced (a merged segment
        # holds the ones it absorbed): the union so far grows by them.
        vectors, passages, fresh = extended(prior.cache.vectors, prior.passages, read)
        problem = gap_among(vectors, fresh)
    else:
        vectors = union(parts)
        whole, passages = whole_groups(list(vectors.keys()))
        problem = None if whole else gap_reason(vectors.keys())
    if len(vectors) != manifest.count:
        return corrupt(f"the parts hold {len(vectors)} vectors, the manifest says "
                       f"{manifest.count}")
    if manifest.passages is None and passages:
        return corrupt("a format 1 set holds passage rows")
    if manifest.passages is not None and manifest.passages != passages:
        return corrupt(f"the manifest counts {manifest.passages!r} passages, the hash "
                       f"list holds {passages}")
    if problem is not None:
        return corrupt(problem)
    return FileSet(raw, tuple(parts), VectorCache(space, vectors), passages)


def _reused(prior: FileSet | None, manifest: Manifest, space: VectorSpace) -> int:
    """How many of ``prior``'s parts the manifest lists first, in the same order: what
    need not be read again. None unless the base is one of them."""
    if prior is None or prior.cache.space != space:
        return 0
    same = 0
    for part, (generation, count) in zip(prior.parts, manifest.parts, strict=False):
        if part.generation != generation or len(part.keys) != count:
            break
        same += 1
    return same


def _read_part(folder: Path, space: VectorSpace, generation: str, count: int
               ) -> Part | str:
    """One part's files, checked; or why they cannot be used."""
    hashes_path = folder / f"hashes-{generation}.txt"
    matrix_path = folder / f"vectors-{generation}.npy"
    if not os.path.lexists(hashes_path) or not os.path.lexists(matrix_path):
        return f"generation {generation} is missing a file"
    try:
        data = read_regular(hashes_path)
    except NotRegularFileError as odd:
        return f"the hash list is {odd.kind}, not a regular file"
    except FileNotFoundError:
        # Removed since the check above (a fold under way): judged as missing, so
        # the reader's manifest check reads the new set instead.
        return f"generation {generation} is missing a file"
    keys = hash_lines(data)
    if keys is None:
        return "the hash list has a repeated or malformed hash"
    if count < 0 or len(keys) != count:
        return f"the hash list has {len(keys)} lines, the manifest says {count}"
    if len(set(keys)) != len(keys):
        return "the hash list has a repeated or malformed hash"
    try:
        with open_regular(matrix_path) as stream:
            matrix = load_npy(stream)
    except NotRegularFileError as odd:
        return f"the matrix is {odd.kind}, not a regular file"
    except FileNotFoundError:
        return f"generation {generation} is missing a file"
    except (ValueError, EOFError) as exc:
        return f"the matrix does not load: {exc}"
    if not isinstance(matrix, np.ndarray):
        matrix.close()  # an .npz archive, opened lazily
        return "the matrix file is an archive, not an array"
    if matrix.dtype != np.float32 or matrix.shape != (count, space.dimension):
        return (f"the matrix is {matrix.dtype} {matrix.shape}, expected float32 "
                f"{(count, space.dimension)}")
    if not np.isfinite(matrix).all():
        return "the matrix holds a non-finite value"
    matrix.setflags(write=False)
    return Part(generation, tuple(keys), matrix)


# --------------------------------------------------------------------------- save


def _write_atomic(path: Path, write: Callable[[int], None]) -> None:
    """Write through a temporary file in the same folder, fsync, then rename over ``path``."""
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        write(handle)
        os.fsync(handle)
        os.close(handle)
        handle = -1
        os.replace(temp, path)
    except BaseException:
        if handle >= 0:
            os.close(handle)
        Path(temp).unlink(missing_ok=True)
        raise


def _write_bytes(data: bytes) -> Callable[[int], None]:
    def write(handle: int) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(handle, view):]
    return write


def _write_matrix(matrix: np.ndarray) -> Callable[[int], None]:
    def write(handle: int) -> None:
        with os.fdopen(os.dup(handle), "wb") as stream:
            np.save(stream, matrix, allow_pickle=False)
            stream.flush()
    return write


def save_cache(root: Path, cache: VectorCache, *, warm: WarmSets | None = None,
               compaction: Compaction = DEFAULT_COMPACTION, covering: Covering | None = None
               ) -> IOResult[SaveCounts, VectorFilesError]:
    """Merge ``cache`` into the file set of its space under ``root``.

    Vectors already on disk are kept. Nothing is written when the cache adds no hash
    the files lack; when it adds one, ``cache``'s vector wins where both hold a hash
    (the merge semantics of ``VectorCacheStore.save``). Only the rows that are new or
    differ from the set's are written, as a segment (or, by ``compaction``, a merged
    segment or a new base). A corrupt file set is replaced rather than merged with,
    and a foreign one moved aside first. ``covering``'s claim is recorded for the set
    as saved when the set read under the lock still held what its stamp read.
    """
    folder = space_dir(root, cache.space)
    return _guard(folder, lambda: _save(root, folder, cache, warm, compaction, covering))


def mark_covered(root: Path, space: VectorSpace, covering: Covering, *,
                 warm: WarmSets | None = None) -> IOResult[bool, VectorFilesError]:
    """Record ``covering``'s claim for the set of ``space`` (``vector_marks``); False
    when the set as it stands no longer holds what the claim's stamp read. Read
    without the lock: the claim names the state it is about, so a repair racing it
    makes it lapse rather than lie."""
    folder = space_dir(root, space)

    def mark() -> IOResult[bool, VectorFilesError]:
        found = _read_set(folder, space, warm.get(space) if warm else None)
        if not isinstance(found, FileSet) or not stands(covering, found.stamp):
            return IOSuccess(False)  # no set to keep a claim for, or not the one read
        # Recorded about the set as it stands: it holds at least what the claim's
        # stamp read (``stands``), and a claim about no set has no parts to name.
        write_mark(folder, Covering(covering.commit, found.stamp))
        return IOSuccess(True)

    return _guard(folder, mark)


def compact(root: Path, space: VectorSpace, *, warm: WarmSets | None = None
            ) -> IOResult[int, VectorFilesError]:
    """Fold the set of ``space`` into one base (when it has segments); the vectors it
    holds. What loads is unchanged. A set that does not add up is left to the next
    load to repair."""
    folder = space_dir(root, space)

    def fold() -> IOResult[int, VectorFilesError]:
        with _writer_lock(root, space):
            found = _read_set(folder, space, warm.get(space) if warm else None)
            if isinstance(found, VectorFilesFailure):
                return IOFailure(found)
            if not isinstance(found, FileSet):
                return IOSuccess(0)
            if len(found.parts) > 1:
                found = _write_set(folder, space, found, None, {})
            if warm is not None:
                warm.put(space, found)
            return IOSuccess(len(found.cache))

    return _guard(folder, fold)


def _save(root: Path, folder: Path, cache: VectorCache, warm: WarmSets | None,
          compaction: Compaction, covering: Covering | None
          ) -> IOResult[SaveCounts, VectorFilesError]:
    space = cache.space
    with _writer_lock(root, space):
        found = _read_set(folder, space, warm.get(space) if warm else None)
        if isinstance(found, VectorFilesFailure):
            return IOFailure(found)
        if isinstance(found, VectorFilesForeign):
            # Never written over: moved aside as a load would, then replaced by this set.
            _move_aside(root, folder, found.tag)
        # A corrupt or foreign set is replaced, not merged with.
        current = found if isinstance(found, FileSet) else None
        held: Map[str, Vector] = current.cache.vectors if current else Map()
        # The claim stands for what is written only if the set still holds what its
        # stamp read: a set repaired meanwhile is new, and lacks those rows.
        claim = covering if covering is not None and stands(
            covering, current.stamp if current is not None else NO_SET) else None
        added = sum(1 for h in cache.vectors if h not in held)
        if added == 0 and (current is not None or found is None):
            if warm is not None:
                warm.put(space, current)
            if claim is not None and current is not None:
                _hint(folder, Covering(claim.commit, current.stamp))
            return IOSuccess(SaveCounts(len(held), 0))
        for content_hash in cache.vectors:
            if not storable_hash(content_hash):
                return IOFailure(VectorFilesCorrupt(
                    str(folder), f"refusing malformed hash {content_hash!r}"))
        rows = _changed_rows(held, cache.vectors, space)
        if isinstance(rows, str):
            return IOFailure(VectorFilesCorrupt(str(folder), rows))
        union = held.update(rows)
        gap = gap_among(union, [key for key in rows if key not in held])
        if gap is not None:
            # Saved, such a set would load as corrupt and be discarded whole.
            return IOFailure(VectorFilesCorrupt(str(folder), f"refusing a partial {gap}"))
        folder.mkdir(parents=True, exist_ok=True)
        written = _write_set(folder, space, current, compaction, rows)
        if warm is not None:
            warm.put(space, written)
        if claim is not None:
            _hint(folder, Covering(claim.commit, written.stamp))
        return IOSuccess(SaveCounts(len(written.cache), added))


def _hint(folder: Path, covering: Covering) -> None:
    """A save's claim, recorded if it can be: the vectors are saved whatever becomes
    of it, and a claim not recorded costs the next command one walk."""
    with contextlib.suppress(OSError):
        write_mark(folder, covering)


def _changed_rows(held: Map[str, Vector], vectors: Mapping[str, Vector], space: VectorSpace
                  ) -> dict[str, np.ndarray] | str:
    """``vectors`` as float32 rows, but for those the set holds bit for bit already
    (a cache loaded, filled and saved whole holds the set's own arrays); or why one
    cannot be stored: a row of another width, or a non-finite value, would make the
    whole set load as corrupt."""
    rows: dict[str, np.ndarray] = {}
    for key, vector in vectors.items():
        mine = held.get(key)
        if mine is not None and mine is vector:
            continue
        row = np.asarray(vector, dtype=np.float32).ravel()
        if row.shape != (space.dimension,):
            return f"refusing a vector of {row.size} values for {key!r} in {space}"
        if mine is not None and mine.tobytes() == row.tobytes():
            continue
        if not np.isfinite(row).all():
            return f"refusing a non-finite vector for {key!r}"
        rows[key] = row
    return rows


def _write_set(folder: Path, space: VectorSpace, current: FileSet | None,
               compaction: Compaction | None, rows: Mapping[str, np.ndarray]) -> FileSet:
    """Write ``rows`` into the set ``current`` (a new set when None) and swap in its
    manifest: as a segment, or folded into a new base (always, when ``compaction``
    is None). Held under the space's lock."""
    generation = f"{_next_serial(folder):012d}-{secrets.token_hex(4)}"
    parts: tuple[Part, ...]
    if current is None:
        parts = (_write_part(folder, space, generation, rows),)
        vectors = union(parts)
        passages = whole_groups(list(vectors.keys()))[1]
    else:
        passages = current.passages + sum(
            1 for key in rows if key not in current.cache.vectors and passage_of(key) is not None)
        tail = _merged_tail(current.parts, rows, compaction) if compaction else None
        if tail is None:
            parts = (_write_part(folder, space, generation, current.cache.vectors.update(rows)),)
            vectors = union(parts)
        else:
            kept, merged = tail
            segment = _write_part(folder, space, generation, merged)
            parts = (current.parts[0], *kept, segment)
            vectors = current.cache.vectors.update(
                zip(segment.keys, segment.matrix, strict=True))
    manifest = json.dumps({
        "format": FORMAT_VERSION, "model_id": space.model_id, "dimension": space.dimension,
        "count": len(vectors), "passages": passages,
        "parts": [{"generation": part.generation, "count": len(part.keys)}
                  for part in parts]}, sort_keys=True).encode("utf-8")
    _write_atomic(folder / MANIFEST, _write_bytes(manifest))
    _remove_unlisted(folder, {part.generation for part in parts})
    return FileSet(manifest, parts, VectorCache(space, vectors), passages)


def _merged_tail(parts: Sequence[Part], rows: Mapping[str, Vector], compaction: Compaction,
                 ) -> tuple[tuple[Part, ...], dict[str, Vector]] | None:
    """The segments a save keeps and the rows of the one it writes after them:
    ``rows`` with the newest segments merged in while each holds at most
    ``merge_ratio`` times the rows being written. None when the set is to be folded
    into a new base instead: the segments would hold more than ``fold_ratio`` times
    the base's rows (``parts[0]``), or number more than ``max_segments``."""
    kept = list(parts[1:])
    merged: dict[str, Vector] = dict(rows)
    while kept and len(kept[-1].keys) <= compaction.merge_ratio * len(merged):
        last = kept.pop()
        merged = {**dict(zip(last.keys, last.matrix, strict=True)), **merged}
    held = sum(len(segment.keys) for segment in kept) + len(merged)
    if held > compaction.fold_ratio * len(parts[0].keys) \
            or len(kept) + 1 > compaction.max_segments:
        return None
    return tuple(kept), merged


def _write_part(folder: Path, space: VectorSpace, generation: str,
                rows: Mapping[str, Vector]) -> Part:
    """Write one part of ``rows`` (flat float32 rows of the space's width, as
    ``_changed_rows`` gives them and parts hold them), its keys sorted."""
    keys = sorted(rows)
    matrix = np.array([rows[key] for key in keys], dtype=np.float32).reshape(
        len(keys), space.dimension)
    matrix.setflags(write=False)
    _write_atomic(folder / f"vectors-{generation}.npy", _write_matrix(matrix))
    _write_atomic(folder / f"hashes-{generation}.txt",
                  _write_bytes("".join(f"{h}\n" for h in keys).encode("ascii")))
    return Part(generation, tuple(keys), matrix)


def _part_files(folder: Path) -> list[tuple[str, str]]:
    """``(name, generation)`` of every part's file in ``folder``, a temporary one a
    save is writing included."""
    out = []
    for path in folder.iterdir():
        found = _PART_FILE.fullmatch(path.name)
        if found is not None:
            out.append((path.name, found.group("matrix") or found.group("hashes")))
    return out


def _next_serial(folder: Path) -> int:
    return max((serial(g) for _, g in _part_files(folder)), default=0) + 1


def _remove_unlisted(folder: Path, listed: set[str]) -> None:
    """Remove the parts no manifest will name again: those not ``listed`` and older
    than the newest listed. A newer one may be a save under way in a memhtml that
    takes no lock (an older one), so it is left."""
    newest = max(serial(generation) for generation in listed)
    for name, generation in _part_files(folder):
        if generation not in listed and serial(generation) < newest:
            _remove(folder / name)


def _remove(path: Path) -> None:
    # A directory at a part's name is left: with no manifest naming it nothing reads it.
    with contextlib.suppress(IsADirectoryError, PermissionError):
        path.unlink(missing_ok=True)
