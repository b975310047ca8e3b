"""Sync: the fact-by-fact three-way merge of memory trees.

Clones of one store meet through a git remote. Git's textual merge would put
conflict markers into memory files; ``merge_trees`` decides per path instead, as a
pure function of three trees, so two machines merging the same histories reach the
same tree and no version either of them wrote is lost.
"""

from memhtml.sync.merge import merge_trees
from memhtml.sync.model import (
    BOTH_KEPT,
    EDIT_KEPT,
    FILE_CONFLICT,
    GENERATED,
    LINES_MERGED,
    MERGE_KINDS,
    METADATA_UNION,
    PATH_COLLISION,
    RIVAL_CORRECTIONS,
    MergeEvent,
    TreeMerge,
)

__all__ = [
    "BOTH_KEPT",
    "EDIT_KEPT",
    "FILE_CONFLICT",
    "GENERATED",
    "LINES_MERGED",
    "MERGE_KINDS",
    "METADATA_UNION",
    "PATH_COLLISION",
    "RIVAL_CORRECTIONS",
    "MergeEvent",
    "TreeMerge",
    "merge_trees",
]
