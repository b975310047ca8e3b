"""Character 3-gram Jaccard similarity between the query and every chunk.

It tolerates morphology and small rewording that whole-word BM25 misses
("anemometers" against "anemometer"). It is never on unless a caller names it,
and a caller should name it only once an evaluation on their corpus says it
helps: on the corpus the design was measured against, bm25 with trigram
ranked worse than bm25 alone.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from memhtml.mdindex.channel import Scored, top_k
from memhtml.mdindex.corpus import Corpus
from memhtml.mdindex.text import normalize

TRIGRAM_NAME: Final = "trigram"

_U64 = npt.NDArray[np.uint64]
_I64 = npt.NDArray[np.int64]


def trigrams(text: str) -> frozenset[str]:
    """The distinct 3-character substrings of text (characters, not bytes)."""
    return frozenset(text[i : i + 3] for i in range(len(text) - 2))


def _code_points(text: str) -> _U64:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)


def _encode(points: _U64) -> _U64:
    """One integer per trigram: three 21-bit code points side by side."""
    return (points[:-2] << np.uint64(42)) | (points[1:-1] << np.uint64(21)) | points[2:]


class TrigramChannel:
    """Ranks chunks by |Q ∩ C| / |Q ∪ C| over their sets of character trigrams.

    The sets are stored inverted (trigram -> chunks holding it), so a query
    counts its intersections with every chunk from the postings of its own
    trigrams; the result equals comparing the query's set with each chunk's
    set in turn, at a fraction of the cost.
    """

    __slots__ = ("_grams", "_offsets", "_owners", "_sizes")

    def __init__(self, corpus: Corpus) -> None:
        # Built when the channel is constructed, which happens only when a
        # caller names it; a bm25-only run never pays for it.
        texts = [c.text for c in corpus.chunks]
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        owner = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
        codes = _encode(_code_points("".join(texts)))
        # A trigram starting at i belongs to a chunk only if i + 2 is in it too.
        inside = owner[:-2] == owner[2:]
        codes, owner = codes[inside], owner[:-2][inside]
        # Stable, so chunk ids stay ascending within each trigram.
        order = np.argsort(codes, kind="stable")
        codes, owner = codes[order], owner[order]
        fresh = np.ones(codes.size, dtype=np.bool_)
        fresh[1:] = (codes[1:] != codes[:-1]) | (owner[1:] != owner[:-1])
        codes, owner = codes[fresh], owner[fresh]
        boundary = np.ones(codes.size, dtype=np.bool_)
        boundary[1:] = codes[1:] != codes[:-1]
        starts = np.flatnonzero(boundary)
        self._grams: _U64 = codes[starts]
        self._offsets: _I64 = np.r_[starts, codes.size].astype(np.int64)
        self._owners: _I64 = owner
        self._sizes: _I64 = np.bincount(owner, minlength=len(texts)).astype(np.int64)

    @property
    def name(self) -> str:
        return TRIGRAM_NAME

    def query(self, text: str, k: int) -> tuple[Scored, ...]:
        normalized = normalize(text)
        if k <= 0 or len(normalized) < 3:
            return ()
        query = np.unique(_encode(_code_points(normalized)))
        rows = np.searchsorted(self._grams, query)
        known = rows < self._grams.size
        rows = rows[known][self._grams[rows[known]] == query[known]]
        if rows.size == 0:
            return ()
        held = np.concatenate(
            [self._owners[self._offsets[r] : self._offsets[r + 1]] for r in rows.tolist()]
        )
        shared = np.bincount(held, minlength=self._sizes.size)
        candidates = np.flatnonzero(shared)
        inter = shared[candidates]
        scores = inter / (query.size + self._sizes[candidates] - inter)
        return top_k(candidates, scores.astype(np.float64), k)
