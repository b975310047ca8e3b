"""Where the vector cache keeps its file sets, and when a save folds them: what both the
light handle (``vector_cache``) and the file sets' code (``vector_files``) read, kept
apart so neither imports the other at load."""

from __future__ import annotations

from dataclasses import dataclass

MANIFEST = "manifest.json"
"""Each file set's manifest: its format, space and parts (``vector_files``)."""


@dataclass(frozen=True, slots=True)
class Compaction:
    """When a save rewrites parts of a file set instead of only adding a segment.

    A save writes the rows it adds as a new segment after the set's base. Before it
    does, the newest segments are merged into the new one while each holds at most
    ``merge_ratio`` times the new one's rows, so segment sizes fall geometrically
    from the oldest to the newest and their number stays logarithmic in the rows
    they hold. When the segments then hold more than ``fold_ratio`` times the base's
    rows, or number more than ``max_segments``, the save folds the whole set into one
    new base instead. The defaults are chosen by measurement (``docs/design.md``,
    the vector cache's layout); tests pick others to reach every path.
    """

    fold_ratio: float = 0.5
    merge_ratio: float = 1.0
    max_segments: int = 24


DEFAULT_COMPACTION = Compaction()
