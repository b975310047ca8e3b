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

import math
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import Stemmer
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


_ASCII_BREAKS = str.maketrans({chr(c): " " for c in range(128)
                               if not (chr(c).isalnum() or chr(c) == "_")})
"""Every ASCII character that is not a word character, to a space."""


def words_of(text: str) -> list[str]:
    """``text`` lowercased, as its runs of word characters (``\\w+``). An ASCII text
    (most of a store) is cut by ``translate`` and ``split``, which run in C over the
    whole string, several times faster than the pattern building a match a word;
    in ASCII, ``\\w`` is exactly letters, digits and underscore, so the words are the
    same (a hypothesis law holds the two equal)."""
    lowered = text.lower()
    if lowered.isascii():
        return lowered.translate(_ASCII_BREAKS).split()
    return _WORD.findall(lowered)


def tokenize(text: str) -> list[str]:
    """Lowercase, split on anything that is not a letter, number or underscore, and
    drop stop words. Unicode-aware, so ``café`` stays one token."""
    # In Python's Unicode mode \w is exactly letters, numbers and underscore.
    return [t for t in words_of(text) if t not in STOP_WORDS]


STEMMER = "english"
"""The Snowball stemmer every indexed token and query token goes through, after the
stop words are dropped (so ``no`` and ``not`` still reach it and stay).

Measured on SciFact's train queries (809, docs/benchmarks.md): the lexical arm's
nDCG@10 rose from 0.6658 to 0.7007 and the hybrid with the local model from 0.6964
to 0.7126, while the vocabulary shrank by a quarter and the postings by 7%. What it
costs is exactness of word form: ``settings`` finds ``setting``."""

_stemmers = threading.local()


def stemmer_release() -> str:
    """The stemmer library's release: part of what a stored index's terms depend on."""
    return str(Stemmer.version())


def stem_words(tokens: list[str]) -> list[str]:
    """Each token's stem, one for one. A stemmer object is not safe to share between
    threads, so each thread keeps its own."""
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = Stemmer.Stemmer(STEMMER)
    stems: list[str] = stemmer.stemWords(tokens)
    return stems


def index_terms(text: str) -> list[str]:
    """The terms the lexical index holds for ``text`` and a query is matched by: the
    stems of ``tokenize``, in order, one per token (so a document's length is its
    token count either way)."""
    return stem_words(tokenize(text))


def document_text(record: MemoryRecord) -> str:
    """What the lexical arm indexes for a record: title, claim and body."""
    return f"{record.title}\n{record.claim}\n{record.body_text}"


def same_document_text(one: MemoryRecord, other: MemoryRecord) -> bool:
    """Whether two records give the lexical arm the same document: the three fields
    ``document_text`` joins, compared one by one (stricter than comparing the joined
    text, which a newline moved between title and claim would leave equal)."""
    return (one.title == other.title and one.claim == other.claim
            and one.body_text == other.body_text)


@dataclass(frozen=True, slots=True)
class TermCounts:
    """One document's token counts and length (tokens after stop-word removal)."""

    counts: Mapping[str, int]
    length: int


_COUNTED_AHEAD: dict[int, tuple[MemoryRecord, TermCounts]] = {}
"""Counts already taken, by the identity of the record they were taken of (held with
it, so the identity cannot be another record's while it is here): ``counted_ahead``."""


@contextmanager
def counted_ahead(counted: Iterable[tuple[MemoryRecord, TermCounts]]) -> Iterator[None]:
    """Within the block, ``term_counts`` of one of these very records (the same object)
    is the counts given with it rather than counted again: the markdown import counts
    each new memory's terms where it renders the file, on every core. ``term_counts``
    is a pure function of the record, so the counts are the ones it would give."""
    added = {id(record): (record, counts) for record, counts in counted
             if id(record) not in _COUNTED_AHEAD}
    _COUNTED_AHEAD.update(added)
    try:
        yield
    finally:
        for key in added:
            _COUNTED_AHEAD.pop(key, None)


def term_counts(record: MemoryRecord) -> TermCounts:
    """The record's document (``document_text``) as stems and how often each occurs,
    stop words left out."""
    if _COUNTED_AHEAD:
        known = _COUNTED_AHEAD.get(id(record))
        if known is not None and known[0] is record:
            return known[1]
    return _counted(record)


