"""The array stream both local caches share (the head's snapshots and the markdown
index cache): after a JSON header of their own, a run of ``.npy`` records, each listed
in the header as ``[name, bytes, CRC-32]``.

Read with ``allow_pickle=False`` and checked record by record, so a file from a
clone, another user or a torn write is refused, never executed or believed; the
callers treat a refusal as a miss and rebuild.
"""

from __future__ import annotations

import zlib
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt


class RecordsRefusedError(ValueError):
    """A file that loads but is not what this version wrote."""


def checksum(array: npt.NDArray[Any]) -> int:
    """The CRC-32 a header lists for ``array``."""
    return zlib.crc32(np.ascontiguousarray(array).data)


def read_arrays(stream: BinaryIO, listed: list[object]) -> dict[str, npt.NDArray[Any]]:
    """The records the header ``listed``, read from ``stream`` in order, each checked
    for its size and checksum, and nothing after the last; ``RecordsRefusedError`` says
    what did not hold."""
    arrays: dict[str, npt.NDArray[Any]] = {}
    for entry in listed:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)):
            raise RecordsRefusedError("the header lists an array badly")
        name, size, expected = entry
        array = np.load(stream, allow_pickle=False)
        if not isinstance(array, np.ndarray) or array.nbytes != size:
            raise RecordsRefusedError(f"array {name} is truncated or the wrong size")
        # A flipped bit would otherwise be served as data until the next rewrite; the
        # check costs about 6.5 ms on a SciFact snapshot.
        if checksum(array) != expected:
            raise RecordsRefusedError(f"array {name} fails its checksum")
        arrays[name] = array
    if stream.read(1):
        raise RecordsRefusedError("bytes after the last array")
    return arrays
