"""The head's side of the vector cache: the texts a record embeds, coverage, and the
steps that call an embedder.

The cache holds two kinds of vector in one space. A memory's own vector, keyed by its
content hash (``vector_text_of``: the opening of its article), is what the sleep run
compares memories by. Its passages (``head.passages``), keyed by their group, are what
the search's vector arm reads: every part of a long memory. ``search_head`` never
embeds: ``fill_vectors`` and ``fill_passages`` are where an embedder is called, at
most once per fill.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Iterable
from dataclasses import dataclass

import numpy as np
from immutables import Map
from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.errors import EmbedFailure
from memhtml.contracts.record import MemoryRecord
from memhtml.contracts.services import DocumentEmbedder, Vector, VectorSpace
from memhtml.contracts.vectors import VectorCache, cache_from, empty_vector_cache
from memhtml.contracts.view import HeadView
from memhtml.head.indexes import IndexedView, is_active
from memhtml.head.passages import passage_group, passage_key, passages_of, stored_passages

# The cache is the value of the vector port and lives beside it in contracts; it is
# re-exported here, where the head's callers have always found it.
__all__ = [
    "VECTOR_TEXT_MAX_CHARS",
    "FillCounts",
    "FillResult",
    "PassageCoverage",
    "PassageGap",
    "VectorCache",
    "cache_from",
    "coverage",
    "empty_vector_cache",
    "fill_passages",
    "fill_vectors",
    "gap_since",
    "has_memory",
    "passage_coverage",
    "passage_gap",
    "vector_text_of",
]

VECTOR_TEXT_MAX_CHARS = 1800
"""The longest text one record embeds. One vector per record, so a long article is
cut, and the cut keeps the opening, where the format puts the claim."""


def vector_text_of(record: MemoryRecord) -> str:
    """The text a record embeds: its article text (which opens with the claim),
    trimmed and cut at VECTOR_TEXT_MAX_CHARS UTF-16 code units.

    The title is left out on purpose: it lives in the head, outside what the content
    hash covers, so a vector that read it could go stale under a key that never
    changes. BM25 still reads the title.
    """
    text = record.body_text.strip()
    if len(text) <= VECTOR_TEXT_MAX_CHARS // 2:
        return text
    # The limit counts UTF-16 code units, as the chunk ceiling it mirrors does; a cut
    # that would split a surrogate pair drops the whole character instead.
    units = text.encode("utf-16-le")[: 2 * VECTOR_TEXT_MAX_CHARS]
    if len(units) >= 2 and 0xD800 <= int.from_bytes(units[-2:], "little") <= 0xDBFF:
        units = units[:-2]
    return units.decode("utf-16-le")


@dataclass(frozen=True, slots=True)
class FillCounts:
    """What a fill did, counted over the view's active records."""

    records: int
    """Active records in the view."""
    reused: int
    """Active records whose content hash already had a vector."""
    embedded: int
    """Distinct texts sent to the embedder (twins cost one)."""
    empty: int
    """Active records with no article text, which the vector arm never ranks."""


@dataclass(frozen=True, slots=True)
class FillResult:
    cache: VectorCache
    counts: FillCounts
    remaining: int
    """Distinct texts still missing: nonzero only when ``limit`` held some back."""
    added: VectorCache | None = None
    """The vectors this fill embedded alone, in the same space: what a caller saves
    when the rest is on disk already (a save merges, and one of a few rows costs a
    few rows, where the whole cache would be read and compared)."""


def coverage(view: HeadView, cache: VectorCache) -> tuple[int, int]:
    """(active records with a vector, active records with text to embed)."""
    have = total = 0
    for record in view.records():
        if is_active(record) and vector_text_of(record):
            total += 1
            have += record.content_hash in cache.vectors
    return have, total


def fill_vectors(
    view: HeadView,
    cache: VectorCache,
    embedder: DocumentEmbedder,
    limit: int | None = None,
) -> IOResult[FillResult, EmbedFailure]:
    """Embed the active records whose content hash the cache lacks, in one call.

    Texts are taken in path order, one per distinct content hash; ``limit`` bounds
    how many one fill sends and ``remaining`` counts the rest. Vectors for hashes the
    view no longer holds are kept: the cache serves every version of the store.
    An embedder answering with the wrong number of vectors, or a vector of the wrong
    width, ends the fill with a failure and nothing is stored: one bad vector would
    make every cosine against the cache meaningless.
    """
    if embedder.space != cache.space:
        return IOFailure(
            EmbedFailure(embedder.space.model_id,
                         f"embedder space {embedder.space} does not match cache {cache.space}")
        )
    records = reused = empty = 0
    wanted: dict[str, str] = {}
    for record in view.records():
        if not is_active(record):
            continue
        records += 1
        text = vector_text_of(record)
        if not text:
            empty += 1
        elif record.content_hash in cache.vectors:
            reused += 1
        elif record.content_hash not in wanted:
            wanted[record.content_hash] = text
    hashes = list(wanted)
    batch = hashes if limit is None else hashes[: max(limit, 0)]
    remaining = len(hashes) - len(batch)
    counts = FillCounts(records, reused, len(batch), empty)
    if not batch:
        return IOSuccess(FillResult(cache, counts, remaining))
    return embedder.embed([wanted[h] for h in batch]).bind(
        lambda vectors: _store(cache, batch, vectors, counts, remaining, embedder.space)
    )