def _counted(record: MemoryRecord) -> TermCounts:
    words = Counter(words_of(document_text(record)))
    for word in STOP_WORDS.intersection(words):
        del words[word]
    # Stem each distinct word once; two words with one stem add up.
    counts: Counter[str] = Counter()
    for stem, count in zip(stem_words(list(words)), words.values(), strict=True):
        counts[stem] += count
    return TermCounts(counts, sum(counts.values()))


BM25_K1 = 1.2
BM25_B = 0.75


def bm25_weight(documents: int, df: int) -> float:
    """A token's weight: its Robertson-Sparck Jones idf (with +1, never negative)
    times ``k1 + 1``. The one place it is computed, so ``segment_impacts`` and the
    weights a query forms are the same floats."""
    idf = math.log(1.0 + (documents - df + 0.5) / (df + 0.5))
    return idf * (BM25_K1 + 1.0)


def mean_length(total_length: int, documents: int) -> float:
    """The average document length BM25 normalizes by (0 for no documents)."""
    return total_length / documents if documents else 0.0


def bm25_norms(average_length: float) -> tuple[float, float]:
    """``(norm_a, norm_b)`` of BM25's saturation ``tf / (tf + norm_a + norm_b * length)``
    at a given average length: ``k1 * (1 - b)`` and ``k1 * b / average``."""
    return BM25_K1 * (1.0 - BM25_B), BM25_K1 * BM25_B / (average_length or 1.0)


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class Segment:
    """Immutable compressed postings over a fixed, path-sorted set of documents.

    Never mutated after construction (its arrays are read-only), so every version
    built on it may share it. Build one with ``make_segment``.
    """

    paths: tuple[str, ...]
    doc_index: Mapping[str, int]
    lengths: npt.NDArray[np.float64]
    vocab: Mapping[str, tuple[int, int]]
    """token -> (start, end) into ``doc_ids``/``tfs``; postings ascend by doc id."""
    doc_ids: npt.NDArray[np.int32]
    tfs: npt.NDArray[np.int32]
    """Term frequencies as integers: numpy turns each into the same float64 inside
    the BM25 arithmetic, and they take half the room of floats."""
    total_length: int

    def df(self, token: str) -> int:
        span = self.vocab.get(token)
        return 0 if span is None else span[1] - span[0]


def make_segment(
    paths: tuple[str, ...],
    lengths: npt.NDArray[np.float64],
    vocab: Mapping[str, tuple[int, int]],
    doc_ids: npt.NDArray[np.int32],
    tfs: npt.NDArray[np.int32],
    total_length: int,
) -> Segment:
    """A segment from its postings (made read-only), with its doc index."""
    for array in (lengths, doc_ids, tfs):
        array.setflags(write=False)
    return Segment(paths, {p: i for i, p in enumerate(paths)}, lengths, vocab, doc_ids, tfs,
                   total_length)


def segment_impacts(segment: Segment) -> npt.NDArray[np.float64]:
    """Every posting's whole share of a BM25 score over exactly ``segment``'s documents:
    ``bm25_weight(documents, df) * tf / (tf + norm_a + norm_b * length)`` at its own
    average length, as bm25s stores its "eager" scores. The very floats a query
    computes for the postings it touches (same operations, same order), so a search
    may read them from here or compute them, and rank the same.

    Not part of the segment: at 100,000 documents the array and its temporaries are
    several hundred megabytes and most of a second, which a command running one
    query would pay for nothing (``search`` builds it once a process searches a
    segment repeatedly)."""
    documents = len(segment.paths)
    norm_a, norm_b = bm25_norms(mean_length(segment.total_length, documents))
    spans = sorted(segment.vocab.values())
    weights = np.repeat([bm25_weight(documents, end - start) for start, end in spans],
                        [end - start for start, end in spans]).astype(np.float64, copy=False)
    tfs = segment.tfs
    impacts = weights * (tfs / (tfs + norm_a + norm_b * segment.lengths[segment.doc_ids]))
    impacts.setflags(write=False)
    return impacts


