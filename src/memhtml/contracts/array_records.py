"""The array stream both local caches share (the head's snapshots and the markdown
index cache): after a JSON header of their own, a run of ``.npy`` records, each listed
in the header as ``[name, bytes, CRC-32]``.

Read with ``allow_pickle=False`` and checked record by record, so a file from a
clone, another user or a torn write is refused, never executed or believed; the
callers treat a refusal as a miss and rebuild.
"""

from __future__ import annotations

import os
import zlib
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt


class RecordsRefusedError(ValueError):
    """A file that loads but is not what this version wrote."""


def checksum(array: npt.NDArray[Any]) -> int:
    """The CRC-32 a header lists for ``array``."""
    return zlib.crc32(np.ascontiguousarray(array).data)


def read_arrays(stream: BinaryIO, listed: list[object],
                mapped: frozenset[str] = frozenset()) -> dict[str, npt.NDArray[Any]]:
    """The records the header ``listed``, read from ``stream`` in order, each checked
    for its size and checksum, and nothing after the last; ``RecordsRefusedError`` says
    what did not hold.

    A record named in ``mapped`` (a 1-d byte array) is memory-mapped from the file
    instead of read: its pages load only where a caller looks, and the mapping
    outlives the stream (and the file's removal). Its checksum is not checked, since
    that would read every page; the caller checks what it reads from it.
    """
    arrays: dict[str, npt.NDArray[Any]] = {}
    for entry in listed:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)):
            raise RecordsRefusedError("the header lists an array badly")
        name, size, expected = entry
        if name in mapped:
            arrays[name] = _mapped_bytes(stream, name, size)
            continue
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


def npy_header(stream: BinaryIO) -> tuple[tuple[int, ...], bool, np.dtype[Any]] | None:
    """The shape, Fortran order and dtype of the ``.npy`` record starting here, with the
    stream moved to its data; None for a version of the format other than 1.0 and 2.0.
    A header numpy cannot read raises as ``np.lib.format`` does."""
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(stream)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(stream)
    return None


def _mapped_bytes(stream: BinaryIO, name: str, size: object) -> npt.NDArray[Any]:
    """The 1-d byte array whose ``.npy`` record starts here, mapped read-only, with the
    stream moved past it. Refused unless the file holds all of it: touching a mapped
    page past the end of a file kills the process (SIGBUS) instead of raising."""
    if type(size) is not int or size < 0:
        raise RecordsRefusedError(f"array {name} has no size")
    header = npy_header(stream)
    if header is None:
        raise RecordsRefusedError(f"array {name} is in an unknown .npy version")
    shape, fortran, dtype = header
    if dtype != np.dtype(np.uint8) or fortran or shape != (size,):
        raise RecordsRefusedError(f"array {name} is not {size} bytes")
    offset = stream.tell()
    if os.fstat(stream.fileno()).st_size < offset + size:
        raise RecordsRefusedError(f"array {name} is truncated")
    if not size:
        return np.zeros(0, dtype=np.uint8)
    array: npt.NDArray[Any] = np.memmap(stream, dtype=np.uint8, mode="r", offset=offset,
                                        shape=(size,))
    stream.seek(offset + size)
    return array
