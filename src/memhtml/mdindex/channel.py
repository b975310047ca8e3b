"""The channel seam: one ranking opinion over the chunks of a corpus.

This version ships ``bm25`` and ``trigram``. A semantic channel (exact cosine
over local embeddings) would implement the same Protocol and nothing upstream
would change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, slots=True)
class Scored:
    """One channel's opinion of one chunk.

    ``rank`` is 0-based in the channel's own ordering. ``score`` is native to
    the channel (BM25 is unbounded, Jaccard lies in [0, 1]) and is never
    compared across channels: fusion reads ranks only.
    """

    chunk: int
    rank: int
    score: float


class Channel(Protocol):
    """A deterministic ranking of chunks for a query text."""

    @property
    def name(self) -> str:
        """The name a caller selects the channel by, and receipts print."""
        ...

    def query(self, text: str, k: int) -> tuple[Scored, ...]:
        """The best ``k`` chunks, score descending, ties by ascending chunk id."""
        ...


def top_k(
    candidates: npt.NDArray[np.int64] | npt.NDArray[np.int32],
    scores: npt.NDArray[np.float64],
    k: int,
) -> tuple[Scored, ...]:
    """Rank candidate chunks: score descending, then chunk id ascending.

    Every channel ranks through here so no channel can leak an arbitrary order
    (hash order, partition order) into a result. ``scores`` is parallel to
    ``candidates``.
    """
    if k <= 0 or candidates.size == 0:
        return ()
    if candidates.size > k:
        # Keep everything tied with the k-th best score, so the id tie-break
        # below sees the whole tie rather than whichever members the partial
        # sort happened to keep.
        kth = np.partition(scores, candidates.size - k)[candidates.size - k]
        keep = scores >= kth
        candidates = candidates[keep]
        scores = scores[keep]
    order = np.lexsort((candidates, -scores))[:k]
    return tuple(
        Scored(int(chunk), rank, float(score))
        for rank, (chunk, score) in enumerate(
            zip(candidates[order].tolist(), scores[order].tolist(), strict=True)
        )
    )