def _store(
    cache: VectorCache,
    batch: list[str],
    vectors: object,
    counts: FillCounts,
    remaining: int,
    space: VectorSpace,
) -> IOResult[FillResult, EmbedFailure]:
    rows = list(vectors) if isinstance(vectors, (list, tuple)) else None
    if rows is None and isinstance(vectors, np.ndarray):
        rows = list(vectors)
    if rows is None or len(rows) != len(batch):
        got = "a non-sequence" if rows is None else f"{len(rows)} vectors"
        return IOFailure(EmbedFailure(space.model_id, f"asked for {len(batch)}, got {got}"))
    checked: dict[str, Vector] = {}
    for content_hash, row in zip(batch, rows, strict=True):
        vector = np.asarray(row, dtype=np.float32).ravel()
        if vector.shape != (space.dimension,) or not np.all(np.isfinite(vector)):
            return IOFailure(
                EmbedFailure(space.model_id, f"a vector of shape {vector.shape} (or non-finite) "
                             f"in a {space.dimension}-wide space")
            )
        vector.setflags(write=False)
        checked[content_hash] = vector
    return IOSuccess(FillResult(VectorCache(space, cache.vectors.update(checked)), counts,
                                remaining, VectorCache(space, Map(checked))))


@dataclass(frozen=True, slots=True)
class PassageCoverage:
    """How much of a view's passages a cache holds, counted by memories and passages."""

    memories: int
    """Active records with article text."""
    covered: int
    """Those whose every passage has a vector."""
    passages: int
    """Passages the covered memories hold, plus those the others would be cut into."""
    stored: int
    """Passages with a vector (the covered memories')."""

    @property
    def complete(self) -> bool:
        return self.memories > 0 and self.covered == self.memories


def passage_coverage(view: HeadView, cache: VectorCache) -> PassageCoverage:
    """The cache's coverage of ``view``'s passages. A covered memory is counted from the
    cache alone; only an uncovered one has its text read and cut, to count what is
    missing."""
    memories = covered = passages = stored = 0
    for record in view.records():
        if not is_active(record):
            continue
        # The cache is asked first: a covered memory's text is never read (on a cold
        # command it is a deferred read), and only a memory with text has passages.
        held = len(stored_passages(record, cache))
        if held:
            memories += 1
            covered += 1
            stored += held
            passages += held
        elif record.body_text.strip():
            memories += 1
            passages += len(passages_of(record))
    return PassageCoverage(memories, covered, passages, stored)


@dataclass(frozen=True, slots=True)
class PassageGap:
    """What a cache lacks of a view's passages, found without cutting a covered
    memory (``passage_gap``)."""

    memories: int | None
    """Active records counted (those with no text among them when over the bound);
    None when the gap was found from a coverage claim (``gap_since``), which reads
    only the records that changed since and so counts none."""
    missing: int
    """Of them, the records whose passages the cache lacks, one per passage group."""
    passages: int | None
    """The passages those would be cut into, or None when more than the bound (each
    missing record has one at least, so ``missing`` over the bound is over it too)."""
    paths: tuple[str, ...] = ()
    """The missing records' paths, when ``passages`` is counted."""

    @property
    def complete(self) -> bool:
        return self.missing == 0 and (self.memories is None or self.memories > 0)


_GAP_MEMO_SIZE = 4
_gaps: OrderedDict[tuple[int, int, int], tuple[HeadView, VectorCache, PassageGap]] = \
    OrderedDict()


def passage_gap(view: HeadView, cache: VectorCache, bound: int) -> PassageGap:
    """How much of ``view``'s passages ``cache`` lacks, at the cost of one digest a
    record: a missing record's text is read and cut only when at most ``bound``
    records are missing, so a store nobody has embedded costs a search nothing more
    than the count. A record with no text has no passages and is not missing; when
    more than ``bound`` are missing such records are counted among them unread.

    Both are immutable values, so a long-lived process (the MCP server, asked on
    every search and write over one version and one cache) keeps the last few
    answers: the walk costs about 8 ms at 5,000 memories, a search's whole budget
    is 20.
    """
    if not isinstance(view, IndexedView):
        return _passage_gap(view, cache, bound)  # another view may change under us
    key = (id(view), id(cache), bound)
    hit = _gaps.get(key)
    if hit is not None and hit[0] is view and hit[1] is cache:
        _gaps.move_to_end(key)
        return hit[2]
    gap = _passage_gap(view, cache, bound)
    _gaps[key] = (view, cache, gap)
    while len(_gaps) > _GAP_MEMO_SIZE:
        _gaps.popitem(last=False)
    return gap


