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
from memhtml.store.layout import original_of_archived


def archived_copy(records: Iterable[MemoryRecord], tree: str) -> MemoryRecord | None:
    """The latest archived memory whose original path was ``tree``, or None.

    A path may have been archived more than once (a memory archived, another written
    at the same path and archived a later year): the newest archive wins, by the
    ``memhtml-archived`` stamp and then by the archive path."""
    found = [record for record in records
             if record.archived and original_of_archived(record.path) == tree]
    if not found:
        return None
    return max(found, key=lambda record: (record.archived_at or "", record.path))


def archived_error(tree: str, record: MemoryRecord) -> Archived:
    """The typed answer for ``tree``, whose memory now lives at ``record``."""
    return Archived(tree, record.path, record.archived_at, record.superseded_by)


def archived_refusal(tree: str, record: MemoryRecord) -> str:
    """Why a door that changes live memories refuses ``tree``, whose memory was archived
    to ``record``: where it went, and that only a live memory is changed."""
    when = f" on {record.archived_at[:10]}" if record.archived_at else ""
    return (f"{tree} was archived at {record.path}{when}; only a live memory can be "
            "changed (write a new one, or read the archived one there)")
