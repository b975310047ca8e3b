"""What a re-import keeps of the store's own decisions about imported memories.

A note imported once is a memory the person may then work on in the store: label
it, link it, unlink an edge the note made, correct it, archive it. A re-import must
not undo any of that when the note changes:

- a memory the person **archived** (no live memory holds its note) stays archived;
- a memory the person **corrected** (archived and superseded by a memory that is not
  the import's) stays corrected, its correction live;
- a memory still live is corrected by the note's new version, and the new version
  carries the store's **labels** (the import writes none, so every entity is the
  store's) and the store's **links**, and leaves out a link the note makes that the
  person removed.

Which links are the note's is written in the memory itself: each imported memory
carries a ``memhtml-source-links`` meta beside ``memhtml-source``, the link targets
its note named (as written, with the note each resolved to then). A memory imported
before these were metas holds the same values as facets of its article, and is read
the same way. Links are compared
by the note at each end (a link's target is known by its ``memhtml-source`` whatever
path a correction or an archive gave it since), so a link the live file has and the
note's targets do not name is the store's, and a target the note named that the live
file no longer links was removed by the person. A memory imported before the facet
existed says nothing: every link it has is carried and none counts as removed.

Each kept decision is reported by name, with whether the note changed since (a
conflict the person may want to look at). ``--revive FILE`` brings a kept note back
as a new live memory beside what the store holds. Whether an archive was the import's
own (made when the note had gone from the folder, undone when it comes back) is read
from the history (``markdown_history``); everything here is pure.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from memhtml.contracts.paths import to_document_path, to_tree_path
from memhtml.contracts.record import Link, MemoryRecord
from memhtml.head.indexes import is_active
from memhtml.store.layout import archive_rank, original_of_archived
from memhtml.store.markdown_history import ImportHistory, ImportNeeds, import_home

SOURCE_FACET = "memhtml-source"
DIGEST_FACET = "memhtml-source-sha256"
LINKS_FACET = "memhtml-source-links"
DOOR_RELS = frozenset({"supersedes"})
"""Rels a door writes itself (``correct`` links a new version to the one it
supersedes); never carried from one version to the next."""

Decision = Literal["archived", "corrected"]

__all__ = [
    "DIGEST_FACET",
    "LINKS_FACET",
    "SOURCE_FACET",
    "Carried",
    "Kept",
    "Known",
    "carried_links",
    "digest_of",
    "import_needs",
    "source_of",
    "target_rows",
    "targets_facet",
    "targets_of",
]


@dataclass(frozen=True, slots=True)
class Kept:
    """A note whose memory the store archived or corrected, left as the store has it."""

    source: str
    path: str
    """The archived memory (its archive path)."""
    decision: Decision
    on: str | None
    """When it was archived (its ``memhtml-archived`` instant), when the file says."""
    by: str | None
    """The memory that superseded it (tree path), when it was corrected."""
    note_changed: bool
    """The note differs from the version the store archived: a conflict to report."""


@dataclass(frozen=True, slots=True)
class Carried:
    """What a changed note's new version carries from the store's live version."""

    source: str
    path: str
    """The new version's path."""
    entities: tuple[str, ...]
    links: tuple[Link, ...]
    dropped: tuple[Link, ...] = ()
    """Links the note makes that the person had removed in the store: left out."""


def _facet(record: MemoryRecord, name: str) -> str | None:
    """A provenance value an import before the metas wrote as a facet."""
    return next((f.value for f in record.facets if f.name == name), None)


def source_of(record: MemoryRecord) -> tuple[str | None, str | None]:
    """The note a memory was imported from and that note's digest, when it says: its
    ``memhtml-source`` metas, or the facets an earlier import wrote instead."""
    if record.source is not None:
        return record.source, record.source_sha256
    if not record.facets:
        return None, None
    return _facet(record, SOURCE_FACET), _facet(record, DIGEST_FACET)


@dataclass(frozen=True, slots=True)
class Known:
    """The store's memories of one import's folder, by note (``memhtml-source``)."""

    live: Mapping[str, tuple[MemoryRecord, str | None]]
    """Note -> the live memory imported from it (the first by path if several), and
    the digest of the note it was imported from."""
    gone: Mapping[str, MemoryRecord]
    """Note -> its newest archived memory, for each note with no live one."""
    notes: Mapping[str, str]
    """Tree path -> note, of every memory of the folder, live or archived."""

    @classmethod
    def of(cls, records: Iterable[MemoryRecord], home: str) -> Known:
        live: dict[str, tuple[MemoryRecord, str | None]] = {}
        archived: dict[str, list[MemoryRecord]] = {}
        notes: dict[str, str] = {}
        for record in sorted(records, key=lambda r: r.path):
            original = original_of_archived(record.path)
            if is_active(record) and record.path.startswith(home):
                source, digest = source_of(record)
                if source is not None:
                    notes[record.path] = source
                    live.setdefault(source, (record, digest))
            elif original is not None and original.startswith(home):
                source, _ = source_of(record)
                if source is not None:
                    notes[record.path] = source
                    archived.setdefault(source, []).append(record)
        gone = {source: _last(found) for source, found in archived.items()
                if source not in live}
        return cls(live, gone, notes)

    def decided(self, source: str, digest: str, history: ImportHistory | None
                ) -> Kept | None:
        """The store's decision about ``source``, whose note is in the folder with
        ``digest``; None when there is none to keep (a live memory, no memory at all,
        or one the import itself archived when the note had gone)."""
        archived = self.gone.get(source)
        if archived is None or source in self.live:
            return None
        _, was = source_of(archived)
        by = to_tree_path(archived.superseded_by) if archived.superseded_by else None
        if by is None and history is not None and archived.path in history.by_import:
            return None
        return Kept(source, archived.path, "corrected" if by else "archived",
                    archived.archived_at, by, was != digest)


