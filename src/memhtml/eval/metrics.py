"""Ranking metrics over one query: nDCG@k, Recall@k, MRR@k.

Conventions follow trec_eval as BEIR reports it: the gain of a document is its
graded relevance (linear, not 2^rel - 1), the discount is log2(rank + 1), the ideal
ranking is built from the qrels alone, and a relevance of zero or below counts as
not relevant. A document listed twice in a ranking counts at its first place only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence


def _first_k(ranked: Sequence[str], k: int) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for doc in ranked:
        if len(out) >= k:
            break
        if doc not in seen:
            seen.add(doc)
            out.append(doc)
    return out


def dcg(gains: Iterable[float]) -> float:
    """Discounted cumulative gain of gains in rank order (rank 1 first)."""
    return sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, start=1))


def ndcg_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """DCG of the first ``k`` of ``ranked`` over the DCG of the best possible ``k``.

    0.0 when the query has no relevant document.
    """
    ideal = dcg(sorted((rel for rel in qrels.values() if rel > 0), reverse=True)[:k])
    if ideal <= 0.0:
        return 0.0
    actual = dcg(max(qrels.get(doc, 0), 0) for doc in _first_k(ranked, k))
    return actual / ideal


def recall_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Share of the relevant documents found in the first ``k``; 0.0 with none relevant."""
    relevant = {doc for doc, rel in qrels.items() if rel > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(_first_k(ranked, k))) / len(relevant)


def mrr_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """1 / rank of the first relevant document within the first ``k``, else 0.0."""
    for rank, doc in enumerate(_first_k(ranked, k), start=1):
        if qrels.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def mean(values: Iterable[float]) -> float:
    """The arithmetic mean; 0.0 for no values."""
    items = list(values)
    return math.fsum(items) / len(items) if items else 0.0
