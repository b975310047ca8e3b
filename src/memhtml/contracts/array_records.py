"""The array stream both local caches share (the head's snapshots and the markdown
index cache): after a JSON header of their own, a run of ``.npy`` records, each listed
in the header as ``[name, bytes, CRC-32]``.

Read with ``allow_pickle=False`` and checked record by record, so a file from a
clone, another user or a torn write is refused, never executed or believed; the
callers treat a refusal as a miss and rebuild.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import struct
import threading
import zlib
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt


class RecordsRefusedError(ValueError):
    """A file that loads but is not what this version wrote."""


def checksum(array: npt.NDArray[Any]) -> int:
    """The CRC-32 a header lists for ``array``."""
    return zlib.crc32(np.ascontiguousarray(array).data)


_MAGIC = b"\x93NUMPY"
_PLAIN_HEADER = re.compile(
    r"\{'descr': '([<>|=][biufSU]\d{1,4})', 'fortran_order': False, "
    r"'shape': \(((?:\d{1,18}, )*\d{1,18},?|)\), \} *\n")
"""The header ``np.save`` writes for an array of plain numbers or fixed-width strings in
C order: the only kind these caches write. Anything else is left to ``np.load``."""


def load_npy(stream: BinaryIO) -> Any:
    """The ``.npy`` record starting here, as ``np.load(stream, allow_pickle=False)``
    gives it (an array; for a zip archive, numpy's lazy ``NpzFile``: callers check),
    with the stream moved past it.

    ``np.load`` reads each header with ``ast.literal_eval``, and a snapshot holds about
    70 records: the demo store's snapshot took 10-12 ms to read that way, 2.6 ms this
    way (``bench.snapshot_read``; docs/benchmarks.md, "The suite's own time"), on every
    cold command's open. The plain header of a version 1.0 record is matched here
    instead; any other header, version or dtype goes to ``np.load`` as before, which
    still refuses an object array."""
    start = stream.tell()
    lead = stream.read(10)
    if len(lead) == 10 and lead[:8] == _MAGIC + b"\x01\x00":
        (length,) = struct.unpack("<H", lead[8:])
        found = _PLAIN_HEADER.fullmatch(stream.read(length).decode("latin1"))
        dtype = None
        if found is not None:
            with contextlib.suppress(TypeError):  # '<u3': np.load says why, as ValueError
                dtype = np.dtype(found.group(1))
        if found is not None and dtype is not None and dtype.itemsize:
            shape = tuple(int(n) for n in found.group(2).replace(",", " ").split())
            count = 1
            for n in shape:
                count *= n
            size = count * dtype.itemsize
            if not count:
                data = np.zeros(0, dtype=dtype)
            elif isinstance(stream, io.BufferedReader | io.FileIO):
                # A header claiming more than the file holds is refused before numpy
                # allocates for it.
                if os.fstat(stream.fileno()).st_size - stream.tell() < size:
                    raise ValueError("the record is truncated")
                data = np.fromfile(stream, dtype=dtype, count=count)
            else:  # a stream without a file under it, as np.load reads one
                raw = stream.read(size)
                if len(raw) != size:
                    raise ValueError("the record is truncated")
                data = np.frombuffer(bytearray(raw), dtype=dtype)
            if data.size != count:
                raise ValueError("the record is truncated")
            return data.reshape(shape)
    stream.seek(start)
    return np.load(stream, allow_pickle=False)


def read_arrays(stream: BinaryIO, listed: list[object],
                mapped: frozenset[str] = frozenset()) -> dict[str, npt.NDArray[Any]]:
    """The records the header ``listed``, read from ``stream`` in order, each checked
    for its size and checksum, and nothing after the last; ``RecordsRefusedError`` says
    what did not hold.

    A record named in ``mapped`` (a 1-d array of plain numbers) is memory-mapped from
    the file instead of read: its pages load only where a caller looks, and the
    mapping outlives the stream (and the file's removal). Its checksum is not checked
    here, since that would read every page: the caller checks what it reads from it,
    or the whole array beside its own work (``Checksums``).
    """
    arrays: dict[str, npt.NDArray[Any]] = {}
    for entry in listed:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)):
            raise RecordsRefusedError("the header lists an array badly")
        name, size, expected = entry
        if name in mapped:
            arrays[name] = _mapped(stream, name, size)
            continue
        array = load_npy(stream)
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


def _mapped(stream: BinaryIO, name: str, size: object) -> npt.NDArray[Any]:
    """The 1-d array of plain numbers whose ``.npy`` record starts here, mapped
    read-only, with the stream moved past it. Refused unless the file holds all of it:
    touching a mapped page past the end of a file kills the process (SIGBUS) instead
    of raising."""
    if type(size) is not int or size < 0:
        raise RecordsRefusedError(f"array {name} has no size")
    header = npy_header(stream)
    if header is None:
        raise RecordsRefusedError(f"array {name} is in an unknown .npy version")
    shape, fortran, dtype = header
    if (dtype.kind not in "biuf" or fortran or len(shape) != 1
            or shape[0] * dtype.itemsize != size):
        raise RecordsRefusedError(f"array {name} is not {size} bytes of plain numbers")
    offset = stream.tell()
    if os.fstat(stream.fileno()).st_size < offset + size:
        raise RecordsRefusedError(f"array {name} is truncated")
    if not size:
        return np.zeros(0, dtype=dtype)
    array: npt.NDArray[Any] = np.memmap(stream, dtype=dtype, mode="r", offset=offset,
                                        shape=shape)
    stream.seek(offset + size)
    return array


class Checksums:
    """The CRC-32 of some mapped arrays, computed on a thread of its own while the
    caller goes on: ``zlib`` lets go of the interpreter while it sums, so reading the
    pages in and summing them runs beside the caller's decoding, on another core.
    ``failed`` waits for the sums and names the first array that does not match."""

    def __init__(self, arrays: dict[str, npt.NDArray[Any]], expected: dict[str, int]) -> None:
        self._work = [(name, arrays[name], expected[name]) for name in sorted(expected)]
        self._failed: str | None = None
        self._thread = threading.Thread(target=self._run, name="memhtml-checksums",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for name, array, crc in self._work:
            try:
                matches = checksum(array) == crc
            except (OSError, ValueError, BufferError) as exc:
                self._failed = f"array {name} cannot be read: {type(exc).__name__}"
                return
            if not matches:
                self._failed = f"array {name} fails its checksum"
                return

    def failed(self) -> str | None:
        """Why the arrays are not what was written, or None once every sum matched."""
        self._thread.join()
        return self._failed