def _segment_from_tokens(paths: tuple[str, ...], token_lists: list[list[str]], *,
                         stem: bool) -> Segment:
    """Postings from each document's (stop-word-free) token list, counted with numpy;
    with ``stem``, the tokens are words and are indexed by their stems (else they are
    terms already: stemming is not idempotent, so a term is never stemmed again).

    Every (document, token) occurrence becomes one integer key; one ``np.unique``
    counts term frequencies and one stable sort groups them by token, which is
    several times faster than growing a Python list per token. Stemming goes over
    the distinct words only (a few tens of thousands however large the corpus) and
    renumbers the occurrences in one numpy gather.
    """
    vocab_ids: dict[str, int] = {}
    ids: list[int] = []
    for tokens in token_lists:
        ids.extend([vocab_ids.setdefault(t, len(vocab_ids)) for t in tokens])
    lengths = np.array([len(tokens) for tokens in token_lists], dtype=np.int64)
    occurrences = np.array(ids, dtype=np.int64)
    if stem and vocab_ids:
        stem_ids: dict[str, int] = {}
        to_stem = np.array([stem_ids.setdefault(term, len(stem_ids))
                            for term in stem_words(list(vocab_ids))], dtype=np.int64)
        occurrences = to_stem[occurrences]
        vocab_ids = stem_ids
    words = len(vocab_ids)
    if not ids:
        return make_segment(paths, lengths.astype(np.float64), {}, np.zeros(0, np.int32),
                            np.zeros(0, np.int32), 0)
    # Renumber tokens in sorted order so a token's postings sit at a fixed, sorted slot.
    ordered = sorted(vocab_ids)
    rank = np.empty(words, dtype=np.int64)
    rank[[vocab_ids[t] for t in ordered]] = np.arange(words)
    token_of = rank[occurrences]
    doc_of = np.repeat(np.arange(len(paths), dtype=np.int64), lengths)
    keys, counts = np.unique(token_of * len(paths) + doc_of, return_counts=True)
    tokens_sorted = keys // len(paths)
    starts = np.searchsorted(tokens_sorted, np.arange(words + 1))
    vocab = {t: (int(starts[i]), int(starts[i + 1])) for i, t in enumerate(ordered)}
    return make_segment(
        paths=paths,
        lengths=lengths.astype(np.float64),
        vocab=vocab,
        doc_ids=(keys % len(paths)).astype(np.int32),
        tfs=counts.astype(np.int32),
        total_length=int(lengths.sum()),
    )


def build_segment(docs: Iterable[tuple[str, TermCounts]]) -> Segment:
    """Compress documents given as term counts. Doc ids follow path order."""
    ordered = sorted(docs, key=lambda item: item[0])
    token_lists = [
        [token for token, tf in tc.counts.items() for _ in range(tf)] for _, tc in ordered
    ]
    return _segment_from_tokens(tuple(path for path, _ in ordered), token_lists, stem=False)


EMPTY_SEGMENT = build_segment(())


@dataclass(frozen=True, slots=True, eq=False)
class LexicalIndex:
    """Active records only: a shared base segment, plus this version's delta.

    A plain value: nothing is computed into it after construction. What a search
    reuses is keyed by the shared base segment (``segment_impacts``).
    """

    base: Segment
    removed: Map[str, TermCounts] = field(default_factory=Map)
    """Base paths no longer live (edited or gone), with the counts they had."""
    added: Map[str, TermCounts] = field(default_factory=Map)
    """Live documents outside the base, by path."""
    documents: int = 0
    total_length: int = 0

    @property
    def average_length(self) -> float:
        return mean_length(self.total_length, self.documents)

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
        for tc in self.removed.values():
            if token in tc.counts:
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
        base = self.base
        for doc_id, path in enumerate(base.paths):
            if path not in self.removed:
                lengths[path] = int(base.lengths[doc_id])
        for token, (start, end) in base.vocab.items():
            for doc_id, tf in zip(base.doc_ids[start:end].tolist(), base.tfs[start:end].tolist(),
                                  strict=True):
                path = base.paths[doc_id]
                if path not in self.removed:
                    postings.setdefault(token, {})[path] = int(tf)
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


def build_lexical(records: Iterable[MemoryRecord],
                  tokens: Mapping[str, list[str]] | None = None) -> LexicalIndex:
    """A fresh index whose base holds every given (active) record.

    ``tokens`` may hold ``tokenize(document_text(record))`` by path for some records,
    computed ahead (a load tokenizes where it parses, on every core); a record it
    lacks is tokenized here. The index is the same either way."""
    ordered = sorted(records, key=lambda r: r.path)
    known = tokens or {}
    segment = _segment_from_tokens(
        tuple(r.path for r in ordered),
        [known[r.path] if r.path in known else tokenize(document_text(r)) for r in ordered],
        stem=True,
    )
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


