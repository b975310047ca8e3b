"""A vector file set's contents, checked: the manifest's parse and the rows' rules.

Pure functions over bytes and arrays; no file is opened here (``vector_files`` reads
and writes the files, under the space's lock, and is the ``VectorCacheStore`` port).
Apart from it because these are the rules every read and every save applies alike:
what a manifest may list (only a generation's name, never a path), what a hash list
may hold (one storable hash a line), how parts are unioned (a later part's row
winning), and when the passage rows form whole groups (every row of a group, 0 to
its size less one). A part written is a part read, so a save checks its rows with
the same functions a load does.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias, TypeGuard

import numpy as np
from immutables import Map

from memhtml.adapters.vector_layout import MANIFEST
from memhtml.contracts.services import Vector, VectorSpace
from memhtml.head.passages import PASSAGE_GROUP_PREFIX, group_sizes, split_passage_key

FORMAT_VERSION = 3
"""3: a base and segments, listed in order by the manifest (``parts``), which counts
the union's rows and passages. Written by every save."""
PASSAGES_FORMAT = 2
"""2: one generation whose hash list may hold passage rows (``head.passages``:
``<group>.<i>``) beside memories' content hashes, counted by the manifest."""
PLAIN_FORMAT = 1
"""1: one generation of content hashes only."""
_HASH = re.compile(r"[0-9A-Za-z_:.+/=-]{1,256}")
_HASH_BYTES = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_:.+/=-"
GENERATION = re.compile(r"([0-9]{1,12})-[0-9a-f]{8}")
"""A generation's name: a serial, then eight hex digits."""
NOT_A_FILE = b"\0not a regular file"
"""What a manifest that is not a regular file is judged as (no manifest holds a NUL)."""
_FEW = 256
"""Up to this many new keys, passage groups are checked key by key; past it, at once."""


@dataclass(frozen=True, slots=True)
class VectorFilesCorrupt:
    """A file set that cannot be trusted: where, and why.

    ``manifest`` holds the manifest's bytes as judged and ``generation`` the newest
    generation it named (when it named valid ones), so a repair removes exactly the
    set that was judged and not one a concurrent save has swapped in since.
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
class Part:
    """One part of a file set: its generation, its keys in row order, and its matrix
    (float32, read-only, one row per key)."""

    generation: str
    keys: tuple[str, ...]
    matrix: np.ndarray


@dataclass(frozen=True, slots=True)
class Manifest:
    """A manifest as ``parse_manifest`` read it: its format, the parts it lists in order
    (a generation and its row count each), and the union's rows."""

    format: int
    parts: tuple[tuple[str, int], ...]
    count: int
    passages: int | None
    """Passage rows the union holds; None in format 1, which holds none."""


def storable_hash(content_hash: str) -> bool:
    """Whether ``content_hash`` can be stored: one line of the hash list, of the
    characters a content hash is spelled with."""
    return _HASH.fullmatch(content_hash) is not None


def serial(generation: str) -> int:
    return int(generation.split("-", 1)[0])


