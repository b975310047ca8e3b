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
    """Reads a directory on disk: regular files only, no symbolic link followed.

    A link (to a directory or a file) could lead out of the root the caller named
    (a cloned folder can commit ``notes.md -> /etc/passwd``), and a FIFO or a device
    would hang or never end a read, so neither is listed or read.
    """

    root: Path

    def list_files(self, prune: Exclude) -> IOResult[tuple[str, ...], ReadFailure]:
        return self._walk(prune).alt(lambda error: ReadFailure(str(self.root), str(error)))

    @impure_safe(exceptions=(OSError,))
    def _walk(self, prune: Exclude) -> tuple[str, ...]:
        found: list[str] = []
        pending = [""]
        while pending:
            relative = pending.pop()
            with os.scandir(self.root / relative if relative else self.root) as entries:
                for entry in entries:
                    path = f"{relative}/{entry.name}" if relative else entry.name
                    if entry.is_dir(follow_symlinks=False):
                        if not prune(path):
                            pending.append(path)
                    elif entry.is_file(follow_symlinks=False):
                        found.append(path)
        return tuple(sorted(found))

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

    @impure_safe(exceptions=(OSError,))
    def _read(self, paths: Sequence[str]) -> tuple[bytes, ...]:
        return tuple(self._regular(path) for path in paths)

    def _regular(self, path: str) -> bytes:
        """The bytes of a regular file under the root, reached through no link."""
        current = self.root
        for part in path.split("/"):
            current = current / part
            if current.is_symlink():
                raise OSError(f"{path}: a symbolic link is not followed")
        handle = os.open(current, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(handle).st_mode):
                raise OSError(f"{path}: not a regular file")
            with os.fdopen(handle, "rb") as stream:
                handle = -1
                return stream.read()
        finally:
            if handle >= 0:
                os.close(handle)


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
