"""What a tree merge returns: the merged paths and one event per decision it made.

The shapes are plain frozen values so the orchestration that applies a merge, the
summary a person reads and the tests all see the same thing, and two merges of the
same inputs compare equal field by field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

METADATA_UNION: Final = "metadata-union"
"""One memory, one article, edited on both sides: the heads were joined."""
BOTH_KEPT: Final = "both-kept"
"""One memory, two articles (or two unreadable files): both kept, a task opened."""
EDIT_KEPT: Final = "edit-kept"
"""One side deleted or archived a memory the other edited: the edit survives."""
PATH_COLLISION: Final = "path-collision"
"""Both sides added a different file at one new path: one was renamed."""
GENERATED: Final = "generated"
"""A generated file both sides rewrote: one picked, ``publish`` rebuilds it."""
FILE_CONFLICT: Final = "file-conflict"
"""Another file both sides changed, with no clean line merge: one version kept."""
LINES_MERGED: Final = "lines-merged"
"""Another file both sides changed in separate lines: both changes applied."""

RIVAL_CORRECTIONS: Final = "rival-corrections"
"""One memory corrected differently on two clones: the latest correction stays live,
the others are archived beside it, and a task names every claim."""

MERGE_KINDS: Final = (METADATA_UNION, BOTH_KEPT, EDIT_KEPT, PATH_COLLISION, GENERATED,
                      FILE_CONFLICT, LINES_MERGED, RIVAL_CORRECTIONS)


@dataclass(frozen=True, slots=True)
class MergeEvent:
    """One decision of a merge, worded for the sync summary.

    No event names a side as "ours" or "theirs": the merge is symmetric, so a version
    is described by what it holds (its ``memhtml-updated``, its path), which reads the
    same on both machines.
    """

    kind: str
    """One of ``MERGE_KINDS``."""
    path: str
    """The path the event is about, in the merged tree."""
    detail: str
    """One readable sentence."""
    other: str | None = None
    """A second path where one applies: the kept copy, the new name, the moved-to path."""


@dataclass(frozen=True, slots=True)
class TreeMerge:
    """The result of ``merge_trees``."""

    merged: Mapping[str, bytes | None]
    """Final content of every path any side changed, plus every path the merge creates
    (second copies, renamed collisions, review tasks); None = absent. Applying it to
    EITHER side's tree gives the merged tree."""
    events: tuple[MergeEvent, ...]
    """Sorted by (path, kind)."""

    def applied_to(self, tree: Mapping[str, bytes]) -> dict[str, bytes]:
        """``tree`` (either side's, whole) with the merge laid over it: the merged tree."""
        out = dict(tree)
        for path, data in self.merged.items():
            if data is None:
                out.pop(path, None)
            else:
                out[path] = data
        return out