def parse_manifest(folder: Path, space: VectorSpace, raw: bytes) -> Manifest | VectorFilesError:
    def corrupt(reason: str, generation: str | None = None) -> VectorFilesCorrupt:
        return VectorFilesCorrupt(str(folder), reason, raw, generation)

    if raw == NOT_A_FILE:
        return corrupt(f"{MANIFEST} is not a regular file")
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return corrupt(f"manifest is not JSON: {exc}")
    if not isinstance(manifest, dict):
        return corrupt("manifest is not a JSON object")
    found = manifest.get("format")
    if is_count(found) and found > FORMAT_VERSION:
        # Nothing else is read: a newer format may lay out its manifest otherwise.
        return VectorFilesForeign(str(folder), f"written by a newer memhtml (format {found}, "
                                               f"this one reads {FORMAT_VERSION})",
                                  f"format-{found}")
    if not is_count(found) or found not in (PLAIN_FORMAT, PASSAGES_FORMAT, FORMAT_VERSION):
        return corrupt(f"unknown format {found!r}")
    model_id, dimension = manifest.get("model_id"), manifest.get("dimension")
    if not isinstance(model_id, str) or not is_count(dimension) or dimension < 1:
        return corrupt("manifest names no valid vector space")
    if model_id != space.model_id or dimension != space.dimension:
        other = VectorSpace(model_id, dimension)
        return VectorFilesForeign(str(folder), f"manifest is for {model_id!r} at {dimension!r}, "
                                               f"not {space}", f"space-{other.key}")
    listed = listed_parts(manifest, found)
    if isinstance(listed, str):
        return corrupt(listed)
    newest = max(listed, key=lambda part: serial(part[0]))[0]
    count, passages = manifest.get("count"), manifest.get("passages")
    if not is_count(count):
        return corrupt("manifest has no valid count", newest)
    if found == PLAIN_FORMAT:
        return Manifest(found, listed, count, None)
    if not is_count(passages):
        return corrupt(f"the manifest counts {passages!r} passages", newest)
    return Manifest(found, listed, count, passages)


def listed_parts(manifest: dict[str, object], found: int
                  ) -> tuple[tuple[str, int], ...] | str:
    """The parts a manifest lists, in order, or why they cannot be read. Only a
    generation's name is taken from a manifest, never a path: a part is always the
    two files of that generation in the set's own folder."""
    if found != FORMAT_VERSION:
        generation = manifest.get("generation")
        if not isinstance(generation, str) or not GENERATION.fullmatch(generation):
            return "manifest names no valid generation"
        count = manifest.get("count")
        return ((generation, count if is_count(count) else -1),)
    listed = manifest.get("parts")
    if not isinstance(listed, list) or not listed:
        return "manifest lists no parts"
    parts: list[tuple[str, int]] = []
    for part in listed:
        generation = part.get("generation") if isinstance(part, dict) else None
        count = part.get("count") if isinstance(part, dict) else None
        if not isinstance(generation, str) or not GENERATION.fullmatch(generation):
            return "manifest names no valid generation"
        if not is_count(count):
            return f"manifest has no valid count for part {generation}"
        parts.append((generation, count))
    if len({generation for generation, _ in parts}) != len(parts):
        return "manifest lists a part twice"
    return tuple(parts)