def _passage_gap(view: HeadView, cache: VectorCache, bound: int) -> PassageGap:
    memories = 0
    lacking: list[MemoryRecord] = []
    groups: set[str] = set()
    for record in view.records():
        if not is_active(record):
            continue
        memories += 1
        _note_lacking(record, cache, groups, lacking)
    return _gap_of(memories, lacking, bound)


def gap_since(view: HeadView, cache: VectorCache, changed: Iterable[str], bound: int
              ) -> PassageGap:
    """``passage_gap`` when ``cache`` holds every passage of a version that differs
    from ``view`` only at the paths ``changed`` (a coverage claim,
    ``LoadedVectors.covers``): only the records at those paths are read, so a write
    at 5,000 memories learns what the cache lacks from its own few paths rather
    than from every record. ``memories`` is None: nothing else was counted."""
    lacking: list[MemoryRecord] = []
    groups: set[str] = set()
    for path in sorted(set(changed)):
        record = view.get(path)
        if record is not None and is_active(record):
            _note_lacking(record, cache, groups, lacking)
    return _gap_of(None, lacking, bound)


def has_memory(view: HeadView) -> bool:
    """Whether ``view`` holds an active record with text (what ``passage_gap`` counts
    as a memory): what a gap found by ``gap_since``, which counts nothing, leaves open.
    Stops at the first; a view this package built is asked path by path in its map's
    own order, so neither every path is sorted nor (in a version restored from a
    snapshot) every record built."""
    if not isinstance(view, IndexedView):
        return any(is_active(record) and record.body_text.strip()
                   for record in view.records())
    held = view.indexes.records
    for path in held:
        record = held.get(path)
        if record is not None and is_active(record) and record.body_text.strip():
            return True
    return False


def _note_lacking(record: MemoryRecord, cache: VectorCache, groups: set[str],
                  lacking: list[MemoryRecord]) -> None:
    group = passage_group(record)
    if cache.get(passage_key(group, 0)) is not None:
        return  # a group is saved whole: its first row stands for all of them
    if group not in groups:
        groups.add(group)
        lacking.append(record)


def _gap_of(memories: int | None, lacking: list[MemoryRecord], bound: int) -> PassageGap:
    if len(lacking) > bound:
        return PassageGap(memories, len(lacking), None)
    with_text = [record for record in lacking if record.body_text.strip()]
    if memories is not None:
        memories -= len(lacking) - len(with_text)  # a record with no text is not a memory
    passages = sum(len(passages_of(record)) for record in with_text)
    return PassageGap(memories, len(with_text), passages if passages <= bound else None,
                      tuple(record.path for record in with_text) if passages <= bound else ())


def fill_passages(
    view: HeadView,
    cache: VectorCache,
    embedder: DocumentEmbedder,
    limit: int | None = None,
    paths: Collection[str] | None = None,
) -> IOResult[FillResult, EmbedFailure]:
    """Embed the passages of the active records the cache has none for, in one call.

    Records are taken in path order, one per distinct passage group (twins share it);
    a record's passages go whole, so ``limit`` bounds the passages one fill sends
    except that a first record longer than it still goes. ``paths``, when given,
    restricts the fill to the records at those paths (a write's own memories).
    ``counts`` and ``remaining`` count passages (``records``, ``reused`` and ``empty``
    count memories) among the records considered. The same checks as
    ``fill_vectors``: nothing is stored unless every vector is one of the space's width.
    """
    if embedder.space != cache.space:
        return IOFailure(
            EmbedFailure(embedder.space.model_id,
                         f"embedder space {embedder.space} does not match cache {cache.space}")
        )
    records = reused = empty = 0
    wanted: dict[str, tuple[str, ...]] = {}
    texts: dict[str, tuple[str, ...]] = {}
    chosen_records = view.records() if paths is None else (
        record for path in sorted(set(paths)) if (record := view.get(path)) is not None)
    for record in chosen_records:
        if not is_active(record):
            continue
        records += 1
        # The cache first, as in ``passage_coverage``: a covered record's text is
        # never read.
        if stored_passages(record, cache):
            reused += 1
            continue
        if not record.body_text.strip():
            empty += 1
            continue
        group = passage_group(record)
        if group in wanted:
            continue
        passages = passages_of(record)
        wanted[group] = tuple(passage.key for passage in passages)
        texts[group] = tuple(passage.text for passage in passages)
    total = sum(len(keys) for keys in wanted.values())
    chosen: list[str] = []
    taken = 0
    for group, keys in wanted.items():
        if limit is not None and (taken + len(keys) > max(limit, 0)) and (chosen or limit <= 0):
            break
        chosen.append(group)
        taken += len(keys)
    batch = [key for group in chosen for key in wanted[group]]
    counts = FillCounts(records, reused, len(batch), empty)
    if not batch:
        return IOSuccess(FillResult(cache, counts, total))
    return embedder.embed([text for group in chosen for text in texts[group]]).bind(
        lambda vectors: _store(cache, batch, vectors, counts, total - len(batch),
                               embedder.space)
    )
