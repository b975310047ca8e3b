"""Session transcripts in one directory of this machine: ``<session>.jsonl`` files.

The directory is the user's (the local ``transcripts_dir`` setting), but what is in it
was written by agents and tools, so it is read with care:

- **Only regular files directly in the directory.** No recursion, and no symbolic
  link is followed, to a file or to a directory: a link could point a night at any
  file the user can read, which would then be sent to a model. A symlink is skipped
  at listing, and the read opens with ``O_NOFOLLOW`` as well, so a file swapped for a
  link between the listing and the read is refused, not followed. A FIFO or a device
  is not a regular file and is never opened for reading (it could block forever).
  The directory itself may be a link: the user named it.
- **A session id is a safe stem**: 1 to 128 of ``[A-Za-z0-9._-]``, not starting with
  a dot. The id names the transcript in the ledger, in commit subjects and in each
  distilled memory's ``memhtml-session``, so a name carrying spaces, slashes or
  control characters is skipped rather than escaped in five places.
- **Only what was listed is read.** ``read`` refuses an id the last ``sessions`` call
  did not list, so a caller cannot reach any other name through it.
- **Bounded reads.** At most ``limit + 1`` bytes are read; a longer file is refused
  (never cut: a cut line is not JSON, and a cut session is not the session).
- **Any modification time.** Some file systems (tmpfs, btrfs, xfs) store times far
  outside the years a ``datetime`` can hold, and anything that can write the directory
  can set one. Such a time is clamped to the nearest instant a ``datetime`` holds, so
  the listing still succeeds and the file keeps the side of "now" its time put it on:
  a time in the far future never looks settled by age, one in the far past always does.
"""

from __future__ import annotations

import os
import re
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import TranscriptFailure
from memhtml.contracts.transcripts import TranscriptEntry

SUFFIX: Final = ".jsonl"
SESSION_ID: Final = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")
"""A session id: 1..128 safe characters, not starting with a dot (no hidden files, no
``..``)."""
_CHUNK: Final = 1 << 16
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)


def is_session_id(value: str) -> bool:
    """Whether ``value`` is a safe session id (see the module docstring)."""
    return SESSION_ID.fullmatch(value) is not None


class DirectoryTranscripts:
    """A ``TranscriptSource`` over the ``*.jsonl`` files directly in ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._listed: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        return f"DirectoryTranscripts({str(self.root)!r})"

    def sessions(self) -> IOResult[tuple[TranscriptEntry, ...], TranscriptFailure]:
        """Every transcript directly in the directory, by session id; a missing or
        unreadable directory is a failure naming it."""
        where = str(self.root)
        try:
            if not self.root.is_dir():
                reason = ("no such directory" if not self.root.exists()
                          else "not a directory")
                return IOFailure(TranscriptFailure(where, reason))
            with os.scandir(self.root) as scan:
                found = [entry for entry in (_entry(item) for item in scan) if entry]
        except OSError as exc:
            return IOFailure(TranscriptFailure(where, f"cannot list it: {_why(exc)}"))
        listed = tuple(sorted(found))
        self._listed = frozenset(entry.session for entry in listed)
        return IOSuccess(listed)

    def read(self, session: str, limit: int) -> IOResult[bytes, TranscriptFailure]:
        """The transcript's bytes, or a refusal: an id not listed, a file that is now
        a link or not a regular file, or one longer than ``limit`` bytes."""
        path = self.root / f"{session}{SUFFIX}"
        where = str(path)
        if session not in self._listed:
            return IOFailure(TranscriptFailure(where, "not a session this source listed"))
        if limit < 0:
            return IOFailure(TranscriptFailure(where, f"a negative read limit: {limit}"))
        try:
            fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
        except OSError as exc:
            return IOFailure(TranscriptFailure(where, f"cannot open it: {_why(exc)}"))
        return _read_open(fd, where, limit, "")


def read_source(path: Path, limit: int) -> IOResult[bytes, TranscriptFailure]:
    """The transcript a capture names (an agent's own file; a link to one is
    followed): a regular file of at most ``limit`` bytes, opened without blocking, so
    a FIFO or a device is refused rather than waited on."""
    where = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
    except (OSError, ValueError) as exc:
        reason = _why(exc) if isinstance(exc, OSError) else str(exc)
        return IOFailure(TranscriptFailure(where, f"cannot open it: {reason}"))
    return _read_open(fd, where, limit, "; not captured")


def _read_open(fd: int, where: str, limit: int, past: str) -> IOResult[bytes, TranscriptFailure]:
    """The bytes of the open ``fd`` (closed here): a regular file of at most ``limit``
    bytes, else a refusal (``past`` ends the one for a file too long)."""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return IOFailure(TranscriptFailure(where, "not a regular file"))
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(_CHUNK * 16, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        return IOFailure(TranscriptFailure(where, f"cannot read it: {_why(exc)}"))
    finally:
        os.close(fd)
    if total > limit:
        return IOFailure(TranscriptFailure(where, f"larger than {limit} bytes{past}"))
    return IOSuccess(b"".join(chunks))


def keep_session(root: Path, session: str, data: bytes
                 ) -> IOResult[bool, TranscriptFailure]:
    """Write ``data`` as ``<root>/<session>.jsonl`` (``memhtml capture``): True when it
    was written, False when the file already held exactly these bytes (a session
    captured twice is one session). The directory is created if missing; the file
    lands whole (a temporary file beside it, flushed, then renamed over it), and a
    name that is a link or not a regular file is refused, never followed or replaced.
    """
    where = str(root / f"{session}{SUFFIX}")
    if not is_session_id(session):
        return IOFailure(TranscriptFailure(where, f"{session!r} is not a session id "
                                                  "(1 to 128 of A-Z a-z 0-9 . _ -)"))
    path = root / f"{session}{SUFFIX}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            info = None
        if info is not None:
            if not stat.S_ISREG(info.st_mode):
                return IOFailure(TranscriptFailure(where, "not a regular file; left as it is"))
            if info.st_size == len(data) and path.read_bytes() == data:
                return IOSuccess(False)
        scratch = root / f".{session}.{os.getpid()}.capture"
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW | _CLOEXEC,
                     0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(scratch, path)
    except OSError as exc:
        return IOFailure(TranscriptFailure(where, f"cannot write it: {_why(exc)}"))
    return IOSuccess(True)


def _entry(item: os.DirEntry[str]) -> TranscriptEntry | None:
    """The listing of one directory entry, or None when it is not a transcript this
    source reads (a link, not a regular file, a bad stem, gone since the scan)."""
    name = item.name
    if not name.endswith(SUFFIX) or not is_session_id(name[:-len(SUFFIX)]):
        return None
    try:
        if item.is_symlink() or not item.is_file(follow_symlinks=False):
            return None
        info = item.stat(follow_symlinks=False)
    except OSError:
        return None
    return TranscriptEntry(name[:-len(SUFFIX)], modified_at(info.st_mtime), info.st_size)


_LATEST: Final = datetime.max.replace(tzinfo=UTC)
_EARLIEST: Final = datetime.min.replace(tzinfo=UTC)


def modified_at(seconds: float) -> datetime:
    """A file's modification time as a UTC instant, clamped to what a ``datetime`` can
    hold (see the module docstring)."""
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return _LATEST if seconds > 0 else _EARLIEST


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
