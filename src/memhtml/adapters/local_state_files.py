"""The local-state port on disk (``contracts.local_state.LocalState``): the directory
``<git-dir>/memhtml``, made with ``mkdir`` and looked over with ``lstat`` only."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.local_files import kind_of
from memhtml.contracts.local_state import STATE_DIRECTORIES, STATE_FILE_NAMES, OddEntry

_DEPTH = 4
"""How deep the look goes: local state nests ``vectors/<space>/`` and no deeper."""


class LocalStateFiles:
    """``LocalState`` over a directory on disk."""

    def __init__(self, root: Path) -> None:
        self._root = root

    @property
    def root(self) -> Path:
        return self._root

    def prepare(self) -> IOResult[None, str]:
        try:
            self._root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return IOFailure(f"cannot create {self._root}: {exc}")
        return IOSuccess(None)

    def odd_entries(self) -> tuple[OddEntry, ...]:
        out: list[OddEntry] = []
        try:
            mode = os.lstat(self._root).st_mode
        except OSError:
            return ()
        if not (stat.S_ISDIR(mode) or (stat.S_ISLNK(mode) and self._root.is_dir())):
            what = "a file where a directory belongs" if stat.S_ISREG(mode) else kind_of(mode)
            return (OddEntry(self._root, what),)
        _walk(self._root, 0, out)
        return tuple(out)


def _walk(folder: Path, depth: int, out: list[OddEntry]) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        path = Path(entry.path)
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        directory_here = (depth == 0 and entry.name in STATE_DIRECTORIES) or (
            depth == 1 and folder.name == "vectors")
        if stat.S_ISDIR(mode):
            if entry.name.endswith(STATE_FILE_NAMES) and not directory_here:
                out.append(OddEntry(path, "a directory named as a file"))
            elif depth < _DEPTH:
                _walk(path, depth + 1, out)
        elif not stat.S_ISREG(mode):
            out.append(OddEntry(path, kind_of(mode)))
        elif directory_here:
            out.append(OddEntry(path, "a file where a directory belongs"))
