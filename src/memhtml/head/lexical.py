"""The lexical arm's index: a frozen base segment plus a small persistent delta.

A version loaded from a tree holds one *base segment*: compressed postings
(token -> doc ids and term frequencies, as numpy arrays) over every active record,
built in one pass. A version advanced from its parent shares that segment by
reference and records its changes per document: ``added`` maps a path to its term
counts and ``removed`` marks base documents that are no longer live. One changed
file therefore costs one entry in each persistent map, not one entry per token,
which is what keeps a chain of single-file versions close to the size of one.
When the delta outgrows ``COMPACT_FRACTION`` of the base, the next version
rebuilds the base from everything live.

BM25 statistics (document count, document frequency, average length) are always
those of the live documents, base and delta together, so a version built by
advancing and one loaded from the same tree score every document identically.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from immutables import Map

from memhtml.contracts.record import MemoryRecord

_WORD = re.compile(r"\w+")

STOP_WORDS: frozenset[str] = frozenset(
    """a about an and are as at be been but by did do does for from had has have he her his
    how i if in into is it its of on or she so than that the their them then there these
    they this those to was we were what when which who will with you
    """.split()
)
"""57 English function words. Short on purpose: a long list starts dropping words a
memory corpus is searched by (``system``, ``time``), and negations (``no``, ``not``)
are kept because they are what separates a claim from its contradiction."""

assert len(STOP_WORDS) == 57  # the documented size; a change here is a change of token space

COMPACT_FRACTION = 0.125
COMPACT_MINIMUM = 64


def tokenize(text: str) -> list[str]:
    """Lowercase, split on anything that is not a letter, number or underscore, and
    drop stop words. Unicode-aware, so ``café`` stays one token."""
    # In Python's Unicode mode \w is exactly letters, numbers and underscore.
    return [t for t in _WORD.findall(text.lower()) if t not in STOP_WORDS]


def document_text(record: MemoryRecord) -> str:
    """What the lexical arm indexes for a record: title, claim and body."""
    return f"{record.title}\n{record.claim}\n{record.body_text}"


@dataclass(frozen=True, slots=True)
class TermCounts:
    """One document's token counts and length (tokens after stop-word removal)."""

    counts: Mapping[str, int]
    length: int


def term_counts(record: MemoryRecord) -> TermCounts:
    counts = Counter(_WORD.findall(document_text(record).lower()))
    for word in STOP_WORDS.intersection(counts):
        del counts[word]
    return TermCounts(counts, sum(counts.values()))


@dataclass(frozen=True, slots=True, eq=False)
class Segment:
    """Immutable compressed postings over a fixed, path-sorted set of documents.

    Never mutated after construction, so every version built on it may share it.
    """

    paths: tuple[str, ...]
    doc_index: Mapping[str, int]
    lengths: npt.NDArray[np.float64]
    vocab: Mapping[str, tuple[int, int]]
    """token -> (start, end) into ``doc_ids``/``tfs``."""
    doc_ids: npt.NDArray[np.int32]
    tfs: npt.NDArray[np.float64]
    counts: tuple[TermCounts, ...]
    """Each document's counts, kept so a removal can adjust frequencies exactly."""
    total_length: int

    def df(self, token: str) -> int:
        span = self.vocab.get(token)
        return 0 if span is None else span[1] - span[0]


def build_segment(docs: Iterable[tuple[str, TermCounts]]) -> Segment:
    """Compress documents into a segment. Doc ids follow path order."""
    ordered = sorted(docs, key=lambda item: item[0])
    paths = tuple(path for path, _ in ordered)
    per_token: dict[str, tuple[list[int], list[int]]] = {}
    for doc_id, (_, tc) in enumerate(ordered):
        for token, tf in tc.counts.items():
            entry = per_token.get(token)
            if entry is None:
                per_token[token] = ([doc_id], [tf])
            else:
                entry[0].append(doc_id)
                entry[1].append(tf)
    vocab: dict[str, tuple[int, int]] = {}
    ids: list[int] = []
    tfs: list[int] = []
    for token in sorted(per_token):
        doc_list, tf_list = per_token[token]
        vocab[token] = (len(ids), len(ids) + len(doc_list))
        ids.extend(doc_list)
        tfs.extend(tf_list)
    return Segment(
        paths=paths,
        doc_index={path: i for i, path in enumerate(paths)},
        lengths=np.array([tc.length for _, tc in ordered], dtype=np.float64),
        vocab=vocab,
        doc_ids=np.array(ids, dtype=np.int32),
        tfs=np.array(tfs, dtype=np.float64),
        counts=tuple(tc for _, tc in ordered),
        total_length=sum(tc.length for _, tc in ordered),
    )


