"""The vector cache on disk: one file set per vector space, keyed by content hash.

``VectorFiles`` is this layout as the ``VectorCacheStore`` port
(``memhtml.contracts.vectors``); the functions below are its parts, and what the
contract cannot see (healing, refused reads) is tested on them directly.

Layout under ``root`` (``<git-dir>/memhtml/vectors`` in a store)::

    <space.key>/manifest.json        which generation is current, and what it holds
    <space.key>/vectors-<gen>.npy    float32 matrix, one row per hash
    <space.key>/hashes-<gen>.txt     the content hashes, one a line, in row order
    .aside/<space.key>.<why>/        a file set moved aside (see below)

A save writes a new generation's two files, then swaps the manifest in by rename,
then removes older generations. A reader therefore sees the old set or the new one,
never a matrix of one save with the hashes of another. Two concurrent saves both
succeed and the later manifest wins; the loser's new vectors are only missed by the
cache and get embedded again by a later fill.

``load_cache`` reports what does not add up and uses none of it: a missing file, a
shape or count that disagrees with the manifest, a non-finite value
(``VectorFilesCorrupt``); a set written in a newer format or for another vector
space (``VectorFilesForeign``). ``load_or_heal`` then repairs the cache so the next
command starts clean, and says once what it did: a corrupt set is deleted (its
vectors cannot be trusted, and ``memhtml embed`` rebuilds them), while a foreign set
is moved aside whole, because it is good data to whoever wrote it (a newer memhtml,
or an embedder whose space key collides with this one's) and its vectors may have
cost an API bill; deleting it would make an older memhtml destroy a newer one's
cache just by running ``search``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias, TypeVar

import numpy as np
from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.adapters.vector_layout import MANIFEST
from memhtml.contracts.local_files import (
    NotRegularFileError,
    blocking_entry,
    open_regular,
    read_regular,
)
from memhtml.contracts.services import Vector, VectorSpace
from memhtml.contracts.vectors import (
    LoadedVectors,
    VectorCache,
    VectorCacheFault,
    cache_from,
    empty_vector_cache,
)
from memhtml.head.passages import group_sizes, is_passage_key

FORMAT_VERSION = 2
"""2: the hash list may hold passage rows (``head.passages``: ``<group>.<i>``) beside
memories' content hashes, and the manifest counts them; a set holding none is written
as 1, which every memhtml reads."""
PLAIN_FORMAT = 1
ASIDE_DIR = ".aside"
_HASH = re.compile(r"[0-9A-Za-z_:.+/=-]{1,256}")
_GENERATION = re.compile(r"([0-9]{1,12})-[0-9a-f]{8}")
_HEAL_ATTEMPTS = 3
_NOT_A_FILE = b"\0not a regular file"
"""What a manifest that is not a regular file is judged as (no manifest holds a NUL)."""

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class VectorFilesCorrupt:
    """A file set that cannot be trusted: where, and why.

    ``manifest`` holds the manifest's bytes as judged and ``generation`` the
    generation it named (when it named a valid one), so a repair removes exactly
    the set that was judged and not one a concurrent save has swapped in since.
    """

    path: str
    reason: str
    manifest: bytes | None = field(default=None, repr=False, compare=False)
    generation: str | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class VectorFilesForeign:
    """A well-formed file set this memhtml must not use: written in a newer format
    (``format-<n>``) or for another vector space (``space-<key>``), named by ``tag``."""

    path: str
    reason: str
    tag: str


@dataclass(frozen=True, slots=True)
class VectorFilesFailure:
    """The file system refused a read or a write."""

    path: str
    reason: str


VectorFilesError: TypeAlias = VectorFilesCorrupt | VectorFilesForeign | VectorFilesFailure


@dataclass(frozen=True, slots=True)
class SaveCounts:
    """What a save did: vectors in the file set afterwards, and how many were new."""

    stored: int
    added: int


def storable_hash(content_hash: str) -> bool:
    """Whether ``content_hash`` can be stored: one line of the hash list, of the
    characters a content hash is spelled with."""
    return _HASH.fullmatch(content_hash) is not None


def space_dir(root: Path, space: VectorSpace) -> Path:
    return root / space.key


def aside_dir(root: Path) -> Path:
    return root / ASIDE_DIR


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


# --------------------------------------------------------------------------- load


def load_cache(root: Path, space: VectorSpace) -> IOResult[VectorCache, VectorFilesError]:
    """The cached vectors of ``space`` under ``root``; an empty cache when none is saved.
    Reads only: a set that does not add up is reported, not repaired."""
    folder = space_dir(root, space)

    def read() -> IOResult[VectorCache, VectorFilesError]:
        found = _read(folder, space)
        return IOSuccess(found) if isinstance(found, VectorCache) else IOFailure(found)

    return _guard(folder, read)


def load_or_heal(root: Path, space: VectorSpace) -> IOResult[LoadedVectors, VectorFilesError]:
    """``load_cache``, except that a corrupt set is deleted and a foreign one moved
    aside, and either loads as an empty cache with a note saying what happened.

    Only a file system that refuses a read (or the repair) is a failure. A set that
    changes while it is judged (a concurrent save) is judged again, not discarded.
    """
    folder = space_dir(root, space)
    return _guard(folder, lambda: _heal(root, folder, space))


def _heal(root: Path, folder: Path, space: VectorSpace
          ) -> IOResult[LoadedVectors, VectorFilesError]:
    empty = empty_vector_cache(space)
    for _ in range(_HEAL_ATTEMPTS):
        found = _read(folder, space)
        if isinstance(found, VectorCache):
            return IOSuccess(LoadedVectors(found))
        if isinstance(found, VectorFilesFailure):
            return IOFailure(found)
        if isinstance(found, VectorFilesForeign):
            moved = _move_aside(root, folder, found.tag)
            return IOSuccess(LoadedVectors(empty, f"vector cache {folder}: {found.reason}; "
                                                  f"moved aside to {moved}"))
        if _delete_judged(folder, found):
            return IOSuccess(LoadedVectors(empty, f"vector cache {folder}: {found.reason}; "
                                                  "discarded"))
    return IOFailure(VectorFilesFailure(str(folder), "the file set kept changing while it "
                                                     "was read"))


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
        limit = _serial(judged.generation)
        for generation in set(_generations(folder)):
            if _serial(generation) <= limit:
                _remove_generation(folder, generation)
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
    """The manifest's bytes; None when there is none; ``_NOT_A_FILE`` when something
    other than a regular file stands there (never opened, so a FIFO cannot block)."""
    try:
        return read_regular(manifest)
    except FileNotFoundError:
        return None
    except NotRegularFileError:
        return _NOT_A_FILE


def _read(folder: Path, space: VectorSpace) -> VectorCache | VectorFilesError:
    manifest_path = folder / MANIFEST
    raw = _manifest_bytes(manifest_path)
    if raw is None:
        return empty_vector_cache(space)

    def corrupt(reason: str, generation: str | None = None) -> VectorFilesCorrupt:
        return VectorFilesCorrupt(str(folder), reason, raw, generation)

    if raw == _NOT_A_FILE:
        return corrupt(f"{MANIFEST} is not a regular file")
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return corrupt(f"manifest is not JSON: {exc}")
    if not isinstance(manifest, dict):
        return corrupt("manifest is not a JSON object")
    found = manifest.get("format")
    if isinstance(found, int) and not isinstance(found, bool) and found > FORMAT_VERSION:
        # Nothing else is read: a newer format may lay out its manifest otherwise.
        return VectorFilesForeign(str(folder), f"written by a newer memhtml (format {found}, "
                                               f"this one reads {FORMAT_VERSION})",
                                  f"format-{found}")
    if found not in (PLAIN_FORMAT, FORMAT_VERSION):
        return corrupt(f"unknown format {found!r}")
    model_id, dimension = manifest.get("model_id"), manifest.get("dimension")
    if not isinstance(model_id, str) or not isinstance(dimension, int) \
            or isinstance(dimension, bool) or dimension < 1:
        return corrupt("manifest names no valid vector space")
    if model_id != space.model_id or dimension != space.dimension:
        other = VectorSpace(model_id, dimension)
        return VectorFilesForeign(str(folder), f"manifest is for {model_id!r} at {dimension!r}, "
                                               f"not {space}", f"space-{other.key}")
    generation = manifest.get("generation")
    count = manifest.get("count")
    if not isinstance(generation, str) or not _GENERATION.fullmatch(generation):
        return corrupt("manifest names no valid generation")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        return corrupt("manifest has no valid count", generation)
    hashes_path = folder / f"hashes-{generation}.txt"
    matrix_path = folder / f"vectors-{generation}.npy"
    if not os.path.lexists(hashes_path) or not os.path.lexists(matrix_path):
        return corrupt(f"generation {generation} is missing a file", generation)
    try:
        hashes = read_regular(hashes_path).decode("ascii").splitlines()
    except NotRegularFileError as odd:
        return corrupt(f"the hash list is {odd.kind}, not a regular file", generation)
    except UnicodeDecodeError:
        return corrupt("the hash list is not ASCII", generation)
    if len(hashes) != count:
        return corrupt(f"the hash list has {len(hashes)} lines, the manifest says {count}",
                       generation)
    if len(set(hashes)) != len(hashes) or not all(_HASH.fullmatch(h) for h in hashes):
        return corrupt("the hash list has a repeated or malformed hash", generation)
    passages = _passages_checked(hashes, found, manifest.get("passages"))
    if isinstance(passages, str):
        return corrupt(passages, generation)
    try:
        with open_regular(matrix_path) as stream:
            matrix = np.load(stream, allow_pickle=False)
    except NotRegularFileError as odd:
        return corrupt(f"the matrix is {odd.kind}, not a regular file", generation)
    except (ValueError, EOFError) as exc:
        return corrupt(f"the matrix does not load: {exc}", generation)
    if not isinstance(matrix, np.ndarray):
        matrix.close()  # an .npz archive, opened lazily
        return corrupt("the matrix file is an archive, not an array", generation)
    if matrix.dtype != np.float32 or matrix.shape != (count, space.dimension):
        return corrupt(f"the matrix is {matrix.dtype} {matrix.shape}, expected float32 "
                       f"{(count, space.dimension)}", generation)
    if not np.all(np.isfinite(matrix)):
        return corrupt("the matrix holds a non-finite value", generation)
    return cache_from(space, {h: matrix[i] for i, h in enumerate(hashes)})


def _passages_checked(hashes: list[str], found: object, stated: object) -> int | str:
    """The passage rows of a hash list, or why they do not add up: a format 1 set holds
    none; a format 2 set says how many it holds, and they form whole groups (rows 0 to
    n-1 each), since a group is only ever saved whole."""
    rows = [h for h in hashes if is_passage_key(h)]
    if found == PLAIN_FORMAT:
        return "a format 1 set holds passage rows" if rows else 0
    if not isinstance(stated, int) or isinstance(stated, bool) or stated != len(rows):
        return f"the manifest counts {stated!r} passages, the hash list holds {len(rows)}"
    sizes = group_sizes(rows)
    return sizes if isinstance(sizes, str) else len(rows)


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


def save_cache(root: Path, cache: VectorCache) -> IOResult[SaveCounts, VectorFilesError]:
    """Merge ``cache`` into the file set of its space under ``root``.

    Vectors already on disk are kept. Nothing is written when the cache adds no hash
    the files lack; when it adds one, ``cache``'s vector wins where both hold a hash
    (the merge semantics of ``VectorCacheStore.save``). A corrupt file set is replaced
    rather than merged with, and a foreign one moved aside first.
    """
    folder = space_dir(root, cache.space)
    return _guard(folder, lambda: _save(folder, cache))


def _save(folder: Path, cache: VectorCache) -> IOResult[SaveCounts, VectorFilesError]:
    found = _read(folder, cache.space)
    if isinstance(found, VectorFilesFailure):
        return IOFailure(found)
    if isinstance(found, VectorFilesForeign):
        # Never written over: moved aside as a load would, then replaced by this set.
        _move_aside(folder.parent, folder, found.tag)
    folder.mkdir(parents=True, exist_ok=True)
    # A corrupt set is replaced (None), not merged with.
    old = dict(found.vectors.items()) if isinstance(found, VectorCache) else None
    return _save_merged(folder, cache, old)


def _save_merged(folder: Path, cache: VectorCache, old: dict[str, Vector] | None
                 ) -> IOResult[SaveCounts, VectorFilesError]:
    space = cache.space
    merged: dict[str, Vector] = dict(old or {})
    added = sum(1 for h in cache.vectors if h not in merged)
    if added == 0 and old is not None:
        return IOSuccess(SaveCounts(len(merged), 0))
    for content_hash in cache.vectors:
        if not storable_hash(content_hash):
            return IOFailure(VectorFilesCorrupt(str(folder),
                                                f"refusing malformed hash {content_hash!r}"))
    merged.update(cache.vectors.items())
    hashes = sorted(merged)
    gaps = group_sizes(hashes)
    if isinstance(gaps, str):
        # Saved, such a set would load as corrupt and be discarded whole.
        return IOFailure(VectorFilesCorrupt(str(folder), f"refusing a partial {gaps}"))
    matrix = np.zeros((len(hashes), space.dimension), dtype=np.float32)
    for row, content_hash in enumerate(hashes):
        matrix[row] = np.asarray(merged[content_hash], dtype=np.float32).ravel()
    # The random tail keeps two concurrent saves from writing the same file names.
    generation = f"{_next_generation(folder):012d}-{secrets.token_hex(4)}"
    _write_atomic(folder / f"vectors-{generation}.npy", _write_matrix(matrix))
    _write_atomic(folder / f"hashes-{generation}.txt",
                  _write_bytes("".join(f"{h}\n" for h in hashes).encode("ascii")))
    passages = sum(1 for h in hashes if is_passage_key(h))
    manifest: dict[str, object] = {
        "format": FORMAT_VERSION if passages else PLAIN_FORMAT, "model_id": space.model_id,
        "dimension": space.dimension, "count": len(hashes), "generation": generation}
    if passages:
        manifest["passages"] = passages
    _write_atomic(folder / MANIFEST,
                  _write_bytes(json.dumps(manifest, sort_keys=True).encode("utf-8")))
    _remove_other_generations(folder, generation)
    return IOSuccess(SaveCounts(len(hashes), added))


def _generations(folder: Path) -> list[str]:
    out = []
    for path in folder.iterdir():
        for prefix, suffix in (("vectors-", ".npy"), ("hashes-", ".txt")):
            name = path.name
            if name.startswith(prefix) and name.endswith(suffix):
                middle = name[len(prefix) : -len(suffix)]
                if _GENERATION.fullmatch(middle):
                    out.append(middle)
    return out


def _serial(generation: str) -> int:
    return int(generation.split("-", 1)[0])


def _next_generation(folder: Path) -> int:
    return max((_serial(g) for g in _generations(folder)), default=0) + 1


def _remove_other_generations(folder: Path, keep: str) -> None:
    # Only older ones: a newer generation may belong to a save still under way.
    for generation in set(_generations(folder)):
        if _serial(generation) >= _serial(keep):
            continue
        _remove_generation(folder, generation)


def _remove_generation(folder: Path, generation: str) -> None:
    for name in (f"vectors-{generation}.npy", f"hashes-{generation}.txt"):
        # A directory at a generation's name is left: with the manifest gone (or
        # naming a newer generation) nothing reads it.
        with contextlib.suppress(IsADirectoryError, PermissionError):
            (folder / name).unlink(missing_ok=True)
