"""What stands at a later version for a memory of an earlier one: the memory itself,
where it was moved to, or the keeper that superseded it.

A curation run changes where a fact is found in three ways. It leaves it where it
was; it moves the file (placement files an inbox note under a topic, a person runs
``memhtml move``); or it archives it superseded by another memory (a duplicate folded
into its keeper, members absorbed into a canonical), whose file says so in its
``memhtml-superseded-by``. A check that asks "is this memory still here?" by path
alone calls every move and every fold a loss, and one that asks only whether the file
exists somewhere calls a memory archived into nothing kept. ``Succession`` answers the
question a reader has: searching what the memory said, what should come up now.

**A move** is read from the two versions alone, as git would detect an exact rename:
a memory active at the earlier version whose path holds nothing at the later one and
that was not archived there, paired with a memory active at the later version that
was not active at the earlier one and whose article hashes alike (``content_hash``
reads the article only, and a move rewrites links in the head, never the article).
Pairs are made one to one: each removed path (in path order) takes the unclaimed
candidate with the same file name first, then the smallest path. An article with no
claim hashes like every other empty one, so for those the title joins the key.

**A keeper** is followed from the archived copy made since the earlier version (the
newest, by archive stamp then path, as ``store.archived`` picks it) through its
``memhtml-superseded-by``, hop by hop (at most ``SUCCESSION_HOPS``, never twice
through one path), to a memory active at the later version. A memory archived with no
superseder, or whose chain ends at nothing live, was forgotten: nothing stands for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from memhtml.contracts.paths import original_of_archived, to_tree_path
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.view import HeadView
from memhtml.head.indexes import is_active

SUCCESSION_HOPS: Final = 8
"""Supersessions and moves followed at most from one memory: a fold into a keeper
that was itself folded or filed is two hops; a chain longer than this is no evidence
a reader would follow."""


def _identity(record: MemoryRecord) -> tuple[str, str]:
    """What a move must keep: the article's hash, and the title for a claimless one."""
    return record.content_hash, "" if record.claim.strip() else record.title


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _newest(found: MemoryRecord, held: MemoryRecord | None) -> MemoryRecord:
    if held is None:
        return found
    return max(found, held, key=lambda r: (r.archived_at or "", r.path))


def archived_since(before: HeadView, after: HeadView) -> dict[str, MemoryRecord]:
    """Original path -> the archived copy ``after`` holds that ``before`` did not
    (the newest when a path was archived twice)."""
    copies: dict[str, MemoryRecord] = {}
    for record in after.records():
        if not record.archived or before.get(record.path) is not None:
            continue
        original = original_of_archived(record.path)
        if original is not None:
            copies[original] = _newest(record, copies.get(original))
    return copies


def moved_paths(before: HeadView, after: HeadView,
                archived: Mapping[str, MemoryRecord] | None = None) -> dict[str, str]:
    """Old path -> new path for every memory ``after`` holds under another path with
    the same article (module docstring). ``archived``: ``archived_since`` when the
    caller has it."""
    copies = archived_since(before, after) if archived is None else archived
    gone = sorted(r.path for r in before.records()
                  if is_active(r) and after.get(r.path) is None and r.path not in copies)
    if not gone:
        return {}
    fresh: dict[tuple[str, str], list[str]] = {}
    for record in after.records():
        if not is_active(record):
            continue
        was = before.get(record.path)
        if was is not None and is_active(was):
            continue
        fresh.setdefault(_identity(record), []).append(record.path)
    moves: dict[str, str] = {}
    taken: set[str] = set()
    for path in gone:
        held = before.get(path)
        if held is None:
            continue
        candidates = sorted(p for p in fresh.get(_identity(held), ()) if p not in taken)
        if not candidates:
            continue
        same_name = [p for p in candidates if _name(p) == _name(path)]
        chosen = (same_name or candidates)[0]
        taken.add(chosen)
        moves[path] = chosen
    return moves


@dataclass(frozen=True)
class Succession:
    """Where each memory of ``before`` is found at ``after`` (module docstring)."""

    before: HeadView
    after: HeadView
    moves: Mapping[str, str]
    archived: Mapping[str, MemoryRecord]

    @staticmethod
    def of(before: HeadView, after: HeadView) -> Succession:
        archived = archived_since(before, after)
        return Succession(before, after, moved_paths(before, after, archived), archived)

    def successor(self, path: str) -> str | None:
        """The path active at ``after`` that stands for the memory ``before`` held at
        ``path``: itself, where it moved, or its keeper; None when nothing does."""
        seen: set[str] = set()
        current = path
        for _ in range(SUCCESSION_HOPS + 1):
            if current in seen:
                return None
            seen.add(current)
            held = self.after.get(current)
            if held is not None and is_active(held):
                return current
            moved = self.moves.get(current)
            if moved is not None:
                current = moved
                continue
            copy = self.archived.get(current) if held is None else (
                held if held.archived or held.status == "archived" else None)
            if copy is None or not copy.superseded_by:
                return None
            current = to_tree_path(copy.superseded_by)
        return None

    def forgotten(self, path: str) -> bool:
        """Whether the memory at ``path`` was archived since ``before`` with nothing
        active standing for it (archived alone, or into a chain that ends in nothing
        live)."""
        return path in self.archived and self.successor(path) is None
