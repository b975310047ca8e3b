"""nDCG@k, Recall@k and MRR@k against cases worked out by hand."""

from __future__ import annotations

import math

import pytest

from memhtml.eval.metrics import dcg, mean, mrr_at_k, ndcg_at_k, recall_at_k

LOG2_3 = math.log2(3)  # the discount at rank 2


def test_dcg_discounts_by_log2_of_rank_plus_one() -> None:
    assert dcg([1, 1, 1]) == pytest.approx(1 + 1 / LOG2_3 + 1 / 2)
    assert dcg([]) == 0.0


def test_ndcg_binary_relevance() -> None:
    # Relevant at ranks 1 and 3: 1 + 1/2; ideal puts both first: 1 + 1/log2(3).
    got = ndcg_at_k(["a", "b", "c"], {"a": 1, "c": 1}, 3)
    assert got == pytest.approx(1.5 / (1 + 1 / LOG2_3))
    assert got == pytest.approx(0.919721, abs=1e-6)


def test_ndcg_graded_relevance_uses_linear_gain() -> None:
    # x (1) then y (2): 1 + 2/log2(3); ideal y then x: 2 + 1/log2(3).
    got = ndcg_at_k(["x", "y"], {"x": 1, "y": 2}, 2)
    assert got == pytest.approx((1 + 2 / LOG2_3) / (2 + 1 / LOG2_3))
    assert got == pytest.approx(0.859719, abs=1e-6)


def test_ndcg_ideal_comes_from_the_qrels_not_the_ranking() -> None:
    # b is relevant but never retrieved: the ideal still counts it.
    assert ndcg_at_k(["a"], {"a": 1, "b": 1}, 10) == pytest.approx(1 / (1 + 1 / LOG2_3))


def test_ndcg_ideal_is_cut_at_k() -> None:
    # Three relevant, k = 1: a perfect first hit scores 1.
    assert ndcg_at_k(["a", "b"], {"a": 1, "b": 1, "c": 1}, 1) == 1.0


def test_ndcg_only_the_first_k_count() -> None:
    assert ndcg_at_k(["n1", "n2", "a"], {"a": 1}, 2) == 0.0
    assert ndcg_at_k(["n1", "n2", "a"], {"a": 1}, 3) == pytest.approx(0.5)


def test_ndcg_without_relevant_documents_is_zero() -> None:
    assert ndcg_at_k(["a"], {}, 10) == 0.0
    assert ndcg_at_k(["a"], {"a": 0, "b": -1}, 10) == 0.0


def test_non_positive_relevance_is_not_relevant() -> None:
    qrels = {"a": -1, "b": 0, "c": 1}
    assert ndcg_at_k(["a", "b", "c"], qrels, 3) == pytest.approx(0.5)
    assert recall_at_k(["a", "b"], qrels, 2) == 0.0
    assert mrr_at_k(["a", "b", "c"], qrels, 3) == pytest.approx(1 / 3)


def test_a_repeated_document_counts_once() -> None:
    qrels = {"a": 1, "b": 1}
    assert ndcg_at_k(["a", "a"], qrels, 2) == pytest.approx(1 / (1 + 1 / LOG2_3))
    # The repeat does not take a place: b is still within the first two.
    assert recall_at_k(["a", "a", "b"], qrels, 2) == 1.0


def test_recall_divides_by_every_relevant_document() -> None:
    qrels = {"a": 1, "b": 1, "c": 1, "d": 0}
    assert recall_at_k(["a", "x", "b"], qrels, 2) == pytest.approx(1 / 3)
    assert recall_at_k(["a", "x", "b"], qrels, 3) == pytest.approx(2 / 3)
    assert recall_at_k([], qrels, 10) == 0.0
    assert recall_at_k(["a"], {}, 10) == 0.0


def test_mrr_is_the_reciprocal_rank_of_the_first_relevant_within_k() -> None:
    assert mrr_at_k(["x", "y", "a", "b"], {"a": 1, "b": 2}, 3) == pytest.approx(1 / 3)
    assert mrr_at_k(["x", "y", "a"], {"a": 1}, 2) == 0.0
    assert mrr_at_k(["a"], {"a": 1}, 10) == 1.0


def test_mean() -> None:
    assert mean([]) == 0.0
    assert mean([0.5, 1.0, 0.0]) == pytest.approx(0.5)
