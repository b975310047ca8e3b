"""The record map and every index derived from it, as one persistent value.

Each field is an ``immutables.Map`` (a hash array mapped trie), so changing one
record builds a new value sharing every untouched node with the old. ``insert_record``
and ``remove_record`` are the writers; a version is a fold of them over its parent,
``build_indexes`` is the same fold done in bulk from nothing, and ``replace_paths``
the fold of one commit over a parent, done in bulk when the commit is large.

Sets of paths are maps from path to ``True``: the library has no persistent set,
and a map keyed by member is one.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from immutables import Map

from memhtml.contracts.record import Link, MemoryRecord
from memhtml.contracts.view import HeadView
from memhtml.head.lazy_map import LazyMap, PatchedMap, PendingSets, as_map
from memhtml.head.lexical import (
    EMPTY_LEXICAL,
    LexicalIndex,
    add_to_lexical,
    build_lexical,
    compact_limit,
    remove_from_lexical,
    same_document_text,
)

PathSet = Map[str, bool]
_EMPTY_SET: PathSet = Map()


def is_active(record: MemoryRecord) -> bool:
    """Searchable and deduplicated against: not under ``archive/`` and not archived
    by status. Either alone removes a record from the active-only indexes, so a
    file whose status and path disagree never shows up as live."""
    return not record.archived and record.status == "active"


@dataclass(frozen=True, slots=True)
class Indexes:
    """records by path; content hash -> the active path holding it; frame key ->
    active paths; href -> paths linking to it; entity -> paths naming it; lexical."""

    records: Map[str, MemoryRecord]
    by_content_hash: Map[str, str]
    by_frame_key: Map[str, PathSet]
    inbound: Map[str, PathSet]
    by_entity: Map[str, PathSet]
    lexical: LexicalIndex



EMPTY_INDEXES = Indexes(Map(), Map(), Map(), Map(), Map(), EMPTY_LEXICAL)


def empty_indexes() -> Indexes:
    """The empty value (shared: it is immutable)."""
    return EMPTY_INDEXES


def _add(index: Map[str, PathSet], key: str, path: str) -> Map[str, PathSet]:
    pending: PendingSets[str, str] | None = PendingSets.over(index)
    if pending is not None:
        # A restored version's path sets, not built yet: noted, applied when read.
        return as_map(pending.changed(key, path, True))
    members = index.get(key, _EMPTY_SET)
    if path in members:
        return index
    return index.set(key, members.set(path, True))


def _discard(index: Map[str, PathSet], key: str, path: str) -> Map[str, PathSet]:
    pending: PendingSets[str, str] | None = PendingSets.over(index)
    if pending is not None:
        return as_map(pending.changed(key, path, False))
    members = index.get(key)
    if members is None or path not in members:
        return index
    smaller = members.delete(path)
    return index.set(key, smaller) if len(smaller) else index.delete(key)


def insert_record(indexes: Indexes, record: MemoryRecord) -> Indexes:
    """Put ``record`` at its path, replacing whatever was there.

    An archived record enters only ``records``, ``inbound`` and ``by_entity``: the
    active-only indexes answer "is this claim live", and an archived one is not.
    A content hash goes to the first active record inserted while no path holds it.
    Inserting the very record already held returns the same value, and replacing an
    active record by an active one with the same title, claim and body (a meta-only
    edit) keeps the very lexical index.
    """
    current = indexes.records.get(record.path)
    if current is record:
        return indexes
    if current is None:
        return _link(indexes, record, lexical=True)
    # The lexical index holds one document per active path, read from these three
    # fields only; removing it and adding it back would change nothing but the size of
    # the delta, and a run of meta-only edits would compact the base every few hundred.
    relex = not (is_active(current) and is_active(record)
                 and same_document_text(current, record))
    return _link(_unlink(indexes, current, lexical=relex), record, lexical=relex)


def remove_record(indexes: Indexes, path: str) -> Indexes:
    """Drop the record at ``path`` from every index; an absent path is a no-op.

    Removing the holder of a content hash leaves the hash unmapped even while a twin
    (another active record with that hash) stays: the slot says who claimed it
    first, and only the next active insertion of the hash fills it again. A version
    loaded from a tree inserts in path order, so there the least path holds it.
    """
    record = indexes.records.get(path)
    if record is None:
        return indexes
    return _unlink(indexes, record, lexical=True)


def _link(indexes: Indexes, record: MemoryRecord, *, lexical: bool) -> Indexes:
    """``record`` added at a path that holds nothing (in ``lexical`` only when asked)."""
    path = record.path
    by_hash, by_frame, lex = indexes.by_content_hash, indexes.by_frame_key, indexes.lexical
    if is_active(record):
        if record.content_hash not in by_hash:
            by_hash = by_hash.set(record.content_hash, path)
        by_frame = _add(by_frame, record.frame_key, path)
        if lexical:
            lex = add_to_lexical(lex, record)
    inbound = indexes.inbound
    for href in {link.href for link in record.links}:
        inbound = _add(inbound, href, path)
    by_entity = indexes.by_entity
    for entity in set(record.entities):
        by_entity = _add(by_entity, entity, path)
    return Indexes(indexes.records.set(path, record), by_hash, by_frame, inbound, by_entity, lex)


def _unlink(indexes: Indexes, record: MemoryRecord, *, lexical: bool) -> Indexes:
    """The record held at ``record.path`` taken out (of ``lexical`` only when asked)."""
    path = record.path
    by_hash, by_frame, lex = indexes.by_content_hash, indexes.by_frame_key, indexes.lexical
    if is_active(record):
        if by_hash.get(record.content_hash) == path:
            by_hash = by_hash.delete(record.content_hash)
        by_frame = _discard(by_frame, record.frame_key, path)
        if lexical:
            lex = remove_from_lexical(lex, record)
    inbound = indexes.inbound
    for href in {link.href for link in record.links}:
        inbound = _discard(inbound, href, path)
    by_entity = indexes.by_entity
    for entity in set(record.entities):
        by_entity = _discard(by_entity, entity, path)
    return Indexes(indexes.records.delete(path), by_hash, by_frame, inbound, by_entity, lex)


def build_indexes(records: Iterable[MemoryRecord],
                  tokens: Mapping[str, list[str]] | None = None) -> Indexes:
    """``insert_record`` folded over ``records`` in order, built through plain dicts
    and converted once. Equal (``==``) to the fold, and several times faster.
    ``tokens``: records' lexical tokens computed ahead, by path (``build_lexical``)."""
    by_path: dict[str, MemoryRecord] = {}
    ordered = list(records)
    for record in ordered:
        if record.path in by_path:
            # A repeated path is a replacement mid-fold, whose content-hash rules the
            # bulk form does not reproduce; fold it one record at a time instead.
            indexes = EMPTY_INDEXES
            for item in ordered:
                indexes = insert_record(indexes, item)
            return indexes
        by_path[record.path] = record
    by_hash: dict[str, str] = {}
    active: list[MemoryRecord] = []
    for path, record in by_path.items():
        if is_active(record):
            active.append(record)
            by_hash.setdefault(record.content_hash, path)
    by_frame, inbound, by_entity = path_set_indexes(by_path.values())
    return Indexes(Map(by_path), Map(by_hash), by_frame, inbound, by_entity,
                   build_lexical(active, tokens))