EMPTY_SEGMENT = build_segment(())


@dataclass(frozen=True, slots=True, eq=False)
class LexicalIndex:
    """Active records only: a shared base segment, plus this version's delta."""

    base: Segment
    removed: Map[str, bool] = field(default_factory=Map)
    """Base paths no longer live (edited or gone)."""
    added: Map[str, TermCounts] = field(default_factory=Map)
    """Live documents outside the base, by path."""
    documents: int = 0
    total_length: int = 0

    @property
    def average_length(self) -> float:
        return self.total_length / self.documents if self.documents else 0.0

    @property
    def delta_size(self) -> int:
        return len(self.removed) + len(self.added)

    def is_live_in_base(self, path: str) -> bool:
        return path in self.base.doc_index and path not in self.removed

    def length_of(self, path: str) -> int | None:
        tc = self.added.get(path)
        if tc is not None:
            return tc.length
        if self.is_live_in_base(path):
            return int(self.base.lengths[self.base.doc_index[path]])
        return None

    def df(self, token: str) -> int:
        """Live documents containing ``token``."""
        count = self.base.df(token)
        for path in self.removed:
            if token in self.base.counts[self.base.doc_index[path]].counts:
                count -= 1
        for tc in self.added.values():
            if token in tc.counts:
                count += 1
        return count

    def materialize(self) -> tuple[dict[str, dict[str, int]], dict[str, int], int]:
        """Postings (token -> path -> tf), lengths and total, as plain dicts: the
        representation-free contents two indexes are compared by."""
        postings: dict[str, dict[str, int]] = {}
        lengths: dict[str, int] = {}
        for doc_id, path in enumerate(self.base.paths):
            if path in self.removed:
                continue
            tc = self.base.counts[doc_id]
            lengths[path] = tc.length
            for token, tf in tc.counts.items():
                postings.setdefault(token, {})[path] = tf
        for path, tc in self.added.items():
            lengths[path] = tc.length
            for token, tf in tc.counts.items():
                postings.setdefault(token, {})[path] = tf
        return postings, lengths, self.total_length

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LexicalIndex):
            return NotImplemented
        return self is other or self.materialize() == other.materialize()

    __hash__ = None  # type: ignore[assignment]


EMPTY_LEXICAL = LexicalIndex(EMPTY_SEGMENT)


def build_lexical(records: Iterable[MemoryRecord]) -> LexicalIndex:
    """A fresh index whose base holds every given (active) record."""
    segment = build_segment((r.path, term_counts(r)) for r in records)
    return LexicalIndex(segment, Map(), Map(), len(segment.paths), segment.total_length)


def add_to_lexical(index: LexicalIndex, record: MemoryRecord) -> LexicalIndex:
    """Index one active record whose path is not live in ``index``."""
    tc = term_counts(record)
    return _maybe_compact(
        LexicalIndex(
            index.base,
            index.removed,
            index.added.set(record.path, tc),
            index.documents + 1,
            index.total_length + tc.length,
        )
    )


def remove_from_lexical(index: LexicalIndex, path: str) -> LexicalIndex:
    """Drop one live document; a path that is not live is a no-op."""
    tc = index.added.get(path)
    if tc is not None:
        return LexicalIndex(
            index.base,
            index.removed,
            index.added.delete(path),
            index.documents - 1,
            index.total_length - tc.length,
        )
    if not index.is_live_in_base(path):
        return index
    length = int(index.base.lengths[index.base.doc_index[path]])
    return _maybe_compact(
        LexicalIndex(
            index.base,
            index.removed.set(path, True),
            index.added,
            index.documents - 1,
            index.total_length - length,
        )
    )


def _maybe_compact(index: LexicalIndex) -> LexicalIndex:
    limit = max(COMPACT_MINIMUM, int(len(index.base.paths) * COMPACT_FRACTION))
    if index.delta_size <= limit:
        return index
    base = index.base
    live = [
        (path, base.counts[doc_id])
        for doc_id, path in enumerate(base.paths)
        if path not in index.removed
    ]
    live.extend(index.added.items())
    segment = build_segment(live)
    return LexicalIndex(segment, Map(), Map(), len(segment.paths), segment.total_length)
