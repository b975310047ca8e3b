"""The markdown files of a folder the import may read: regular files inside the root.

A folder handed to the import is outside input. A named pipe called ``x.md`` would
block a reader forever, a symlink can point at ``/etc/passwd``, a symlinked
directory can loop back on itself, and one huge file should not be read whole. So:
only regular files are read (pipes, sockets and devices are reported and skipped,
judged by ``stat`` before any open); a symlink is followed only when its target
resolves inside the root; a directory reached twice (through a symlink or a cycle)
is walked once; hidden directories and ``.trash`` hold tooling and deleted notes,
not memories; a file over the size cap is refused without being read past it.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

MAX_SOURCE_BYTES = 1 << 20
"""A source file larger than a memory file may be cannot become one."""
MARKDOWN_SUFFIX = ".md"


@dataclass(frozen=True, slots=True)
class Walked:
    files: tuple[tuple[str, bytes], ...]
    """Each readable markdown file: its path relative to the root, its bytes."""
    refused: tuple[tuple[str, str], ...]
    """Each markdown-named entry not read, with why."""


def _hidden(name: str) -> bool:
    return name.startswith(".")


def _inside(resolved: Path, root: Path) -> bool:
    return resolved == root or root in resolved.parents


def _read_capped(path: Path, cap: int) -> bytes | None:
    """At most ``cap`` bytes; None when the file holds more (never read whole)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path.resolve(), flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= cap:
            chunk = os.read(fd, min(1 << 16, cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return None if size > cap else b"".join(chunks)
    finally:
        os.close(fd)


def walk_markdown(root: Path, cap: int = MAX_SOURCE_BYTES) -> Walked:
    """Every ``.md`` file under ``root`` by the rules above, in path order."""
    base = root.resolve()
    files: list[tuple[str, bytes]] = []
    refused: list[tuple[str, str]] = []
    seen: set[Path] = set()
    pending: list[tuple[Path, str]] = [(base, "")]
    while pending:
        directory, prefix = pending.pop()
        real = directory.resolve()
        if real in seen:
            continue
        seen.add(real)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as error:
            refused.append((prefix or ".", f"the directory cannot be listed: {error.strerror}"))
            continue
        for entry in entries:
            rel = f"{prefix}{entry.name}"
            if _hidden(entry.name):
                continue
            path = Path(entry.path)
            if entry.is_symlink():
                target = path.resolve()
                if not _inside(target, base):
                    if entry.name.endswith(MARKDOWN_SUFFIX) or target.is_dir():
                        refused.append((rel, "a symbolic link to outside the folder "
                                             f"({target}); only links inside it are followed"))
                    continue
                if target.is_dir():
                    pending.append((path, f"{rel}/"))
                    continue
            try:
                mode = path.stat().st_mode
            except OSError as error:
                refused.append((rel, f"cannot be read: {error.strerror}"))
                continue
            if stat.S_ISDIR(mode):
                pending.append((path, f"{rel}/"))
                continue
            if not entry.name.endswith(MARKDOWN_SUFFIX):
                continue
            if not stat.S_ISREG(mode):
                kind = ("a named pipe" if stat.S_ISFIFO(mode) else "a socket"
                        if stat.S_ISSOCK(mode) else "a device" if stat.S_ISBLK(mode)
                        or stat.S_ISCHR(mode) else "not a regular file")
                refused.append((rel, f"{kind}, not a regular file; skipped unread"))
                continue
            try:
                raw = _read_capped(path, cap)
            except OSError as error:
                refused.append((rel, f"cannot be read: {error.strerror or error}"))
                continue
            if raw is None:
                refused.append((rel, f"over the {cap}-byte cap on one file "
                                     f"({cap >> 20} MiB, a memory file's limit)"))
                continue
            files.append((rel, raw))
    return Walked(tuple(sorted(files)), tuple(sorted(refused)))
