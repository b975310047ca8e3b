"""BM25 over posting lists: a query touches only its own terms' postings.

That is the lookup-not-scan property as a data structure: the cost of a query
grows with how common its terms are, not with the size of the corpus.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import numpy.typing as npt

from memhtml.mdindex.channel import Scored, top_k
from memhtml.mdindex.corpus import Corpus
from memhtml.mdindex.text import tokenize

BM25_K1: Final = 1.2
BM25_B: Final = 0.75
BM25_NAME: Final = "bm25"


class BM25Channel:
    """Okapi BM25 with Lucene's smoothed idf."""

    __slots__ = ("_corpus", "_weights")

    def __init__(self, corpus: Corpus, k1: float = BM25_K1, b: float = BM25_B) -> None:
        self._corpus = corpus
        postings = corpus.postings
        lengths = np.fromiter(
            (c.length for c in corpus.chunks), dtype=np.float64, count=len(corpus.chunks)
        )
        norm = k1 * ((1.0 - b) + (b * lengths) / corpus.avg_len)
        tf = postings.frequencies.astype(np.float64)
        # Everything but the idf depends only on the (term, chunk) pair, so it
        # is computed once per posting here; a query multiplies by the idf and
        # sums, which halves the work of a long query.
        self._weights: npt.NDArray[np.float64] = tf * (k1 + 1.0) / (tf + norm[postings.ids])
        self._weights.flags.writeable = False

    @property
    def name(self) -> str:
        return BM25_NAME

    def idf(self, term: str) -> float:
        """Lucene's ``log(1 + (N - n + 0.5) / (n + 0.5))``, always positive.

        The classic form goes negative for a term in more than half the chunks,
        and a small, topically coherent memory corpus is full of those; a
        negative weight would rank a chunk lower for containing a query term.
        """
        n = self._corpus.df.get(term, 0)
        total = len(self._corpus.chunks)
        return math.log(1.0 + (total - n + 0.5) / (n + 0.5))

    def query(self, text: str, k: int) -> tuple[Scored, ...]:
        if k <= 0:
            return ()
        postings = self._corpus.postings
        ids: list[npt.NDArray[np.int32]] = []
        weights: list[npt.NDArray[np.float64]] = []
        # Each distinct term counts once: a membership query is a candidate's
        # own text, and a word it repeats is not extra evidence.
        for term in dict.fromkeys(tokenize(text)):
            row = postings.rows.get(term)
            if row is None:
                continue
            start, end = int(postings.offsets[row]), int(postings.offsets[row + 1])
            ids.append(postings.ids[start:end])
            weights.append(self.idf(term) * self._weights[start:end])
        if not ids:
            return ()
        # bincount adds each chunk's contributions in query-term order, the
        # same sums a term-by-term accumulation would give.
        scores = np.bincount(
            np.concatenate(ids), weights=np.concatenate(weights), minlength=len(self._corpus.chunks)
        ).astype(np.float64, copy=False)
        candidates = np.flatnonzero(scores)
        return top_k(candidates, scores[candidates], k)