def _last(versions: list[MemoryRecord]) -> MemoryRecord:
    """The end of a note's archived versions: one no other version of the note
    supersedes (an import's correction archives the old version superseded by the new
    one, which the person may have archived since), the newest by its archive stamp,
    then its archive folder's year and ordinal, then path when several are."""
    paths = {record.path for record in versions}
    ends = [record for record in versions if record.superseded_by is None
            or to_tree_path(record.superseded_by) not in paths]
    return max(ends or versions, key=lambda r: (r.archived_at or "",
                                                archive_rank(r.path) or (0, 0), r.path))


def digest_of(raw: bytes) -> str:
    """A note's digest, as its memory's ``memhtml-source-sha256`` holds it."""
    return hashlib.sha256(raw).hexdigest()


def import_needs(files: Iterable[tuple[str, bytes]], directory: str,
                 records: Iterable[MemoryRecord]) -> ImportNeeds:
    """The history a re-import of ``files`` reads: who archived each archived memory
    whose note is present with no live memory (a corrected one needs no history: its
    successor says)."""
    known = Known.of(records, import_home(directory))
    archives = [known.gone[source].path for source, _ in sorted(files)
                if source in known.gone and known.gone[source].superseded_by is None]
    return ImportNeeds(tuple(archives))


# -- which links are the note's --------------------------------------------------------

NoteTarget = tuple[str, str, bool, str | None]
"""(rel, the target as the note wrote it, whether it is a ``.md`` path, the note it
resolved to when written or None)."""


def targets_facet(targets: Iterable[NoteTarget], in_front: Iterable[NoteTarget] = ()
                  ) -> str:
    """The ``memhtml-source-links`` value: the targets as compact JSON, sorted; a
    target the frontmatter's ``edges`` named carries a fifth field, ``true`` (the
    export writes it there again)."""
    front = set(in_front)
    rows = sorted({(rel, name, is_path, note) for rel, name, is_path, note in targets},
                  key=lambda row: (row[0], row[1], row[2], row[3] or ""))
    return json.dumps([[*row, True] if row in front else list(row) for row in rows],
                      ensure_ascii=False, separators=(",", ":"))


def target_rows(record: MemoryRecord) -> tuple[tuple[NoteTarget, bool], ...] | None:
    """The targets a memory's note named, each with whether the frontmatter named it,
    from its meta (or the facet an earlier import wrote); None when the memory has
    none that reads (imported before it was recorded, or the value was edited)."""
    value = record.source_links if record.source_links is not None else (
        _facet(record, LINKS_FACET) if record.facets else None)
    if value is None:
        return None
    try:
        rows = json.loads(value)
    except ValueError:
        return None
    if not isinstance(rows, list):
        return None
    out: list[tuple[NoteTarget, bool]] = []
    for row in rows:
        if not (isinstance(row, list) and len(row) in (4, 5) and isinstance(row[0], str)
                and isinstance(row[1], str) and isinstance(row[2], bool)
                and (row[3] is None or isinstance(row[3], str))
                and (len(row) == 4 or row[4] is True)):
            return None
        out.append(((row[0], row[1], row[2], row[3]), len(row) == 5))
    return tuple(out)


def targets_of(record: MemoryRecord) -> tuple[NoteTarget, ...] | None:
    """The targets a memory's note named (``target_rows`` without where)."""
    rows = target_rows(record)
    return None if rows is None else tuple(target for target, _ in rows)


LinkKey = tuple[str, str]
"""(rel, the note at the target end, or the target's href when it is no note's)."""


def carried_links(current: MemoryRecord, note: Iterable[Link],
                  before: frozenset[LinkKey] | None, fresh: Collection[str],
                  key: Callable[[Link], LinkKey], remap: Mapping[str, str], own: str
                  ) -> tuple[tuple[Link, ...], tuple[Link, ...], tuple[Link, ...]]:
    """The links of a changed note's new version, the store's links among them, and
    the note's links left out because the person removed them in the store.

    ``before`` are the keys of the targets the previous version's note named (None:
    not known). A live link whose key is not among them is the store's, carried; a
    key among them the live file lacks was removed by the person, unless its note is
    ``fresh`` (written by this import, so no earlier version could link it). ``remap``
    sends a document path this same import corrects to its new version's; ``own`` is
    the new version's document path."""

    def moved(link: Link) -> Link:
        return Link(link.rel, remap.get(link.href, link.href))

    live = {key(link): moved(link) for link in current.links if link.rel not in DOOR_RELS}
    removed = set() if before is None else {
        k for k in before - set(live) if k[1] not in fresh}
    out: dict[LinkKey, Link] = {}
    dropped: list[Link] = []
    for link in note:
        k = key(link)
        if k in removed:
            dropped.append(link)
        else:
            out.setdefault(k, link)
    itself = {own, to_document_path(current.path)}
    carried = [link for k, link in sorted(live.items()) if k not in out
               and (before is None or k not in before) and link.href not in itself]
    for link in carried:
        out[key(link)] = link
    return tuple(out.values()), tuple(carried), tuple(dropped)
