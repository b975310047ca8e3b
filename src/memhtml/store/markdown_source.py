"""The markdown files of a folder the import may read, by the indexer's own walk.

A folder handed to the import is outside input: a named pipe called ``x.md`` would
block a reader forever, a symlink can point at ``/etc/passwd``, a linked directory
can loop back on itself, and one huge file should not be read whole. The rules for
the first three are the indexer's (``memhtml.mdindex.walk``): only regular files
inside the root, each directory walked once, a file reached through a link listed
under its real path only. Reading ``md`` and importing the same folder therefore
see the same files. What the import adds is its size cap (a source larger than a
memory file may be cannot become one, and is never read past the cap) and its
split of what the walk passed over:

- ``refused``: an entry that may have held notes and was not read: a ``.md``
  name, or a name with no suffix (a directory link leading out of the folder,
  a directory that cannot be listed). These make the import report a failure.
- ``passed``: an entry that loses nothing: a second name for a file or directory
  already read (a symlink to a note, a cycle), or something that is not markdown
  (``logo.png`` linking out of the folder). These are noted, never refused.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from returns.io import IOResult, IOSuccess

from memhtml.mdindex.errors import ReadFailure
from memhtml.mdindex.reader import GIT_DIR, CorpusReader, Exclude, is_hidden, list_visible
from memhtml.mdindex.walk import SECOND_NAMES, Skipped, WalkingReader

MAX_SOURCE_BYTES = 1 << 20
"""A source file larger than a memory file may be cannot become one."""
MARKDOWN_SUFFIX = ".md"

__all__ = ["MAX_SOURCE_BYTES", "MarkdownFolder", "Walked", "gather_markdown"]


@dataclass(frozen=True, slots=True)
class Walked:
    files: tuple[tuple[str, bytes], ...]
    """Each readable markdown file: its path relative to the root, its bytes."""
    refused: tuple[tuple[str, str], ...]
    """Each entry that may have held notes and was not read, with why."""
    passed: tuple[tuple[str, str], ...] = ()
    """Each entry passed over that loses nothing (a second name, not markdown)."""


@runtime_checkable
class MarkdownFolder(WalkingReader, Protocol):
    """A walking reader that can also read one file up to a cap."""

    def read_capped(self, path: str, cap: int) -> IOResult[bytes | None, ReadFailure]:
        """The file's bytes, or None when it holds more than ``cap`` (read no further)."""
        ...


def _over(cap: int) -> str:
    return f"over the {cap}-byte cap on one file ({cap >> 20} MiB, a memory file's limit)"


def _may_hold_notes(path: str) -> bool:
    """A ``.md`` name, or one with no suffix at all (what a directory is called)."""
    name = posixpath.basename(path)
    return name.endswith(MARKDOWN_SUFFIX) or "." not in name.lstrip(".")


def _sorted_out(skipped: tuple[Skipped, ...], exclude: Exclude
                ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    refused: list[tuple[str, str]] = []
    passed: list[tuple[str, str]] = []
    for entry in skipped:
        if is_hidden(entry.path, exclude):
            continue
        lost = _may_hold_notes(entry.path) and entry.kind not in SECOND_NAMES
        (refused if lost else passed).append((entry.path, entry.reason))
    return refused, passed


_Read = tuple[str, bytes | None, str | None]
"""A file's path, its bytes (None when not read) and why it was not read."""


def _one(folder: MarkdownFolder, path: str, cap: int) -> IOResult[_Read, ReadFailure]:
    """A file's bytes, or why it was not read; a file that fails is reported, never
    the end of the import."""
    read: IOResult[_Read, ReadFailure] = folder.read_capped(
        path, cap).map(lambda raw: (path, raw, None if raw is not None else _over(cap)))
    return read.lash(lambda error: IOSuccess((path, None, f"cannot be read: {error.reason}")))


def _then_read(folder: MarkdownFolder, path: str, cap: int
               ) -> Callable[[tuple[_Read, ...]], IOResult[tuple[_Read, ...], ReadFailure]]:
    """The step that reads ``path`` after the files read so far."""

    def step(done: tuple[_Read, ...]) -> IOResult[tuple[_Read, ...], ReadFailure]:
        return _one(folder, path, cap).map(lambda one: (*done, one))

    return step


def _walked(read: tuple[_Read, ...],
            refused: list[tuple[str, str]], passed: list[tuple[str, str]]) -> Walked:
    files = [(path, raw) for path, raw, _ in read if raw is not None]
    refused = [*refused, *((path, why) for path, _, why in read if why is not None)]
    return Walked(tuple(sorted(files)), tuple(sorted(refused)), tuple(sorted(passed)))


def gather_markdown(reader: CorpusReader, exclude: Exclude, cap: int = MAX_SOURCE_BYTES
                    ) -> IOResult[Walked, ReadFailure]:
    """Every ``.md`` file under the reader's root that ``exclude`` leaves in, read up
    to ``cap`` bytes, and the entries passed over, by the rules above. Failing to
    walk the root is the one failure; anything below it is reported and skipped.

    A reader that cannot walk (a tree held in memory) is listed and read whole, the
    cap applied to what it returns.
    """
    if not isinstance(reader, MarkdownFolder):
        return list_visible(reader, exclude).bind(lambda paths: _whole(reader, paths, cap))
    folder = reader

    def prune(directory: str) -> bool:
        return directory.rsplit("/", 1)[-1] == GIT_DIR or exclude(directory)

    def read_all(walk_files: tuple[str, ...], skipped: tuple[Skipped, ...]
                 ) -> IOResult[Walked, ReadFailure]:
        refused, passed = _sorted_out(skipped, exclude)
        wanted = [p for p in walk_files
                  if p.endswith(MARKDOWN_SUFFIX) and not is_hidden(p, exclude)]
        reads: IOResult[tuple[_Read, ...], ReadFailure] = IOSuccess(())
        for path in wanted:
            reads = reads.bind(_then_read(folder, path, cap))
        return reads.map(lambda read: _walked(read, refused, passed))

    return folder.walk(prune).bind(lambda walk: read_all(walk.files, walk.skipped))


def _whole(reader: CorpusReader, paths: tuple[str, ...], cap: int
           ) -> IOResult[Walked, ReadFailure]:
    wanted = tuple(p for p in paths if p.endswith(MARKDOWN_SUFFIX))
    return reader.read_files(wanted).map(lambda blobs: _walked(
        tuple((p, raw if len(raw) <= cap else None, None if len(raw) <= cap else _over(cap))
              for p, raw in zip(wanted, blobs, strict=True)), [], []))