REBUILD_FRACTION = 0.25
"""Past this share of the records changed, ``replace_paths`` rebuilds the maps in
bulk. Measured on SciFact (5,183 records, ``bench.advance``'s records): the per-path
fold of the maps costs about 15 us a path, the bulk build about 11 ms plus 6 us a
path, and they cross near 1,300 paths, a quarter of the records."""
REBUILD_MINIMUM = 64


def replace_paths(
    indexes: Indexes,
    changed: Collection[str],
    records: Iterable[MemoryRecord],
    *,
    bulk: bool | None = None,
) -> Indexes:
    """Every path in ``changed`` removed, then ``records`` (each at a changed path)
    inserted in path order: the fold ``advance_head`` applies for a commit.

    The value equals that fold of ``remove_record``/``insert_record`` (``==``, the
    content-hash holders included) whichever way it is computed. The lexical index
    changes only for the documents whose text or active state changed, so a
    meta-only commit keeps the very lexical index whatever its size. When more than
    ``REBUILD_FRACTION`` of the records change (``bulk=None``; ``True``/``False``
    force either way), the maps are rebuilt from the new record set as
    ``build_indexes`` does, and the holders are worked out in a transient by the
    fold's own rule (a changed holder's slot is emptied, then each active new record
    in path order takes its hash's slot when it is empty), so which way was taken
    never shows.
    """
    new = sorted(records, key=lambda r: r.path)
    touched = set(changed)
    if len({r.path for r in new}) != len(new) or not touched.issuperset(r.path for r in new):
        # Outside the contract (a record at an untouched path, a path twice): the
        # plain fold says what that means.
        for path in changed:
            indexes = remove_record(indexes, path)
        for record in new:
            indexes = insert_record(indexes, record)
        return indexes
    if bulk is None:
        bulk = len(touched) > max(REBUILD_MINIMUM, int(len(indexes.records) * REBUILD_FRACTION))
    if bulk:
        rebuilt = _rebuild_maps(indexes, touched, new)
    else:
        rebuilt = indexes
        for path in sorted(touched):
            old = rebuilt.records.get(path)
            if old is not None:
                rebuilt = _unlink(rebuilt, old, lexical=False)
        for record in new:
            rebuilt = _link(rebuilt, record, lexical=False)
    lexical = _relexed(indexes, rebuilt, touched)
    return rebuilt if lexical is rebuilt.lexical else replace(rebuilt, lexical=lexical)


