"""Where a memory went when its path holds nothing: "archived at" versus "never existed".

Archiving moves a file under ``archive/<YYYY>/`` and keeps its original path below
that, so a path that holds no memory can be looked up there. A reader who asks for a
memory that was corrected or archived is told where it lives now (and when it moved,
and what superseded it); one who asks for a path that never held a memory is told
that. Only the failure path pays for the scan.
"""

from __future__ import annotations

from collections.abc import Iterable

from memhtml.contracts.record import MemoryRecord
from memhtml.store.errors import Archived
from memhtml.store.layout import archive_rank, original_of_archived


def archived_copy(records: Iterable[MemoryRecord], tree: str) -> MemoryRecord | None:
    """The latest archived memory whose original path was ``tree``, or None.

    A path may have been archived more than once (a memory archived, another written
    at the same path and archived later, that year or a later one): the newest archive
    wins, by the ``memhtml-archived`` stamp, then by the archive folder's year and
    ordinal (``archive/2026-2/`` is 2026's second), then by the archive path."""
    found = [record for record in records
             if record.archived and original_of_archived(record.path) == tree]
    if not found:
        return None
    return max(found, key=lambda record: (record.archived_at or "",
                                          archive_rank(record.path) or (0, 0), record.path))


def archived_error(tree: str, record: MemoryRecord) -> Archived:
    """The typed answer for ``tree``, whose memory now lives at ``record``."""
    return Archived(tree, record.path, record.archived_at, record.superseded_by)


def archived_refusal(tree: str, record: MemoryRecord) -> str:
    """Why a door that changes live memories refuses ``tree``, whose memory was archived
    to ``record``: where it went, that only a live memory is changed, and the one
    command that brings it back live."""
    when = f" on {record.archived_at[:10]}" if record.archived_at else ""
    return (f"{tree} was archived at {record.path}{when}; only a live memory can be "
            f"changed: memhtml restore {tree} brings it back live first (or write a new "
            "one)")


def archived_path_refusal(path: str) -> str:
    """Why a door that changes live memories refuses the archive path ``path`` itself."""
    original = original_of_archived(path)
    back = f" at {original}" if original is not None else ""
    return (f"{path} is archived; only a live memory can be changed: memhtml restore "
            f"{path} brings it back live{back} first")
