"""The markdown index cache on disk: file stamps, and one file of plain arrays per tree.

The file is a run of ``.npy`` records, each read with ``np.load(allow_pickle=False)``,
which refuses object arrays, so whatever the file holds can be wrong data at
worst, never code. The first record is a JSON header naming the format, the
indexer's code digest and each array's name, size and CRC-32; the indexer
(``memhtml.mdindex.cache.decode``) then checks the contents themselves. A file
that fails anything is ignored and replaced by the next save. Writes go to a
temporary file renamed into place, so a reader sees a whole file or none.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from returns.io import IOResult
from returns.result import Failure, Result, Success

from memhtml.contracts.array_records import RecordsRefusedError, checksum, read_arrays
from memhtml.mdindex import ReadFailure
from memhtml.mdindex.cache import CACHE_FORMAT, Arrays, Stamp

MAGIC = "memhtml-mdindex-cache"
CACHE_FILE = "index.npys"
_HEADER_LIMIT = 64 << 20
_UNREADABLE = (OSError, EOFError, ValueError, TypeError, KeyError, IndexError,
               AttributeError, OverflowError, MemoryError, BufferError, UnicodeDecodeError)


@dataclass(frozen=True, slots=True)
class FileStamps:
    """Stamps of files under a root, as the cache keys them.

    A path is stat'ed through any link the walk chose to follow, so an edit to
    the link's target moves the stamp of the path that reached it.
    """

    root: Path

    def stamps(self, paths: Sequence[str]) -> IOResult[tuple[Stamp, ...], ReadFailure]:
        found: list[Stamp] = []
        for path in paths:
            try:
                info = os.stat(self.root / path)
            except OSError as exc:
                return IOResult.from_failure(ReadFailure(path, str(exc)))
            found.append(Stamp(info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino,
                               info.st_dev))
        return IOResult.from_value(tuple(found))

    def now_ns(self) -> int:
        return time.time_ns()


_RefusedError = RecordsRefusedError


def _read(stream: BinaryIO) -> tuple[dict[str, Any], Arrays]:
    raw = np.load(stream, allow_pickle=False)
    if not isinstance(raw, np.ndarray) or raw.dtype != np.uint8 or raw.ndim != 1 \
            or raw.nbytes > _HEADER_LIMIT:
        raise _RefusedError("not a memhtml index cache")
    header = json.loads(raw.tobytes())
    if not isinstance(header, dict) or header.get("magic") != MAGIC:
        raise _RefusedError("not a memhtml index cache")
    if header.get("format") != CACHE_FORMAT:
        raise _RefusedError(f"written in another format ({header.get('format')!r})")
    listed = header.get("arrays")
    if not isinstance(listed, list):
        raise _RefusedError("the header lists no arrays")
    arrays: Arrays = read_arrays(stream, listed)
    meta = header.get("meta")
    if not isinstance(meta, dict):
        raise _RefusedError("the header has no index description")
    return meta, arrays


@dataclass(frozen=True, slots=True)
class IndexCacheFile:
    """One tree's cached index: a single file in a directory only this user writes."""

    directory: Path

    @property
    def path(self) -> Path:
        return self.directory / CACHE_FILE

    def stamp(self) -> tuple[int, ...] | None:
        """The cache file's size, times and inode: moves whenever anyone rewrites it."""
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)

    def load(self) -> Result[tuple[dict[str, Any], Arrays], str]:
        """The header's index description and the arrays; a failure says why not.

        A file someone else owns is refused unread: a cache directory shared
        with another user would let them choose what this index says.
        """
        try:
            with self.path.open("rb") as stream:
                info = os.fstat(stream.fileno())
                if hasattr(os, "getuid") and info.st_uid != os.getuid():
                    return Failure("owned by another user")
                return Success(_read(stream))
        except FileNotFoundError:
            return Failure("miss")
        except _RefusedError as refused:
            return Failure(str(refused))
        except _UNREADABLE as exc:
            return Failure(f"unreadable: {type(exc).__name__}")

    def save(self, meta: dict[str, Any], arrays: Arrays) -> Result[Path, str]:
        """Write atomically: a uniquely named temporary file renamed over the old one."""
        listed = [[name, int(a.nbytes), checksum(a)] for name, a in arrays.items()]
        header = {"magic": MAGIC, "format": CACHE_FORMAT, "arrays": listed, "meta": meta}
        text = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode("ascii")
        temporary = self.directory / f".{CACHE_FILE}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as stream:
                np.save(stream, np.frombuffer(text, dtype=np.uint8), allow_pickle=False)
                for array in arrays.values():
                    np.save(stream, array, allow_pickle=False)
            os.replace(temporary, self.path)
        except (OSError, ValueError) as exc:
            with contextlib.suppress(OSError):
                temporary.unlink()
            return Failure(f"not written: {type(exc).__name__}: {exc}")
        return Success(self.path)
