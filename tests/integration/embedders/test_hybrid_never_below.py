"""The hybrid search is never below its better arm: the local model on a tiny SciFact
collection, short memories and long ones.

A few dozen abstracts (the relevant ones of the first judged train queries, and as
many again that are not) are imported into a real store, once as they are and once
packed into sessions (``memhtml.eval.sessions``); each is embedded by passages with the
shipped model and every judged query is ranked by ``search_head`` with each arm. The
law of docs/design.md ("Fusion: never below the better arm") must hold on both:
hybrid nDCG@10 and Recall@5 at least the better arm's less 0.005. The full
collections are measured by ``python -m bench.retrieval`` (docs/benchmarks.md).

Skipped where the ``local`` extra or the SciFact data is missing.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.embedders import LocalEmbedder
from memhtml.adapters.git import PygitService
from memhtml.contracts.services import Vector
from memhtml.eval.beir import BeirDoc, doc_id_of_path, read_corpus, read_qrels, read_queries
from memhtml.eval.harness import EvalReport, evaluate_beir, import_beir
from memhtml.eval.sessions import build_sessions, session_qrels
from memhtml.head import empty_vector_cache, load_head
from memhtml.head.vectors import fill_passages

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
SCIFACT = Path(os.environ.get("MEMHTML_SCIFACT", ROOT.parent / "shared" / "data" / "scifact"))
QUERIES = 24
TOLERANCE = 0.005


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    pytest.importorskip("onnxruntime", reason="needs the 'local' extra")
    pytest.importorskip("tokenizers", reason="needs the 'local' extra")
    return LocalEmbedder()


@pytest.fixture(scope="module")
def split() -> tuple[list[BeirDoc], dict[str, str], dict[str, dict[str, int]]]:
    if not (SCIFACT / "corpus.jsonl").exists():
        pytest.skip(f"SciFact not found at {SCIFACT}; set MEMHTML_SCIFACT")
    queries = read_queries(SCIFACT / "queries-train.jsonl")
    qrels = read_qrels(SCIFACT / "qrels" / "train.tsv")
    chosen = sorted(q for q, rels in qrels.items() if q in queries
                    and any(r > 0 for r in rels.values()))[:QUERIES]
    wanted = {doc for q in chosen for doc, rel in qrels[q].items() if rel > 0}
    docs: list[BeirDoc] = []
    others = 0
    for doc in read_corpus(SCIFACT / "corpus.jsonl"):
        if doc.doc_id in wanted:
            docs.append(doc)
        elif others < len(wanted):
            docs.append(doc)
            others += 1
    return docs, {q: queries[q] for q in chosen}, {q: qrels[q] for q in chosen}


def _report(tmp: Path, embedder: LocalEmbedder, docs: list[BeirDoc], queries: dict[str, str],
            qrels: dict[str, dict[str, int]]) -> EvalReport:
    git = unsafe_perform_io(PygitService.init(tmp).unwrap())
    sha = unsafe_perform_io(import_beir(git, docs, datetime(2026, 1, 1, tzinfo=UTC)).unwrap())
    version = unsafe_perform_io(load_head(git, sha).unwrap())
    cache = unsafe_perform_io(fill_passages(version, empty_vector_cache(embedder.space),
                                            embedder).unwrap()).cache
    vectors: dict[str, Vector] = {q: unsafe_perform_io(embedder.embed_query(text).unwrap())
                                  for q, text in queries.items()}
    return evaluate_beir(version, queries, qrels, doc_id_of_path, query_vectors=vectors,
                         vectors=cache)


def _holds(report: EvalReport) -> None:
    lexical, vector, hybrid = (report.arm(name) for name in ("lexical", "vector", "hybrid"))
    assert lexical is not None and vector is not None and hybrid is not None
    assert report.queries == QUERIES
    for figure in ("ndcg_at_k", "recall_at_5"):
        best = max(getattr(lexical, figure), getattr(vector, figure))
        assert getattr(hybrid, figure) >= best - TOLERANCE, (figure, report)


def test_short_memories(tmp_path: Path, embedder: LocalEmbedder,
                        split: tuple[list[BeirDoc], dict[str, str], dict[str, dict[str, int]]]
                        ) -> None:
    docs, queries, qrels = split
    _holds(_report(tmp_path, embedder, docs, queries, qrels))


def test_long_memories(tmp_path: Path, embedder: LocalEmbedder,
                       split: tuple[list[BeirDoc], dict[str, str], dict[str, dict[str, int]]]
                       ) -> None:
    docs, queries, qrels = split
    sessions = build_sessions(docs)
    assert any(len(session.docs) > 1 for session in sessions)
    _holds(_report(tmp_path, embedder, [s.as_doc() for s in sessions], queries,
                   session_qrels(sessions, qrels)))