def _rebuild_maps(indexes: Indexes, touched: set[str], new: list[MemoryRecord]) -> Indexes:
    """``replace_paths``' maps built in bulk; the lexical index left as it was."""
    records = indexes.records.mutate()
    holders = indexes.by_content_hash.mutate()
    for path in touched:
        old = records.pop(path, None)
        if old is not None and is_active(old) and holders.get(old.content_hash) == path:
            del holders[old.content_hash]
    for record in new:
        records[record.path] = record
        if is_active(record) and record.content_hash not in holders:
            holders[record.content_hash] = record.path
    by_path = records.finish()
    by_frame, inbound, by_entity = path_set_indexes(by_path.values())
    return Indexes(by_path, holders.finish(), by_frame, inbound, by_entity, indexes.lexical)


def _live(indexes: Indexes, path: str) -> MemoryRecord | None:
    record = indexes.records.get(path)
    return record if record is not None and is_active(record) else None


def _relexed(before: Indexes, after: Indexes, touched: set[str]) -> LexicalIndex:
    """``before``'s lexical index brought to ``after``'s active records, which differ
    from ``before``'s at ``touched`` paths only.

    Only a document whose text or active state changed is removed or added. When
    there are more of them than the delta holds before it compacts, folding them in
    would compact every few hundred documents (each compaction rereads the whole
    index), so a fresh index over every active record is built once instead.
    """
    gone: list[MemoryRecord] = []
    come: list[MemoryRecord] = []
    for path in sorted(touched):
        old, new = _live(before, path), _live(after, path)
        if old is not None and new is not None and same_document_text(old, new):
            continue
        if old is not None:
            gone.append(old)
        if new is not None:
            come.append(new)
    lexical = before.lexical
    if not gone and not come:
        return lexical
    if len(gone) + len(come) > compact_limit(lexical):
        return build_lexical(r for r in after.records.values() if is_active(r))
    for record in gone:
        lexical = remove_from_lexical(lexical, record)
    for record in come:
        lexical = add_to_lexical(lexical, record)
    return lexical


PathSetRow = tuple[str, bool, str, Iterable[Link], Iterable[str]]
"""What the path-set maps read of one record: path, active, frame key, links and
entities (``path_set_indexes_of``)."""


def path_set_indexes(
    records: Iterable[MemoryRecord],
) -> tuple[Map[str, PathSet], Map[str, PathSet], Map[str, PathSet]]:
    """``by_frame_key``, ``inbound`` and ``by_entity`` of a set of records (one per path).

    Unlike ``by_content_hash`` these depend only on which records are present, never
    on the order they were inserted in, so a snapshot rebuilds them from its records
    rather than storing them.
    """
    return path_set_indexes_of((r.path, is_active(r), r.frame_key, r.links, r.entities)
                               for r in records)


