"""Retrieval evaluation: BEIR corpora as memory files, ranking metrics, the harness."""

from memhtml.eval.beir import BeirDoc, doc_id_of_path, memory_path, render_doc
from memhtml.eval.harness import (
    ALL_ARMS,
    RECALL_DEEP_K,
    ArmScores,
    EvalArm,
    EvalReport,
    evaluate_beir,
    import_beir,
    rank_paths,
    render_report_json,
    render_table,
    report_json,
    vector_ranking,
)
from memhtml.eval.metrics import mrr_at_k, ndcg_at_k, recall_at_k

__all__ = [
    "ALL_ARMS",
    "RECALL_DEEP_K",
    "ArmScores",
    "BeirDoc",
    "EvalArm",
    "EvalReport",
    "doc_id_of_path",
    "evaluate_beir",
    "import_beir",
    "memory_path",
    "mrr_at_k",
    "ndcg_at_k",
    "rank_paths",
    "recall_at_k",
    "render_doc",
    "render_report_json",
    "render_table",
    "report_json",
    "vector_ranking",
]
