"""The file-system seam: what the index needs from a tree of markdown, and no more.

The room does no I/O of its own. A caller hands in a ``CorpusReader`` (a real
directory, an in-memory mapping in tests, a git tree), and every judgment the
index makes stays reachable by a test without a disk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeAlias

from returns.io import IOResult

from memhtml.mdindex.errors import ReadFailure

Exclude: TypeAlias = Callable[[str], bool]
"""Asked about slash paths relative to the root; ``True`` hides the path."""

GIT_DIR = ".git"


class CorpusReader(Protocol):
    """A tree of files addressed by slash paths relative to its root."""

    def list_files(self, prune: Exclude) -> IOResult[tuple[str, ...], ReadFailure]:
        """Every file under the root, not descending into a directory ``prune`` accepts."""
        ...

    def read_files(self, paths: Sequence[str]) -> IOResult[tuple[bytes, ...], ReadFailure]:
        """The bytes of each path, in the order asked."""
        ...


def is_hidden(path: str, exclude: Exclude | None) -> bool:
    """Whether the path or any of its ancestors is ``.git`` or excluded.

    ``.git`` is never a corpus, whatever the caller says; everything else is
    the caller's scope for this run, with no default.
    """
    parts = path.split("/")
    for end in range(len(parts), 0, -1):
        if parts[end - 1] == GIT_DIR:
            return True
        if exclude is not None and exclude("/".join(parts[:end])):
            return True
    return False


def list_visible(
    reader: CorpusReader, exclude: Exclude | None
) -> IOResult[tuple[str, ...], ReadFailure]:
    """Every visible file of the tree, sorted by path.

    The reader prunes hidden directories so it never walks them; the result is
    filtered again here so a reader that ignores ``prune`` still cannot leak a
    hidden path into the index.
    """

    def prune(directory: str) -> bool:
        return directory.rsplit("/", 1)[-1] == GIT_DIR or (
            exclude is not None and exclude(directory)
        )

    return reader.list_files(prune).map(
        lambda paths: tuple(sorted(p for p in paths if not is_hidden(p, exclude)))
    )