def remove_from_lexical(index: LexicalIndex, record: MemoryRecord) -> LexicalIndex:
    """Drop one live document; a path that is not live is a no-op."""
    path = record.path
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
            index.removed.set(path, term_counts(record)),
            index.added,
            index.documents - 1,
            index.total_length - length,
        )
    )


def compact_limit(index: LexicalIndex) -> int:
    """The delta size past which the next change compacts ``index`` into a new base."""
    return max(COMPACT_MINIMUM, int(len(index.base.paths) * COMPACT_FRACTION))


def _maybe_compact(index: LexicalIndex) -> LexicalIndex:
    if index.delta_size <= compact_limit(index):
        return index
    segment = compacted_segment(index)
    return LexicalIndex(segment, Map(), Map(), len(segment.paths), segment.total_length)


def compacted_segment(index: LexicalIndex) -> Segment:
    """``index``'s live documents as one segment: ``build_segment`` of them, built
    from the base's postings arrays and the delta's counts.

    The base's live postings are taken as arrays (token, document, tf), the delta's
    appended, every token and document renumbered in sorted order, and one sort by
    (token, document) lays them out; a document's length is the sum of its term
    frequencies, as ``build_segment`` counts it. Going through Python dicts of every
    posting instead (the postings of ``materialize``, then one dict per document,
    then one token list per document) held about 80 MB at once at 4,000 memories and
    took seconds; glibc kept most of that after it was freed, so a long-running
    server grew by a compaction's peak each time its index compacted."""
    base = index.base
    live = np.ones(len(base.paths), dtype=bool)
    for path in index.removed:
        live[base.doc_index[path]] = False
    spans = sorted(base.vocab.items(), key=lambda item: item[1][0])
    base_tokens = [token for token, _ in spans]
    widths = np.array([end - start for _, (start, end) in spans], dtype=np.int64)
    at = (np.concatenate([np.arange(start, end) for _, (start, end) in spans])
          if spans else np.zeros(0, np.int64))
    token_of = np.repeat(np.arange(len(spans), dtype=np.int64), widths)
    kept = live[base.doc_ids[at]]
    base_tok, base_doc, base_tf = token_of[kept], base.doc_ids[at][kept], base.tfs[at][kept]

    added_paths = list(index.added.keys())
    added_tok: list[str] = []
    added_doc: list[int] = []
    added_tf: list[int] = []
    for number, path in enumerate(added_paths):
        for token, tf in index.added[path].counts.items():
            if tf > 0:
                added_tok.append(token)
                added_doc.append(number)
                added_tf.append(tf)

    base_live_tokens = np.zeros(len(spans), dtype=bool)
    base_live_tokens[base_tok] = True
    words = sorted({base_tokens[i] for i in np.flatnonzero(base_live_tokens).tolist()}
                   | set(added_tok))
    word_rank = {word: rank for rank, word in enumerate(words)}
    paths = tuple(sorted([p for p, alive in zip(base.paths, live.tolist(), strict=True)
                          if alive] + added_paths))
    path_rank = {path: rank for rank, path in enumerate(paths)}

    new_token_of_base = np.array([word_rank.get(t, -1) for t in base_tokens], dtype=np.int64)
    new_doc_of_base = np.array([path_rank.get(p, -1) for p in base.paths], dtype=np.int64)
    tokens = np.concatenate([new_token_of_base[base_tok],
                             np.array([word_rank[t] for t in added_tok], dtype=np.int64)])
    docs = np.concatenate([new_doc_of_base[base_doc],
                           np.array([path_rank[added_paths[d]] for d in added_doc],
                                    dtype=np.int64)])
    tfs = np.concatenate([base_tf.astype(np.int64), np.array(added_tf, dtype=np.int64)])
    documents = len(paths)
    if documents == 0:
        return EMPTY_SEGMENT
    lengths = np.bincount(docs, weights=tfs, minlength=documents).astype(np.float64)
    keys = tokens * documents + docs
    order = np.argsort(keys, kind="stable")
    keys, tfs = keys[order], tfs[order]
    starts = np.searchsorted(keys // documents, np.arange(len(words) + 1))
    return make_segment(
        paths=paths,
        lengths=lengths,
        vocab={t: (int(starts[i]), int(starts[i + 1])) for i, t in enumerate(words)},
        doc_ids=(keys % documents).astype(np.int32),
        tfs=tfs.astype(np.int32),
        total_length=int(tfs.sum()),
    )
