"""The vector cache on disk: one file set per vector space, keyed by content hash.

Layout under ``root`` (``.memhtml/vectors`` in a store)::

    <space.key>/manifest.json        which generation is current, and what it holds
    <space.key>/vectors-<gen>.npy    float32 matrix, one row per hash
    <space.key>/hashes-<gen>.txt     the content hashes, one a line, in row order

A save writes a new generation's two files, then swaps the manifest in by rename,
then removes older generations. A reader therefore sees the old set or the new one,
never a matrix of one save with the hashes of another. Two concurrent saves both
succeed and the later manifest wins; the loser's new vectors are only missed by the
cache and get embedded again by a later fill.

Anything that does not add up (a missing file, a shape or count that disagrees with
the manifest, a non-finite value, a manifest for another space) is reported as
``VectorFilesCorrupt`` and its vectors are not used.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias, TypeVar

import numpy as np
from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.services import Vector, VectorSpace
from memhtml.head.vectors import VectorCache, cache_from, empty_vector_cache

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
_HASH = re.compile(r"[0-9A-Za-z_:.+/=-]{1,256}")
_GENERATION = re.compile(r"([0-9]{1,12})-[0-9a-f]{8}")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class VectorFilesCorrupt:
    """A file set that cannot be trusted: where, and why."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class VectorFilesFailure:
    """The file system refused a read or a write."""

    path: str
    reason: str


VectorFilesError: TypeAlias = VectorFilesCorrupt | VectorFilesFailure


@dataclass(frozen=True, slots=True)
class SaveCounts:
    """What a save did: vectors in the file set afterwards, and how many were new."""

    stored: int
    added: int


def space_dir(root: Path, space: VectorSpace) -> Path:
    return root / space.key


def _guard(path: Path, thunk: Callable[[], IOResult[T, VectorFilesError]]
           ) -> IOResult[T, VectorFilesError]:
    try:
        return thunk()
    except OSError as exc:
        return IOFailure(VectorFilesFailure(str(path), f"{type(exc).__name__}: {exc}"))


# --------------------------------------------------------------------------- load


def load_cache(root: Path, space: VectorSpace) -> IOResult[VectorCache, VectorFilesError]:
    """The cached vectors of ``space`` under ``root``; an empty cache when none is saved."""
    folder = space_dir(root, space)
    return _guard(folder, lambda: _load(folder, space))


def _load(folder: Path, space: VectorSpace) -> IOResult[VectorCache, VectorFilesError]:
    manifest_path = folder / MANIFEST
    if not manifest_path.exists():
        return IOSuccess(empty_vector_cache(space))

    def corrupt(reason: str) -> IOResult[VectorCache, VectorFilesError]:
        return IOFailure(VectorFilesCorrupt(str(folder), reason))

    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return corrupt(f"manifest is not JSON: {exc}")
    if not isinstance(manifest, dict):
        return corrupt("manifest is not a JSON object")
    if manifest.get("format") != FORMAT_VERSION:
        return corrupt(f"unknown format {manifest.get('format')!r}")
    if manifest.get("model_id") != space.model_id or manifest.get("dimension") != space.dimension:
        return corrupt(f"manifest is for {manifest.get('model_id')!r} "
                       f"at {manifest.get('dimension')!r}, not {space}")
    generation = manifest.get("generation")
    count = manifest.get("count")
    if not isinstance(generation, str) or not _GENERATION.fullmatch(generation):
        return corrupt("manifest names no valid generation")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        return corrupt("manifest has no valid count")
    hashes_path = folder / f"hashes-{generation}.txt"
    matrix_path = folder / f"vectors-{generation}.npy"
    if not hashes_path.exists() or not matrix_path.exists():
        return corrupt(f"generation {generation} is missing a file")
    try:
        hashes = hashes_path.read_text(encoding="ascii").splitlines()
    except UnicodeDecodeError:
        return corrupt("the hash list is not ASCII")
    if len(hashes) != count:
        return corrupt(f"the hash list has {len(hashes)} lines, the manifest says {count}")
    if len(set(hashes)) != len(hashes) or not all(_HASH.fullmatch(h) for h in hashes):
        return corrupt("the hash list has a repeated or malformed hash")
    try:
        matrix = np.load(matrix_path, allow_pickle=False)
    except (ValueError, EOFError) as exc:
        return corrupt(f"the matrix does not load: {exc}")
    if matrix.dtype != np.float32 or matrix.shape != (count, space.dimension):
        return corrupt(f"the matrix is {matrix.dtype} {matrix.shape}, expected float32 "
                       f"{(count, space.dimension)}")
    if not np.all(np.isfinite(matrix)):
        return corrupt("the matrix holds a non-finite value")
    return IOSuccess(cache_from(space, {h: matrix[i] for i, h in enumerate(hashes)}))


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

    Vectors already on disk are kept; ``cache``'s vector wins where both hold a hash.
    A file set that does not load is replaced rather than merged with. Nothing is
    written when the cache adds no hash the files lack.
    """
    folder = space_dir(root, cache.space)
    return _guard(folder, lambda: _save(folder, cache))


def _save(folder: Path, cache: VectorCache) -> IOResult[SaveCounts, VectorFilesError]:
    folder.mkdir(parents=True, exist_ok=True)
    # A file set that does not load is replaced (None), not merged with.
    previous: IOResult[dict[str, Vector] | None, VectorFilesError] = _load(
        folder, cache.space).map(lambda old: dict(old.vectors.items()))
    return previous.lash(lambda _: IOSuccess(None)).bind(
        lambda old: _save_merged(folder, cache, old))


def _save_merged(folder: Path, cache: VectorCache, old: dict[str, Vector] | None
                 ) -> IOResult[SaveCounts, VectorFilesError]:
    space = cache.space
    merged: dict[str, Vector] = dict(old or {})
    added = sum(1 for h in cache.vectors if h not in merged)
    if added == 0 and old is not None:
        return IOSuccess(SaveCounts(len(merged), 0))
    for content_hash in cache.vectors:
        if not _HASH.fullmatch(content_hash):
            return IOFailure(VectorFilesCorrupt(str(folder),
                                                f"refusing malformed hash {content_hash!r}"))
    merged.update(cache.vectors.items())
    hashes = sorted(merged)
    matrix = np.zeros((len(hashes), space.dimension), dtype=np.float32)
    for row, content_hash in enumerate(hashes):
        matrix[row] = np.asarray(merged[content_hash], dtype=np.float32).ravel()
    # The random tail keeps two concurrent saves from writing the same file names.
    generation = f"{_next_generation(folder):012d}-{secrets.token_hex(4)}"
    _write_atomic(folder / f"vectors-{generation}.npy", _write_matrix(matrix))
    _write_atomic(folder / f"hashes-{generation}.txt",
                  _write_bytes("".join(f"{h}\n" for h in hashes).encode("ascii")))
    manifest = {"format": FORMAT_VERSION, "model_id": space.model_id,
                "dimension": space.dimension, "count": len(hashes), "generation": generation}
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
        for name in (f"vectors-{generation}.npy", f"hashes-{generation}.txt"):
            (folder / name).unlink(missing_ok=True)
