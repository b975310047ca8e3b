"""Corpus readers for the markdown indexer: a real directory, and an in-memory tree.

Both implement ``memhtml.mdindex.CorpusReader``. Paths are slash paths relative
to the root; a path that would leave the root is refused rather than resolved.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from returns.io import IOFailure, IOResult, IOSuccess, impure_safe

from memhtml.mdindex import Exclude, ReadFailure
from memhtml.mdindex.walk import Walk, inside, walk_tree


class OsFileSystem:
    """The walk's ``FileSystem`` on the real disk."""

    def lstat(self, path: str) -> os.stat_result:
        return os.lstat(path)

    def stat(self, path: str) -> os.stat_result:
        return os.stat(path)

    def listdir(self, path: str) -> list[str]:
        return os.listdir(path)

    def realpath(self, path: str) -> str:
        return os.path.realpath(path, strict=True)


def _refusal(path: str) -> str | None:
    if not path:
        return "empty path"
    if path.startswith("/") or "\\" in path:
        return "not a relative slash path"
    if any(part in {"", ".", ".."} for part in path.split("/")):
        return "path segment would leave or re-enter the root"
    return None


@dataclass(frozen=True, slots=True)
class DirectoryReader:
    """Reads a directory on disk: regular files inside the root only.

    The listing is ``memhtml.mdindex.walk.walk_tree``'s: a link is followed only
    when it resolves inside the root (a cloned folder can commit ``notes.md ->
    /etc/passwd``), a FIFO or a device (which would hang or never end a read) is
    never opened, and a directory reached twice is walked once.
    """

    root: Path
    _memo: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    """The root's resolved path, once a read has resolved it (``_real_root``)."""

    def walk(self, prune: Exclude) -> IOResult[Walk, ReadFailure]:
        """The listing with what it passed over, for a caller that reports both."""
        return walk_tree(OsFileSystem(), str(self.root), prune)

    def list_files(self, prune: Exclude) -> IOResult[tuple[str, ...], ReadFailure]:
        return self.walk(prune).map(lambda walked: walked.files)

    def read_files(self, paths: Sequence[str]) -> IOResult[tuple[bytes, ...], ReadFailure]:
        for path in paths:
            reason = _refusal(path)
            if reason is not None:
                return IOFailure(ReadFailure(path, reason))
        return self._read(paths).alt(
            lambda error: ReadFailure(
                str(getattr(error, "filename", None) or self.root), str(error)
            )
        )

    def read_capped(self, path: str, cap: int) -> IOResult[bytes | None, ReadFailure]:
        """One file's bytes, or None when it holds more than ``cap``: at most ``cap + 1``
        bytes are read, so a huge file costs no more memory than the cap."""
        reason = _refusal(path)
        if reason is not None:
            return IOFailure(ReadFailure(path, reason))
        return self._capped(path, cap).map(
            lambda raw: None if len(raw) > cap else raw
        ).alt(lambda error: ReadFailure(path, getattr(error, "strerror", None) or str(error)))

    @impure_safe(exceptions=(OSError,))
    def _capped(self, path: str, cap: int) -> bytes:
        return self._regular(path, cap + 1)

    @impure_safe(exceptions=(OSError,))
    def _read(self, paths: Sequence[str]) -> tuple[bytes, ...]:
        return tuple(self._regular(path) for path in paths)

    def _regular(self, path: str, limit: int = -1) -> bytes:
        """The bytes of a regular file that resolves inside the root.

        Judged by ``stat`` before it is opened, and opened without blocking, so a
        FIFO put in place of a listed file can neither be read nor hang the read.
        """
        resolved = os.path.realpath(self.root / path, strict=True)
        if not inside(resolved, self._real_root()):
            raise OSError(f"{path}: resolves outside the root, not read")
        if not stat.S_ISREG(os.stat(resolved).st_mode):
            raise OSError(f"{path}: not a regular file")
        handle = os.open(resolved, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(handle).st_mode):
                raise OSError(f"{path}: not a regular file")
            with os.fdopen(handle, "rb") as stream:
                handle = -1
                return stream.read(limit)
        finally:
            if handle >= 0:
                os.close(handle)

    def _real_root(self) -> str:
        """The root with every link resolved, once a read (not once a file: an import
        reads thousands). Each file is still resolved when it is read, so a folder
        swapped for a link meanwhile resolves outside the root and is refused."""
        found = self._memo.get("")
        if found is None:
            found = self._memo[""] = os.path.realpath(self.root, strict=True)
        return found


@dataclass(frozen=True, slots=True)
class MappingReader:
    """A tree held in memory as path -> bytes: for tests, and for blobs read from git."""

    files: Mapping[str, bytes] = field(default_factory=dict)

    def list_files(self, prune: Exclude) -> IOResult[tuple[str, ...], ReadFailure]:
        def pruned(path: str) -> bool:
            parts = path.split("/")[:-1]
            return any(prune("/".join(parts[: end + 1])) for end in range(len(parts)))

        return IOSuccess(tuple(sorted(p for p in self.files if not pruned(p))))

    def read_files(self, paths: Sequence[str]) -> IOResult[tuple[bytes, ...], ReadFailure]:
        missing = next((p for p in paths if p not in self.files), None)
        if missing is not None:
            return IOFailure(ReadFailure(missing, "no such file"))
        return IOSuccess(tuple(self.files[p] for p in paths))
