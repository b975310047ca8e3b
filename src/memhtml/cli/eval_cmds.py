"""``memhtml eval``: retrieval quality on a BEIR split, and the head gate between two
commits of a store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cyclopts import App

from memhtml.cli.choices import EmbedderName, EvalArmName, EvalHalfName
from memhtml.cli.common import Common, open_common, settings_for
from memhtml.cli.output import (
    ERR_INPUT,
    EXIT_FAILED,
    CliError,
    Reply,
    UsageError,
    failure_payload,
    respond,
    store_value,
)

if TYPE_CHECKING:
    from memhtml.head import HeadGateReport

eval_app = App(name="eval", help="Measure retrieval: a BEIR split, or the gate between "
                                 "two commits.")

_COMMON = Common()
EVAL_AT = "2026-01-01T00:00:00+00:00"
"""The import commit's time, so an evaluation store is the same on every run."""


@eval_app.command(name="beir")
def eval_beir(corpus: Path, queries: Path, qrels: Path, /, *,
              arm: tuple[EvalArmName, ...] = (), embedder: EmbedderName | None = None,
              k: int = 10, weight: tuple[float, ...] = (), long: bool = False,
              half: EvalHalfName = "all", common: Common = _COMMON) -> int:
    """Import a BEIR split into a temporary store and report nDCG@k, Recall@k,
    Recall@5, Recall@100 and MRR@k per search arm.

    Parameters
    ----------
    corpus
        corpus.jsonl
    queries
        queries.jsonl
    qrels
        The qrels .tsv (query-id, corpus-id, score).
    arm
        lexical, vector or hybrid; repeatable. Default: lexical, plus vector and
        hybrid when an embedder is configured.
    embedder
        The embedder for the vector arms (default: the configured one; hashing when
        the vector arms are asked for and none is configured).
    k
        The cut-off for nDCG, Recall and MRR.
    weight
        A vector weight for the hybrid's fusion (the spec's is 1); repeatable. Each
        adds a row "hybrid w=<weight>", and the best on this split is named: set it as
        the store's vector_weight (in .memhtml/config.toml) for its searches.
    long
        Long memories: the corpus shuffled once and packed into sessions of about
        3,000 characters, a session relevant as its most relevant document.
    half
        Which queries count: all, or the dev or held-out half (split by a digest of
        the query id; rules are chosen on dev, held-out is only reported).
    """

    def body() -> Reply:
        import tempfile
        from datetime import datetime

        from memhtml.cli.output import unwrap_io
        from memhtml.cli.progress import progress
        from memhtml.compose import Settings, VectorFiles, init_repository, pick_embedder
        from memhtml.compose.services import space_of
        from memhtml.eval.beir import (
            doc_id_of_path,
            query_split,
            read_corpus,
            read_qrels,
            read_queries,
        )
        from memhtml.eval.harness import evaluate_beir, import_beir, render_table, report_json
        from memhtml.eval.sessions import build_sessions, session_qrels
        from memhtml.head import empty_vector_cache, load_head
        from memhtml.head.vectors import fill_passages

        for path, expected in ((corpus, "corpus.jsonl"), (queries, "queries.jsonl"),
                               (qrels, "the qrels .tsv")):
            if not path.is_file():
                raise CliError(f"{path} is not a file: name the split's {expected}",
                               code=ERR_INPUT)
        try:
            settings = settings_for(common)
        except CliError:
            settings = Settings(store=Path.cwd())
        name = embedder or (settings.embedder if settings.embedder != "none" else None)
        bad = [w for w in weight if not (0 <= w < float("inf"))]
        if bad:
            raise UsageError(f"a weight is a number 0 or more, not {bad[0]}")
        arms = arm or (("lexical", "vector", "hybrid") if name else ("lexical",))
        if (weight or any(a != "lexical" for a in arms)) and name is None:
            name = "hashing"
        try:
            docs = list(read_corpus(corpus))
            query_texts = read_queries(queries)
            judged = read_qrels(qrels)
        except (OSError, ValueError, KeyError) as exc:
            raise CliError(f"cannot read the BEIR split: {exc}", code=ERR_INPUT) from exc
        if long:
            sessions = build_sessions(docs)
            docs = [session.as_doc() for session in sessions]
            judged = session_qrels(sessions, judged)
        if half != "all":
            judged = {qid: rels for qid, rels in judged.items() if query_split(qid) == half}
        with tempfile.TemporaryDirectory(prefix="memhtml-eval-") as scratch:
            git = unwrap_io(init_repository(Path(scratch), bare=True), lambda e: e.reason)
            with progress(f"importing {len(docs)} documents", None, common.json):
                sha = store_value(import_beir(git, docs, datetime.fromisoformat(EVAL_AT)))
                version = store_value(load_head(git, sha))
            vectors = query_vectors = None
            if name is not None and (weight or any(a != "lexical" for a in arms)):
                from returns.io import IOResult

                picked = pick_embedder(settings, VectorFiles(Path(scratch)), name)
                chosen = unwrap_io(IOResult.from_result(picked), lambda e: e.reason)
                space = unwrap_io(space_of(chosen, resolve=True), lambda e: e.reason)
                if chosen is None or space is None:
                    raise CliError(f"embedder {name!r} gives no vector space")
                cache = empty_vector_cache(space)

                def failed(error: object) -> str:
                    return f"embedder: {getattr(error, 'reason', error)}"

                with progress("embedding passages", None, common.json):
                    cache = unwrap_io(fill_passages(version, cache, chosen), failed).cache
                ids = sorted(q for q in judged if q in query_texts)
                with progress("embedding queries", len(ids), common.json) as bar:
                    query_vectors = {}
                    for qid in ids:
                        query_vectors[qid] = unwrap_io(chosen.embed_query(query_texts[qid]),
                                                       failed)
                        bar.advance()
                vectors = cache
            with progress("ranking", None, common.json):
                report = evaluate_beir(version, query_texts, judged, doc_id_of_path, arms,
                                       query_vectors, vectors, k, weight)
        best = report.best_vector_weight()
        payload = {**report_json(report), "embedder": name, "best_vector_weight": best,
                   "collection": "long" if long else "short", "half": half}
        text = f"{'long sessions' if long else 'documents as they are'}, {half} queries: " \
            + render_table(report)
        if best is not None:
            text += f"\nbest vector weight on this split: {best:g}"
        return Reply(payload, text)

    return respond(common.json, body)


