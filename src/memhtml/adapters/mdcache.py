"""The markdown index cache on disk: file stamps, and one file of plain arrays per tree.

The file is a run of ``.npy`` records, each read with ``np.load(allow_pickle=False)``,
which refuses object arrays, so whatever the file holds can be wrong data at
worst, never code. The first record is a JSON header naming the format, the
indexer's code digest and each array's name, size and CRC-32; the indexer
(``memhtml.mdindex.cache.decode``) then checks the contents themselves. A file
that fails anything is ignored and replaced by the next save. Writes go to a
temporary file renamed into place, so a reader sees a whole file or none.

The header opens with a fixed label, ``{"magic":...,"format":...,"root":...``, so
that pruning (``prune_index_caches``) can tell one of these files and the folder it
indexes from the first few kilobytes, without reading a header that lists every
file of a large tree.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import secrets
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from returns.io import IOResult
from returns.result import Failure, Result, Success

from memhtml.contracts.array_records import (
    RecordsRefusedError,
    checksum,
    load_npy,
    npy_header,
    read_arrays,
)
from memhtml.contracts.local_files import NotRegularFileError, open_regular
from memhtml.mdindex import ReadFailure
from memhtml.mdindex.cache import CACHE_FORMAT, Arrays, Stamp

MAGIC = "memhtml-mdindex-cache"
CACHE_FILE = "index.npys"
_HEADER_LIMIT = 64 << 20
_UNREADABLE = (OSError, EOFError, ValueError, TypeError, KeyError, IndexError,
               AttributeError, OverflowError, MemoryError, BufferError, UnicodeDecodeError)
_LABEL = '{"magic":' + json.dumps(MAGIC) + ',"format":'
"""How every header this module writes begins (``json.dumps`` keeps key order)."""
_ROOT_KEY = ',"root":'
_PEEK = 1 << 16
"""Bytes read from the front of a file to judge it: the ``.npy`` preamble and a
label holding a root path of any length the system allows, escaped."""
_ENTRY = re.compile(r"[0-9a-f]{32}")
"""A cache directory's name: a digest of the folder's path (``compose.mdcache``)."""
_TEMPORARY = re.compile(re.escape(f".{CACHE_FILE}.") + r"\d+\.[0-9a-f]{8}\.tmp")
"""A temporary left behind by a write that did not finish."""


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
    raw = load_npy(stream)
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
            # Never a FIFO or a link put at the cache's name: a miss, rebuilt.
            with open_regular(self.path) as stream:
                info = os.fstat(stream.fileno())
                if hasattr(os, "getuid") and info.st_uid != os.getuid():
                    return Failure("owned by another user")
                return Success(_read(stream))
        except FileNotFoundError:
            return Failure("miss")
        except NotRegularFileError as odd:
            return Failure(f"{odd.kind}, not a regular file")
        except _RefusedError as refused:
            return Failure(str(refused))
        except _UNREADABLE as exc:
            return Failure(f"unreadable: {type(exc).__name__}")

    def save(self, meta: dict[str, Any], arrays: Arrays) -> Result[Path, str]:
        """Write atomically: a uniquely named temporary file renamed over the old one."""
        listed = [[name, int(a.nbytes), checksum(a)] for name, a in arrays.items()]
        root = meta.get("root")
        header = {"magic": MAGIC, "format": CACHE_FORMAT,
                  "root": root if isinstance(root, str) else None,
                  "arrays": listed, "meta": meta}
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

    def mark_used(self, now_ns: int, resolution_ns: int) -> None:
        """Record a use in the file's modification time, which pruning reads as the last
        use; at most once per ``resolution_ns``, so a run that only reads the cache
        seldom writes to the disk."""
        with contextlib.suppress(OSError):
            info = os.stat(self.path, follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and now_ns - info.st_mtime_ns > resolution_ns:
                os.utime(self.path, ns=(info.st_atime_ns, now_ns), follow_symlinks=False)


@dataclass(frozen=True, slots=True)
class CacheLabel:
    """What the front of a cache file says about it."""

    format: int
    root: str | None
    """The folder it indexes; None when the label does not say (or says it badly)."""


def read_label(front: bytes) -> CacheLabel | None:
    """The label of a file whose first bytes are ``front``, or None when those bytes
    are not how this module starts a cache file: a ``.npy`` record of bytes holding
    a JSON header that begins with ``_LABEL``."""
    stream = io.BytesIO(front)
    try:
        header = npy_header(stream)
    except (ValueError, EOFError, SyntaxError, TypeError):
        return None
    if header is None:
        return None
    shape, fortran, dtype = header
    if dtype != np.uint8 or fortran or len(shape) != 1:
        return None
    start = stream.tell()
    try:
        text = front[start : start + int(shape[0])].decode("ascii")
    except UnicodeDecodeError:
        return None
    if not text.startswith(_LABEL):
        return None
    decoder = json.JSONDecoder()
    try:
        number, at = decoder.raw_decode(text, len(_LABEL))
    except json.JSONDecodeError:
        return None
    if type(number) is not int:
        return None
    root: object = None
    if text.startswith(_ROOT_KEY, at):
        with contextlib.suppress(json.JSONDecodeError):
            root, _ = decoder.raw_decode(text, at + len(_ROOT_KEY))
    return CacheLabel(number, root if isinstance(root, str) else None)


def _gone(root: str) -> bool:
    """Whether a folder certainly no longer exists; a folder that cannot be looked at
    (no permission, a stale mount) is given the benefit of the doubt."""
    if not os.path.isabs(root):
        return False
    try:
        info = os.stat(root)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except (OSError, ValueError):
        return False
    return not stat.S_ISDIR(info.st_mode)


def _prune_file(directory: int, name: str, now_ns: int, unused_ns: int,
                check_root: bool) -> bool:
    """Unlink one file of a cache directory when it is ours and stale; whether it was.

    The file is opened without following a link and without blocking (a FIFO put
    in its place cannot hang the run), judged by its owner, its type and its label,
    and unlinked only if the name still leads to the inode judged.
    """
    try:
        descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK,
                             dir_fd=directory)
    except OSError:
        return False
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or (
                hasattr(os, "getuid") and info.st_uid != os.getuid()):
            return False
        label = read_label(os.pread(descriptor, _PEEK, 0))
    except OSError:
        return False
    finally:
        os.close(descriptor)
    if label is None:
        return False
    idle = now_ns - info.st_mtime_ns > unused_ns
    orphan = check_root and label.root is not None and _gone(label.root)
    if not (idle or orphan):
        return False
    try:
        again = os.stat(name, dir_fd=directory, follow_symlinks=False)
        if (again.st_dev, again.st_ino) != (info.st_dev, info.st_ino):
            return False
        os.unlink(name, dir_fd=directory)
    except OSError:
        return False
    return True


def _prune_entry(top: int, name: str, now_ns: int, unused_ns: int,
                 temporary_ns: int) -> bool:
    try:
        directory = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
    except OSError:
        return False
    removed = False
    try:
        for child in sorted(os.listdir(directory)):
            if child == CACHE_FILE:
                removed |= _prune_file(directory, child, now_ns, unused_ns, True)
            elif _TEMPORARY.fullmatch(child):
                removed |= _prune_file(directory, child, now_ns, temporary_ns, False)
    except OSError:
        pass
    finally:
        os.close(directory)
    if removed:
        # Only an emptied directory goes; one a writer has just filled stays.
        with contextlib.suppress(OSError):
            os.rmdir(name, dir_fd=top)
    return removed


def prune_index_caches(parent: Path, keep: str, now_ns: int, unused_ns: int,
                       temporary_ns: int) -> tuple[str, ...]:
    """Remove the caches under ``parent`` that no run will use again; the names of the
    cache directories something was removed from.

    A cache goes when the folder its label names no longer exists, or when it was
    last used (its modification time, see ``IndexCacheFile.mark_used``) more than
    ``unused_ns`` ago; a temporary left by an unfinished write goes after
    ``temporary_ns``. ``keep`` (the directory just written) is not looked at.

    The work is bounded by the entries of ``parent``: one directory listing and
    the first bytes of one file each, never a walk of the folders they index.
    Nothing is followed out of ``parent``: it is opened without following a link,
    every entry below it by descriptor, likewise. Nothing is removed but a regular
    file this user owns, named as this module names its files, that starts with the
    label this module writes.
    """
    if not {os.open, os.stat, os.unlink, os.rmdir} <= os.supports_dir_fd:
        return ()
    try:
        top = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return ()
    try:
        names = sorted(os.listdir(top))
        return tuple(name for name in names if name != keep and _ENTRY.fullmatch(name)
                     and _prune_entry(top, name, now_ns, unused_ns, temporary_ns))
    except OSError:
        return ()
    finally:
        os.close(top)
