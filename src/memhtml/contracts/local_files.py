"""Opening this clone's local state: only a regular file is ever read, or written through.

Local state (everything under ``<git-dir>/memhtml/``: snapshots, write marks, vector
files, the state database; and the markdown index cache) is files this memhtml wrote.
Anything else found at one of its paths (a FIFO, a socket, a device, a directory, a
symbolic link to any of those or to a file elsewhere) was put there by something
else, and opening it is already a hazard: ``open()`` of a FIFO waits for a writer
that never comes, a read of ``/dev/zero`` never ends, and a write through a link
lands wherever the link points. So a reader opens a path with ``open_regular``,
which never follows a final symbolic link, never waits on the open, and hands back a
stream only when the descriptor it opened is a regular file; everything else raises
``NotRegularFileError`` (an ``OSError``), which each reader turns into what its file
means: a cache rebuilt, a mark skipped, a database refused by name.

Writers never open an existing name for writing: they create a new temporary name
exclusively (``create_exclusive``, which also refuses a link planted at that name)
and rename it over the target, which replaces whatever entry was there (the rename
never writes through it).

Here, in contracts, because every room that keeps local state imports it (the
store's snapshots and marks, the adapters' caches and database, compose's readers of
the vector manifests) and contracts is the one room all of them may import, as
``array_records`` is.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Final

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_NOCTTY: Final = getattr(os, "O_NOCTTY", 0)
_BINARY: Final = getattr(os, "O_BINARY", 0)


class NotRegularFileError(OSError):
    """A local-state path holds something other than a regular file: ``kind`` says
    what (``a FIFO``, ``a symbolic link``, ...)."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        super().__init__(errno.EINVAL, f"{kind}, not a regular file", os.fspath(path))
        self.kind = kind

    def __str__(self) -> str:
        return f"{os.fspath(self.filename)} is {self.kind}, not a regular file"


def kind_of(mode: int) -> str:
    """What a file mode is, in words, for a message."""
    for test, words in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
                        (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                        (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device")):
        if test(mode):
            return words
    return "not a file"


def not_regular(path: Path) -> str | None:
    """What stands at ``path`` when it is something other than a regular file (a
    symbolic link is named as one, never followed); None when it is a regular file
    or nothing is there. For a look that opens nothing (doctor, a database about to
    be opened by name)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    return None if stat.S_ISREG(mode) else kind_of(mode)


def blocking_entry(path: Path, top: Path) -> str | None:
    """Where a directory of local state should be, from ``top`` down to ``path``, the
    first entry that is not one (a FIFO, a file, a link, ...), in words with its path;
    None when each is a directory or absent. For the message of a write that could not
    make its directory."""
    try:
        parts = path.relative_to(top).parts
    except ValueError:
        return None
    current = top
    for part in ("", *parts):
        current = current / part if part else current
        try:
            mode = os.lstat(current).st_mode
        except OSError:
            return None
        if not stat.S_ISDIR(mode) and not (stat.S_ISLNK(mode) and current.is_dir()):
            return f"{current} is {kind_of(mode)}, where memhtml keeps a directory"
    return None


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading, when it is a regular file (``FileNotFoundError``
    when nothing is there, ``NotRegularFileError`` for anything else).

    The name is looked at first (``lstat``) so a device or a socket is never even
    opened; then it is opened without following a final link and without waiting
    (a FIFO swapped in meanwhile cannot block the open), and the descriptor itself
    decides (``fstat``): only a regular file is read, whatever the name held a moment
    before. The descriptor is switched back to blocking reads, which is what a file
    gives anyway.
    """
    before = os.lstat(path)
    if not stat.S_ISREG(before.st_mode):
        raise NotRegularFileError(path, kind_of(before.st_mode))
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC | _NOCTTY | _BINARY)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EMLINK):
            # A link or a socket took the regular file's place between the two looks.
            raise NotRegularFileError(path, "not a regular file any more") from exc
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, kind_of(mode))
        if _NONBLOCK:
            os.set_blocking(fd, True)
        stream = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return stream


def read_regular(path: Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (at most ``limit``); raises as
    ``open_regular`` does."""
    with open_regular(path) as stream:
        return stream.read() if limit is None else stream.read(limit)


def create_exclusive(path: Path, mode: int = 0o644) -> BinaryIO:
    """A new file at ``path``, opened for writing: never an existing name (so never a
    FIFO, a device or a link someone put there), which ``FileExistsError`` reports."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY,
                 mode)
    try:
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


def write_replacing(path: Path, data: bytes, temporary: Path, *, sync: bool = False,
                    mode: int = 0o644) -> None:
    """Write ``data`` to ``temporary`` (created exclusively) and rename it over
    ``path``: whatever entry stood at ``path`` is replaced, never written through. A
    temporary left by an earlier failure of the same name is removed first; on
    failure the temporary is removed and the error raised."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temporary)
    try:
        with create_exclusive(temporary, mode) as stream:
            stream.write(data)
            if sync:
                stream.flush()
                os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