@eval_app.command(name="gate")
def eval_gate(base: str, landed: str, /, *, probes: int | None = None,
              common: Common = _COMMON) -> int:
    """Run the head gate between two commits of the store: the base's memories probed
    by their titles and claims at both, MRR and inversions compared, and every memory
    the base found looked for at the landed commit (itself, where it moved, or the
    keeper that superseded it). Exits 1 when the gate fails; --json then answers
    the failure (code ERR_DISCRIMINATION_FAILED) with the whole report under "report".

    Parameters
    ----------
    base
        The base commit or ref.
    landed
        The commit or ref being judged.
    probes
        How many probe queries (default: the gate's own).
    """

    def body() -> Reply:
        from memhtml.head import HeadGateOptions, describe_head_gate_failure, gate_heads

        _, store = open_common(common, writes=False)
        before = store_value(store.version_at(base))
        after = store_value(store.version_at(landed))
        options = HeadGateOptions() if probes is None else HeadGateOptions(probes=probes)
        report = gate_heads(before, after, options)
        lines = [
            describe_head_gate_failure(report),
            f"base    {report.base}  MRR {report.mrr_before:.4f}  inversions "
            f"{report.inversions_before}",
            f"landed  {report.landed}  MRR {report.mrr:.4f}  inversions "
            f"{len(report.inversions)}  (floor {report.floor:.4f})",
            f"added {report.added}, removed {report.removed}; "
            f"{'passed' if report.passed else 'FAILED'}",
        ]
        if report.passed:
            return Reply(report, "\n".join(lines))
        return _gate_failed(report, lines)

    return respond(common.json, body)


def _gate_failed(report: HeadGateReport, lines: list[str]) -> Reply:
    """A failed gate is the spec's ``HeadGateFailed``: its code and line lead the JSON
    failure, the report rides beside them, and the text keeps the report on stdout with
    the error line on stderr."""
    from memhtml.compose import error_code, explain
    from memhtml.head import HeadGateFailed

    failed = HeadGateFailed(report)
    violations = []
    if report.mrr < report.floor:
        violations.append(f"MRR {report.mrr:.4f} is below the floor {report.floor:.4f} "
                          f"(the base's {report.mrr_before:.4f} less {report.tolerance})")
    if len(report.inversions) > report.inversions_before:
        violations.append(f"inversions grew from {report.inversions_before} to "
                          f"{len(report.inversions)}")
    violations += [f"{path}: the base found it; neither it nor a memory standing for it is "
                   f"in the top {report.k} of its own title or claim now"
                   for path in report.unfound]
    message = explain(failed)
    payload = failure_payload(error_code(failed), message, tuple(violations), report=report)
    return Reply(payload, "\n".join(lines), EXIT_FAILED, notes=(f"error: {message}",))
