"""Retrieval evaluation on a BEIR split: import, rank per arm, score, render.

The corpus goes into a real store as memory files in one commit, and every query is
ranked by ``search_head`` over the loaded version, so the figures are those of the
search a user gets, caps and fusion included. Services (git, vectors) come in from
the caller; this module never embeds.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Literal

import numpy.typing as npt
from returns.io import IOResult

from memhtml.contracts.errors import GitError
from memhtml.contracts.services import PathChange, Repository, Signature
from memhtml.contracts.view import HeadView
from memhtml.eval.beir import BeirDoc, memory_path, render_doc
from memhtml.eval.metrics import mean, mrr_at_k, ndcg_at_k, recall_at_k
from memhtml.head.indexes import indexes_of, is_active
from memhtml.head.search import (
    VECTOR_ARM_LIMIT,
    VECTOR_WEIGHT,
    SearchHeadInput,
    arm_ranks,
    search_head,
)
from memhtml.head.vector_arm import HeadVectors, vector_scores

EvalArm = Literal["lexical", "vector", "hybrid"]
ALL_ARMS: tuple[EvalArm, ...] = ("lexical", "vector", "hybrid")
WEIGHTED_PREFIX = "hybrid w="
"""The arm name of a weighted fusion variant: ``hybrid w=0.5``."""
RECALL_DEEP_K = 100
RECALL_SHALLOW_K = 5
"""The depth of the recall a reader of five answers gets: the figure the long-memory
collection is judged by (a gold session in the top 5)."""
"""The depth of the second recall figure. Each arm of ``search_head`` keeps its best
40 (LEXICAL_ARM_LIMIT, VECTOR_ARM_LIMIT), so a single arm's Recall@100 is its
Recall@40, and the hybrid's is bounded by the union of the two arms' 40."""

IMPORT_AUTHOR = Signature("memhtml eval", "eval@memhtml.invalid")
IMPORT_MESSAGE = "eval: import a BEIR corpus"


# --------------------------------------------------------------------------- import


def beir_changes(docs: Iterable[BeirDoc]) -> list[PathChange]:
    """One memory file per document, sorted by path. A repeated document id keeps its
    first document, so the import never depends on which duplicate came last."""
    files: dict[str, bytes] = {}
    for doc in docs:
        path = memory_path(doc)
        if path not in files:
            files[path] = render_doc(doc).encode("utf-8")
    return [PathChange(path, files[path]) for path in sorted(files)]


def import_beir(
    git: Repository,
    docs: Iterable[BeirDoc],
    at: datetime,
    ref: str = "refs/heads/main",
    parent: str | None = None,
    author: Signature = IMPORT_AUTHOR,
) -> IOResult[str, GitError]:
    """Commit a corpus as memory files, in one commit on ``ref``; the commit's sha."""
    return git.commit(ref, parent, beir_changes(docs), IMPORT_MESSAGE, author, at)


# --------------------------------------------------------------------------- report


@dataclass(frozen=True, slots=True)
class ArmScores:
    """Mean figures of one arm over the evaluated queries. ``arm`` is an ``EvalArm``,
    or ``hybrid w=<weight>`` for a weighted fusion variant."""

    arm: str
    ndcg_at_k: float
    recall_at_k: float
    recall_at_100: float
    mrr_at_k: float
    recall_at_5: float = 0.0


@dataclass(frozen=True, slots=True)
class EvalReport:
    k: int
    queries: int
    """Queries evaluated: those with text and at least one relevant document."""
    documents: int
    """Active records in the version searched."""
    arms: tuple[ArmScores, ...]

    def arm(self, name: str) -> ArmScores | None:
        return next((scores for scores in self.arms if scores.arm == name), None)

    def best_vector_weight(self) -> float | None:
        """The vector weight whose hybrid scored the best nDCG@k on this split (ties
        go to the weight nearest the spec's 1.0, then the lower), None when no
        weighted variant was run."""
        found = [(float(s.arm.removeprefix(WEIGHTED_PREFIX)), s.ndcg_at_k)
                 for s in self.arms if s.arm.startswith(WEIGHTED_PREFIX)]
        if not found:
            return None
        return min(found, key=lambda pair: (-pair[1], abs(pair[0] - 1.0), pair[0]))[0]


def report_json(report: EvalReport) -> dict[str, object]:
    """The report as plain JSON data (figures rounded to four places)."""
    arms = []
    for scores in report.arms:
        row = asdict(scores)
        arms.append({key: round(value, 4) if isinstance(value, float) else value
                     for key, value in row.items()})
    return {"k": report.k, "queries": report.queries, "documents": report.documents,
            "arms": arms}


def render_report_json(report: EvalReport) -> str:
    return json.dumps(report_json(report), indent=2, sort_keys=True)