def path_set_indexes_of(
    rows: Iterable[PathSetRow],
) -> tuple[Map[str, PathSet], Map[str, PathSet], Map[str, PathSet]]:
    """``path_set_indexes`` from the fields it reads, one row per record: a snapshot's
    columns give them without building the records."""
    by_frame: dict[str, dict[str, bool]] = {}
    inbound: dict[str, dict[str, bool]] = {}
    by_entity: dict[str, dict[str, bool]] = {}
    for path, active, frame_key, links, entities in rows:
        if active:
            by_frame.setdefault(frame_key, {})[path] = True
        for link in links:
            inbound.setdefault(link.href, {})[path] = True
        for entity in entities:
            by_entity.setdefault(entity, {})[path] = True
    return (
        Map({k: Map(v) for k, v in by_frame.items()}),
        Map({k: Map(v) for k, v in inbound.items()}),
        Map({k: Map(v) for k, v in by_entity.items()}),
    )


@dataclass(frozen=True, slots=True)
class IndexedView:
    """The read surface (``contracts.HeadView``) over one ``Indexes`` value."""

    indexes: Indexes
    sha: str | None

    @property
    def size(self) -> int:
        return len(self.indexes.records)

    @property
    def lexical(self) -> LexicalIndex:
        return self.indexes.lexical

    def get(self, path: str) -> MemoryRecord | None:
        return self.indexes.records.get(path)

    def paths(self) -> Iterator[str]:
        """Paths in ascending order (the maps themselves iterate in hash order)."""
        return iter(sorted(self.indexes.records.keys()))

    def records(self) -> Iterator[MemoryRecord]:
        """Records in ascending path order."""
        records = self.indexes.records
        return (records[path] for path in sorted(records.keys()))

    def field_rows(self, names: Sequence[str]) -> Iterator[tuple[object, ...]]:
        """Fields ``names`` of every record, one tuple each, in no promised order: for
        tallies. A version restored from a snapshot answers from its decoded columns
        without building a record (``LazyMap.column``); any other reads its records."""
        # Typed as the Map it stands for; at run time a restored version's is lazy
        # (and patched, once advanced).
        held: object = self.indexes.records
        if isinstance(held, LazyMap | PatchedMap):
            rows = held.field_rows(names)
            if rows is not None:
                return rows
        return (tuple(getattr(r, name) for name in names)
                for r in self.indexes.records.values())

    def by_content_hash(self, content_hash: str) -> str | None:
        return self.indexes.by_content_hash.get(content_hash)

    def by_frame_key(self, key: str) -> tuple[str, ...]:
        return tuple(sorted(self.indexes.by_frame_key.get(key, _EMPTY_SET).keys()))

    def inbound(self, href: str) -> tuple[str, ...]:
        return tuple(sorted(self.indexes.inbound.get(href, _EMPTY_SET).keys()))

    def by_entity(self, entity: str) -> tuple[str, ...]:
        return tuple(sorted(self.indexes.by_entity.get(entity, _EMPTY_SET).keys()))

    def active_records(self) -> Iterator[MemoryRecord]:
        """Active records in ascending path order."""
        return (r for r in self.records() if is_active(r))


def view_of(indexes: Indexes, sha: str | None) -> IndexedView:
    """The read surface over one ``Indexes`` value."""
    return IndexedView(indexes, sha)


def indexes_of(view: HeadView) -> Indexes:
    """The indexes behind a view this package built (a loaded, advanced or overlaid
    version, or ``view_of``).

    Any other ``HeadView`` is refused with a ``TypeError`` naming its type. Rebuilding
    the indexes from its records instead would make every search or overlay over it
    a full index build, and nothing would say so; a caller holding records builds a
    view once with ``view_of(build_indexes(records), sha)``.
    """
    if isinstance(view, IndexedView):
        return view.indexes
    kind = type(view)
    raise TypeError(
        f"indexes_of needs an IndexedView built by memhtml.head, got "
        f"{kind.__module__}.{kind.__qualname__}"
    )
