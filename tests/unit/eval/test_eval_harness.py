"""The BEIR harness over a real store: import, rank per arm, score, render."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import pytest
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.embedders import HashingEmbedder
from memhtml.adapters.git import PygitService
from memhtml.eval.beir import BeirDoc, doc_id_of_path, memory_path
from memhtml.eval.harness import (
    EvalReport,
    evaluate_beir,
    import_beir,
    rank_paths,
    render_report_json,
    render_table,
    vector_ranking,
)
from memhtml.head import HeadVersion, empty_vector_cache, fill_vectors, load_head, vector_text_of

AT = datetime(2026, 1, 1, tzinfo=UTC)

DOCS = [
    BeirDoc("d1", "Vitamin D and bones", "Vitamin D supplements raise bone density in adults. "
            "The effect was seen after one year."),
    BeirDoc("d2", "Sleep and memory", "Sleep after learning improves memory consolidation. "
            "Naps helped as well."),
    BeirDoc("d3", "Coffee and the heart", "Moderate coffee intake does not raise heart risk. "
            "Large cohorts were followed."),
    BeirDoc("d4", "Exercise and mood", "Regular aerobic exercise lowers depressive symptoms. "
            "Trials lasted twelve weeks."),
]
QUERIES = {"q1": "does vitamin d raise bone density", "q2": "sleep improves memory",
           "q3": "no judged documents", "q4": "coffee heart risk"}
QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1, "d4": 0}, "q4": {"d3": 2}, "q5": {"d1": 1}}


@pytest.fixture(scope="module")
def version(tmp_path_factory: pytest.TempPathFactory) -> HeadVersion:
    git = unsafe_perform_io(PygitService.init(tmp_path_factory.mktemp("beir")).unwrap())
    sha = unsafe_perform_io(import_beir(git, [*DOCS, DOCS[0]], AT).unwrap())
    return unsafe_perform_io(load_head(git, sha).unwrap())


def hashing_vectors(version: HeadVersion) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    embedder = HashingEmbedder(64)
    filled = unsafe_perform_io(fill_vectors(version, empty_vector_cache(embedder.space),
                                            embedder).unwrap())
    vectors = dict(filled.cache.vectors.items())
    queries = {qid: embedder.vector_of(text) for qid, text in QUERIES.items()}
    return vectors, queries


def test_import_makes_one_memory_per_document(version: HeadVersion) -> None:
    assert sorted(version.paths()) == sorted(memory_path(doc) for doc in DOCS)
    assert not version.skipped_files
    record = version.get(memory_path(DOCS[0]))
    assert record is not None
    assert record.title == "Vitamin D and bones"
    assert record.claim == "Vitamin D supplements raise bone density in adults."
    assert "after one year" in vector_text_of(record)


def test_lexical_arm_finds_each_judged_document(version: HeadVersion) -> None:
    report = evaluate_beir(version, QUERIES, QRELS, doc_id_of_path, arms=("lexical",))
    # q3 has no qrels and q5 no text: two queries count.
    assert report.queries == 3
    assert report.documents == 4
    lexical = report.arm("lexical")
    assert lexical is not None
    assert lexical.ndcg_at_k == 1.0
    assert lexical.mrr_at_k == 1.0
    assert lexical.recall_at_k == 1.0
    assert lexical.recall_at_100 == 1.0
    assert report.arm("vector") is None


def test_vector_arm_ranks_by_cosine(version: HeadVersion) -> None:
    vectors, queries = hashing_vectors(version)
    query = queries["q2"]
    expected = sorted(
        version.paths(),
        key=lambda p: (-float(np.dot(vectors[version.get(p).content_hash], query)), p),  # type: ignore[union-attr]
    )
    assert vector_ranking(version, vectors, query, 10) == expected
    assert vector_ranking(version, vectors, query, 2) == expected[:2]
    assert rank_paths(version, "vector", "ignored", 10, vectors, query) == expected


def test_all_arms_report(version: HeadVersion) -> None:
    vectors, queries = hashing_vectors(version)
    report = evaluate_beir(version, QUERIES, QRELS, doc_id_of_path,
                           query_vectors=queries, vectors=vectors)
    assert [s.arm for s in report.arms] == ["lexical", "vector", "hybrid"]
    for scores in report.arms:
        for value in (scores.ndcg_at_k, scores.recall_at_k, scores.recall_at_100,
                      scores.mrr_at_k):
            assert 0.0 <= value <= 1.0
    hybrid = report.arm("hybrid")
    assert hybrid is not None
    assert hybrid.recall_at_100 == 1.0


def test_vector_arms_need_vectors(version: HeadVersion) -> None:
    with pytest.raises(ValueError, match="need vectors"):
        evaluate_beir(version, QUERIES, QRELS, doc_id_of_path, arms=("vector",))
    vectors, queries = hashing_vectors(version)
    del queries["q1"]
    with pytest.raises(ValueError, match="no query vector"):
        evaluate_beir(version, QUERIES, QRELS, doc_id_of_path, arms=("hybrid",),
                      query_vectors=queries, vectors=vectors)


def test_renderers(version: HeadVersion) -> None:
    report = evaluate_beir(version, QUERIES, QRELS, doc_id_of_path, arms=("lexical",))
    table = render_table(report).splitlines()
    assert table[0] == "3 queries over 4 documents"
    assert table[1].split() == ["arm", "nDCG@10", "Recall@5", "Recall@10", "Recall@100",
                                "MRR@10"]
    assert table[2].split() == ["lexical", "1.0000", "1.0000", "1.0000", "1.0000", "1.0000"]
    data = json.loads(render_report_json(report))
    assert data == {"k": 10, "queries": 3, "documents": 4,
                    "arms": [{"arm": "lexical", "ndcg_at_k": 1.0, "recall_at_k": 1.0,
                              "recall_at_100": 1.0, "mrr_at_k": 1.0,
                              "recall_at_5": 1.0}]}


def test_report_arm_lookup() -> None:
    assert EvalReport(10, 0, 0, ()).arm("hybrid") is None


def test_path_round_trip() -> None:
    for doc in DOCS:
        assert doc_id_of_path(memory_path(doc)) == doc.doc_id
