"""Which files of a directory tree may be read: regular files inside the root, once each.

This is the one walk of a markdown folder on disk, shared by the indexer (``md``)
and the import, so both read the same files by the same rules. A folder is
outside input, and reading it naively goes wrong in three ways: a named pipe
called ``x.md`` blocks a reader forever, a symbolic link can lead out of the
folder (``notes.md -> /etc/passwd``), and a linked directory can loop back on
itself. So:

- only regular files are listed; a pipe, socket or device is judged by its
  ``lstat`` mode, never opened, and reported as skipped;
- a symbolic link is followed only when its resolved target lies inside the
  root (and not inside a directory the caller pruned); one pointing out is
  skipped and reported;
- every directory is walked once, recognised by ``(st_dev, st_ino)``: a link
  to a directory already walked (a cycle, or a second name for a directory of
  the tree) is reported, and a file reached again through a link is listed
  under its own path only.

Real directories are walked before any link is followed, so a file that has
both a real path and a linked one is always listed by its real path, whatever
the names sort like.

The walk is pure: the disk is reached through a ``FileSystem`` handed in, as
the rest of the package reaches it through a ``CorpusReader``.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, Protocol, runtime_checkable

from returns.io import IOResult, impure_safe

from memhtml.mdindex.errors import ReadFailure
from memhtml.mdindex.reader import CorpusReader, Exclude


class FileSystem(Protocol):
    """The four calls the walk makes, on absolute paths; each raises ``OSError``."""

    def lstat(self, path: str) -> os.stat_result:
        """The entry itself, a link not followed."""
        ...

    def stat(self, path: str) -> os.stat_result:
        """What the entry leads to, links followed."""
        ...

    def listdir(self, path: str) -> Sequence[str]:
        """The names in a directory."""
        ...

    def realpath(self, path: str) -> str:
        """The path with every link resolved."""
        ...


SkipKind = Literal[
    "unlistable",
    "unexaminable",
    "special",
    "seen_directory",
    "seen_file",
    "unresolvable_link",
    "broken_link",
    "outside_root",
    "excluded_target",
]
"""Why the walk passed an entry over, as a closed set a caller can branch on:

- ``unlistable``: a directory whose names cannot be read;
- ``unexaminable``: an entry ``lstat`` fails on;
- ``special``: a pipe, socket or device, or a link to one (never opened);
- ``seen_directory``: a directory reached again, through a cycle or a second name;
- ``seen_file``: a file reached again through a link, listed under its first path;
- ``unresolvable_link``: a symbolic link whose target cannot be resolved;
- ``broken_link``: a symbolic link that resolves to nothing that exists;
- ``outside_root``: a symbolic link that leads out of the root;
- ``excluded_target``: a symbolic link into a directory the caller pruned.
"""

SECOND_NAMES: Final[frozenset[SkipKind]] = frozenset({"seen_directory", "seen_file"})
"""The kinds whose entry leads to something the walk reads under another name:
passing one over loses nothing."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """An entry the walk did not list: what kind of skip, and why in words.

    ``kind`` is for a caller that decides something by the skip; ``reason`` is
    for a person and may be reworded at will.
    """

    path: str
    kind: SkipKind
    reason: str


@dataclass(frozen=True, slots=True)
class Walk:
    """The files a reader may open, sorted, and what was passed over."""

    files: tuple[str, ...]
    skipped: tuple[Skipped, ...]


_KINDS = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def special_kind(mode: int) -> str:
    """What a non-regular, non-directory entry is, in words."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def inside(path: str, root: str) -> bool:
    """Whether an absolute, resolved path is the root or below it."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def _pruned(relative: str, prune: Exclude) -> bool:
    """Whether the directory or any of its ancestors is pruned; the root never is."""
    if not relative:
        return False
    parts = relative.split("/")
    return any(prune("/".join(parts[:end])) for end in range(1, len(parts) + 1))


class _Walker:
    """The state of one walk: what has been seen, listed and skipped."""

    def __init__(self, fs: FileSystem, root: str, prune: Exclude) -> None:
        self.fs = fs
        self.root = root
        self.prune = prune
        self.files: list[str] = []
        self.skipped: list[Skipped] = []
        self.directories: set[tuple[int, int]] = set()
        self.by_inode: dict[tuple[int, int], str] = {}
        self.links: list[tuple[str, str]] = []

    def run(self) -> Walk:
        info = self.fs.stat(self.root)
        self.directories.add((info.st_dev, info.st_ino))
        self._walk("", self.root)
        # Links wait until every real directory is walked; a followed link can
        # reveal further links, which join the end of the queue.
        position = 0
        while position < len(self.links):
            self._follow(*self.links[position])
            position += 1
        return Walk(tuple(sorted(self.files)), tuple(sorted(self.skipped, key=_by_path)))

    def _walk(self, relative: str, absolute: str) -> None:
        pending = [(relative, absolute)]
        while pending:
            rel_dir, abs_dir = pending.pop()
            try:
                names = sorted(self.fs.listdir(abs_dir))
            except OSError as error:
                self._skip(rel_dir or ".", "unlistable",
                           f"the directory cannot be listed: {_why(error)}")
                continue
            for name in names:
                rel = f"{rel_dir}/{name}" if rel_dir else name
                entry = f"{abs_dir}/{name}"
                try:
                    info = self.fs.lstat(entry)
                except OSError as error:
                    self._skip(rel, "unexaminable", f"cannot be examined: {_why(error)}")
                    continue
                mode = info.st_mode
                if stat.S_ISLNK(mode):
                    self.links.append((rel, entry))
                elif stat.S_ISDIR(mode):
                    if not self.prune(rel) and self._first_visit(rel, info, rel):
                        pending.append((rel, entry))
                elif stat.S_ISREG(mode):
                    self._list(rel, info)
                else:
                    self._skip(rel, "special",
                               f"{special_kind(mode)}, not a regular file: never opened")

    def _first_visit(self, rel: str, info: os.stat_result, target: str) -> bool:
        key = (info.st_dev, info.st_ino)
        if key in self.directories:
            self._skip(rel, "seen_directory", f"leads to the directory {target or '.'}, "
                                              "already walked (a cycle or a second name)")
            return False
        self.directories.add(key)
        return True

    def _list(self, rel: str, info: os.stat_result) -> None:
        key = (info.st_dev, info.st_ino)
        first = self.by_inode.get(key)
        if first is not None and first != rel:
            self._skip(rel, "seen_file", f"the same file as {first}, listed once")
            return
        self.by_inode[key] = rel
        self.files.append(rel)

    def _follow(self, rel: str, entry: str) -> None:
        try:
            target = self.fs.realpath(entry)
        except OSError as error:
            self._skip(rel, "unresolvable_link",
                       f"symbolic link that cannot be resolved: {_why(error)}")
            return
        if not inside(target, self.root):
            self._skip(rel, "outside_root",
                       f"symbolic link to {target}, outside the root: not followed")
            return
        target_rel = posixpath.relpath(target, self.root) if target != self.root else ""
        try:
            info = self.fs.stat(target)
        except OSError as error:
            self._skip(rel, "broken_link", f"broken symbolic link: {_why(error)}")
            return
        directory = target_rel if stat.S_ISDIR(info.st_mode) else posixpath.dirname(target_rel)
        if directory and _pruned(directory, self.prune):
            self._skip(rel, "excluded_target",
                       f"symbolic link into {directory}, which is excluded")
            return
        if stat.S_ISDIR(info.st_mode):
            if not self.prune(rel) and self._first_visit(rel, info, target_rel):
                self._walk(rel, target)
        elif stat.S_ISREG(info.st_mode):
            self._list(rel, info)
        else:
            self._skip(rel, "special",
                       f"symbolic link to {special_kind(info.st_mode)}: never opened")

    def _skip(self, rel: str, kind: SkipKind, reason: str) -> None:
        self.skipped.append(Skipped(rel, kind, reason))


def _by_path(skipped: Skipped) -> str:
    return skipped.path


def _why(error: OSError) -> str:
    return error.strerror or str(error)


def walk_tree(fs: FileSystem, root: str, prune: Exclude) -> IOResult[Walk, ReadFailure]:
    """The regular files under ``root`` by the rules above, and what was skipped.

    ``prune`` is asked about directories by slash path relative to the root; a
    pruned directory is neither walked nor reached through a link. Failing to
    read the root itself is a ``ReadFailure``; anything below it that cannot be
    read is reported among the skipped and the walk goes on.
    """

    @impure_safe(exceptions=(OSError,))
    def run() -> Walk:
        return _Walker(fs, fs.realpath(root), prune).run()

    return run().alt(lambda error: ReadFailure(root, _why(error)))


@dataclass(frozen=True, slots=True)
class ListedReader:
    """A reader whose listing was already taken by ``walk_tree``: one walk per run.

    The caller that reports what a walk skipped walks once, then hands the
    listing on here, so the build does not walk the tree a second time.
    """

    inner: CorpusReader
    listing: tuple[str, ...]

    def list_files(self, prune: Exclude) -> IOResult[tuple[str, ...], ReadFailure]:
        return IOResult.from_value(
            tuple(p for p in self.listing if not _pruned(posixpath.dirname(p), prune))
        )

    def read_files(self, paths: Sequence[str]) -> IOResult[tuple[bytes, ...], ReadFailure]:
        return self.inner.read_files(paths)


@runtime_checkable
class WalkingReader(CorpusReader, Protocol):
    """A reader over a real tree that can say what its listing passed over."""

    def walk(self, prune: Exclude) -> IOResult[Walk, ReadFailure]:
        """The listing and the skipped entries, from one walk."""
        ...