def is_count(value: object) -> TypeGuard[int]:
    """Whether ``value`` is a count: an int (not a bool), never negative."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def covers(parts: Sequence[Part], replaced: Sequence[Part]) -> bool:
    """Whether ``parts`` hold every key of ``replaced``."""
    if not replaced:
        return True
    keys = {key for part in parts for key in part.keys}
    return all(key in keys for part in replaced for key in part.keys)


def hash_lines(data: bytes) -> list[str] | None:
    """The keys of a hash list (each line one storable hash, each line ended by a
    newline); None when it is not one."""
    if not data:
        return []
    # Checked at once: only hash characters and newlines, no empty or overlong line.
    if data.translate(None, _HASH_BYTES).strip(b"\n") or not data.endswith(b"\n") \
            or data.startswith(b"\n") or b"\n\n" in data:
        return None
    keys = data.decode("ascii").split("\n")
    keys.pop()
    if max(map(len, keys)) > 256:
        return None
    return keys


def union(parts: Sequence[Part]) -> Map[str, Vector]:
    """The parts' rows by key, a later part's row winning."""
    if not parts:
        return Map()
    vectors: Map[str, Vector] = Map(zip(parts[0].keys, parts[0].matrix, strict=True))
    for part in parts[1:]:
        vectors = vectors.update(zip(part.keys, part.matrix, strict=True))
    return vectors


def extended(vectors: Map[str, Vector], passages: int, parts: Sequence[Part]
              ) -> tuple[Map[str, Vector], int, list[str]]:
    """``vectors`` with ``parts`` after them, the passage rows then held, and the keys
    the parts added."""
    fresh = [key for part in parts for key in part.keys if key not in vectors]
    fresh = list(dict.fromkeys(fresh))
    for part in parts:
        vectors = vectors.update(zip(part.keys, part.matrix, strict=True))
    return vectors, passages + sum(1 for key in fresh if passage_of(key) is not None), fresh


def passage_of(key: str) -> tuple[str, int] | None:
    return split_passage_key(key) if key.startswith(PASSAGE_GROUP_PREFIX) else None


def gap_among(vectors: Mapping[str, object], fresh: Sequence[str]) -> str | None:
    """Why adding ``fresh`` to a set of whole passage groups leaves one partial (the
    set is now ``vectors``), or None. A row's group is whole when every row has the
    one below it; the rows held before had theirs, so only the new ones are asked."""
    if len(fresh) > _FEW:
        whole, _ = whole_groups(list(vectors.keys()))
        return None if whole else gap_reason(vectors.keys())
    for key in fresh:
        split = passage_of(key)
        if split is not None and split[1] > 0 \
                and f"{split[0]}.{split[1] - 1}" not in vectors:
            return gap_reason(vectors.keys())
    return None


def gap_reason(keys: Iterable[str]) -> str:
    sizes = group_sizes(list(keys))
    return sizes if isinstance(sizes, str) else "a passage group is not whole"


_HEX = np.zeros(256, dtype=bool)
_HEX[[*b"0123456789abcdef"]] = True
_DIGIT = np.zeros(256, dtype=bool)
_DIGIT[[*b"0123456789"]] = True
_GROUP_WIDTH = len(PASSAGE_GROUP_PREFIX) + 40


def whole_groups(keys: Sequence[str]) -> tuple[bool, int]:
    """Whether the passage rows among ``keys`` (distinct, storable) form whole groups,
    and how many there are: ``head.passages.group_sizes`` answered at once, over the
    keys as one byte matrix, for a set of many thousand rows (a test holds the two to
    one verdict)."""
    names = np.array(keys, dtype=np.bytes_)
    if names.size == 0 or names.dtype.itemsize <= _GROUP_WIDTH + 1:
        return True, 0
    width = names.dtype.itemsize
    grid = names.view(np.uint8).reshape(names.size, width)
    prefix = np.frombuffer(PASSAGE_GROUP_PREFIX.encode("ascii"), dtype=np.uint8)
    rows = np.flatnonzero((grid[:, :len(prefix)] == prefix).all(axis=1)
                          & (grid[:, _GROUP_WIDTH] == ord(".")))
    grid = grid[rows]
    digits = grid[:, _GROUP_WIDTH + 1:]
    is_digit = _DIGIT[digits]
    places = is_digit.sum(axis=1)
    rows_ok = (_HEX[grid[:, len(prefix):_GROUP_WIDTH]].all(axis=1)
               & (is_digit | (digits == 0)).all(axis=1) & (places >= 1)
               & ~((digits[:, 0] == ord("0")) & (places > 1)))
    if digits.shape[1] > 1:
        # Digits first, then only the padding a shorter key has.
        rows_ok &= (~is_digit[:, 1:] | is_digit[:, :-1]).all(axis=1)
    grid, digits, places = grid[rows_ok], digits[rows_ok], places[rows_ok]
    if grid.shape[0] == 0:
        return True, 0
    if int(places.max()) > 15:
        # An index past what the sum below holds: asked key by key.
        listed = [key for key in keys if passage_of(key) is not None]
        return not isinstance(group_sizes(listed), str), len(listed)
    index = np.zeros(grid.shape[0], dtype=np.int64)
    values = digits.astype(np.int64) - ord("0")
    for place in range(int(places.max())):
        index = np.where(place < places, index * 10 + values[:, place], index)
    groups: list[bytes] = np.ascontiguousarray(grid[:, :_GROUP_WIDTH]).view(
        f"S{_GROUP_WIDTH}").ravel().tolist()
    sizes = Counter(groups)
    # Distinct rows, each below its group's size: the rows are 0 to size-1.
    ceiling = np.fromiter(map(sizes.__getitem__, groups), dtype=np.int64, count=len(groups))
    return bool((index < ceiling).all()), len(groups)