def render_table(report: EvalReport) -> str:
    """A fixed-width table, one row per arm."""
    k = report.k
    header = ("arm", f"nDCG@{k}", f"Recall@{RECALL_SHALLOW_K}", f"Recall@{k}",
              f"Recall@{RECALL_DEEP_K}", f"MRR@{k}")
    rows = [
        (s.arm, f"{s.ndcg_at_k:.4f}", f"{s.recall_at_5:.4f}", f"{s.recall_at_k:.4f}",
         f"{s.recall_at_100:.4f}", f"{s.mrr_at_k:.4f}")
        for s in report.arms
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))
        return "  ".join((first, *rest))

    title = f"{report.queries} queries over {report.documents} documents"
    return "\n".join([title, line(header), *(line(row) for row in rows)])


# --------------------------------------------------------------------------- ranking


def vector_ranking(
    view: HeadView, vectors: HeadVectors, query_vector: npt.ArrayLike, limit: int
) -> list[str]:
    """The vector arm of ``search_head`` on its own: active records by cosine, capped
    at VECTOR_ARM_LIMIT as in the fused search, ties by path, best ``limit`` paths."""
    scored = vector_scores(indexes_of(view), vectors, query_vector)
    return [path for path, _rank in arm_ranks(scored, VECTOR_ARM_LIMIT)][: max(limit, 0)]


def rank_paths(
    view: HeadView,
    arm: EvalArm,
    query: str,
    limit: int,
    vectors: HeadVectors | None = None,
    query_vector: npt.ArrayLike | None = None,
    vector_weight: float = VECTOR_WEIGHT,
) -> list[str]:
    """The paths one arm returns for a query, best first (``vector_weight``: the
    hybrid's fusion weight for the vector arm)."""
    if arm == "lexical":
        return [hit.path for hit in search_head(view, SearchHeadInput(query, limit=limit))]
    if vectors is None or query_vector is None:
        raise ValueError(f"the {arm} arm needs document vectors and a query vector")
    if arm == "vector":
        return vector_ranking(view, vectors, query_vector, limit)
    search = SearchHeadInput(query, limit=limit, vectors=vectors, query_vector=query_vector,
                             vector_weight=vector_weight)
    return [hit.path for hit in search_head(view, search)]


def evaluate_beir(
    version: HeadView,
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    path_to_doc_id: Callable[[str], str],
    arms: Sequence[EvalArm] = ALL_ARMS,
    query_vectors: Mapping[str, npt.ArrayLike] | None = None,
    vectors: HeadVectors | None = None,
    k: int = 10,
    weights: Sequence[float] = (),
) -> EvalReport:
    """Rank every judged query with each arm and average the metrics per arm.

    A query counts when it has text and at least one document judged relevant;
    queries go in id order. The vector and hybrid arms need ``vectors`` (content hash
    to vector) and a vector for every counted query in ``query_vectors``. Each of
    ``weights`` adds a ``hybrid w=<weight>`` row: the hybrid with that vector weight.
    """
    judged = sorted(qid for qid, rels in qrels.items()
                    if qid in queries and any(rel > 0 for rel in rels.values()))
    needs_vectors = [arm for arm in arms if arm != "lexical"] + [
        f"{WEIGHTED_PREFIX}{w:g}" for w in weights]
    if needs_vectors:
        if vectors is None or query_vectors is None:
            raise ValueError(f"arms {needs_vectors} need vectors and query_vectors")
        missing = [qid for qid in judged if qid not in query_vectors]
        if missing:
            raise ValueError(f"{len(missing)} queries have no query vector, e.g. {missing[0]}")
    limit = max(k, RECALL_DEEP_K)
    out: list[ArmScores] = []
    runs: list[tuple[str, EvalArm, float]] = [(arm, arm, VECTOR_WEIGHT) for arm in arms]
    runs += [(f"{WEIGHTED_PREFIX}{w:g}", "hybrid", w) for w in weights]
    for name, arm, weight in runs:
        ndcg: list[float] = []
        recall: list[float] = []
        recall_deep: list[float] = []
        recall_shallow: list[float] = []
        mrr: list[float] = []
        for qid in judged:
            query_vector = query_vectors[qid] if query_vectors is not None else None
            paths = rank_paths(version, arm, queries[qid], limit, vectors, query_vector,
                               weight)
            ranked = [path_to_doc_id(path) for path in paths]
            rels = qrels[qid]
            ndcg.append(ndcg_at_k(ranked, rels, k))
            recall.append(recall_at_k(ranked, rels, k))
            recall_deep.append(recall_at_k(ranked, rels, RECALL_DEEP_K))
            recall_shallow.append(recall_at_k(ranked, rels, RECALL_SHALLOW_K))
            mrr.append(mrr_at_k(ranked, rels, k))
        out.append(ArmScores(name, mean(ndcg), mean(recall), mean(recall_deep), mean(mrr),
                             mean(recall_shallow)))
    documents = sum(1 for record in version.records() if is_active(record))
    return EvalReport(k, len(judged), documents, tuple(out))
