"""Retrieval on short and long memories: every arm, aggregation and fusion rule side by side.

Run from the repository root: ``python -m bench.retrieval``. Two collections are built
from SciFact's train split: *short*, the 5,183 abstracts as they are, one memory each;
*long*, the abstracts shuffled once and packed into sessions of about 3,000 characters
(``memhtml.eval.sessions``), a session relevant as its most relevant abstract. The 809
judged train queries are split by a digest of their id into a *dev* half, on which the
fusion rule and its constants were chosen, and a *held-out* half, reported as is
(``memhtml.eval.beir.query_split``; SciFact's test split is not shipped here).

The local model embeds each memory's passages (``head.passages``) and, for the
before/after row, each memory's single opening vector (``head.vectors.vector_text_of``).
Vectors are cached under ``--cache`` (default /tmp/memhtml-retrieval), so only the first
run pays for embedding; ``--throughput`` measures passages per second afresh.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt
from returns.result import Success

from bench.common import percentile, run, scifact_dir
from memhtml.adapters.embedders import HashingEmbedder, LocalEmbedder
from memhtml.adapters.git import PygitService
from memhtml.adapters.vector_files import load_cache, save_cache
from memhtml.compose import perform
from memhtml.contracts.services import Vector
from memhtml.eval.beir import (
    BeirDoc,
    doc_id_of_path,
    query_split,
    read_corpus,
    read_qrels,
    read_queries,
)
from memhtml.eval.harness import evaluate_beir, import_beir, render_table, report_json
from memhtml.eval.metrics import mean, ndcg_at_k, recall_at_k
from memhtml.eval.sessions import build_sessions, depth_of, session_qrels
from memhtml.head import (
    HeadVersion,
    VectorCache,
    cache_from,
    empty_vector_cache,
    fill_vectors,
    indexes_of,
    is_active,
    load_head,
)
from memhtml.head.fusion import ArmList, confidence, minmax, rrf
from memhtml.head.passages import passages_of, stored_passages
from memhtml.head.search import (
    SearchHeadInput,
    arm_ranks,
    bm25_scores,
    search_head,
)
from memhtml.head.vector_arm import vector_scores
from memhtml.head.vectors import fill_passages

IMPORT_AT = datetime(2026, 1, 1, tzinfo=UTC)
CAP = 40
K = 10


@dataclass(frozen=True)
class Collection:
    name: str
    version: HeadVersion
    qrels: dict[str, dict[str, int]]
    depth: dict[str, int]


def load_collection(name: str, store: Path, docs: Sequence[BeirDoc],
                    qrels: dict[str, dict[str, int]], depth: dict[str, int]) -> Collection:
    git = run(PygitService.init(store))
    sha = run(import_beir(git, docs, IMPORT_AT))
    return Collection(name, run(load_head(git, sha)), qrels, depth)


def filled(version: HeadVersion, embedder: LocalEmbedder, root: Path) -> VectorCache:
    cache = empty_vector_cache(embedder.space)
    match perform(load_cache(root, embedder.space)):
        case Success(loaded):
            cache = loaded
        case failed:
            print(f"  ignoring the cached vectors: {failed}")
    start = time.perf_counter()
    passages = run(fill_passages(version, cache, embedder))
    memories = run(fill_vectors(version, passages.cache, embedder))
    seconds = time.perf_counter() - start
    embedded = passages.counts.embedded + memories.counts.embedded
    if embedded:
        run(save_cache(root, memories.cache))
        print(f"  embedded {passages.counts.embedded} passages and "
              f"{memories.counts.embedded} memory vectors in {seconds:.1f}s")
    return memories.cache


def query_vectors(texts: Sequence[str], embedder: LocalEmbedder, root: Path
                  ) -> dict[str, Vector]:
    def key(text: str) -> str:
        return "q" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]

    known: dict[str, Vector] = {}
    loaded = perform(load_cache(root, embedder.space))
    if isinstance(loaded, Success):
        known = dict(loaded.unwrap().vectors.items())
    missing = sorted({t for t in texts if key(t) not in known})
    if missing:
        vectors = run(embedder.embed(missing))
        known.update({key(t): v for t, v in zip(missing, vectors, strict=True)})
        run(save_cache(root, cache_from(embedder.space, known)))
    return {t: known[key(t)] for t in texts}


Ranked = list[tuple[str, int, float]]


def capped(scored: list[tuple[str, float]]) -> Ranked:
    raw = dict(scored)
    return [(path, rank, raw[path]) for path, rank in arm_ranks(scored, CAP)]


@dataclass(frozen=True)
class PassageMatrix:
    paths: list[str]
    owners: npt.NDArray[np.intp]
    starts: npt.NDArray[np.intp]
    matrix: npt.NDArray[np.float32]


def passage_matrix(version: HeadVersion, cache: VectorCache) -> PassageMatrix:
    paths: list[str] = []
    rows: list[npt.NDArray[np.float32]] = []
    owners: list[int] = []
    starts: list[int] = []
    for record in sorted(version.records(), key=lambda r: r.path):
        if not is_active(record):
            continue
        found = stored_passages(record, cache)
        if not found:
            continue
        starts.append(len(rows))
        owners.extend([len(paths)] * len(found))
        paths.append(record.path)
        rows.extend(np.asarray(v, dtype=np.float32) for v in found)
    return PassageMatrix(paths, np.asarray(owners), np.asarray(starts), np.vstack(rows))


Aggregate = Callable[[npt.NDArray[np.float32], PassageMatrix], npt.NDArray[np.float32]]


def agg_max(cos: npt.NDArray[np.float32], pm: PassageMatrix) -> npt.NDArray[np.float32]:
    return np.maximum.reduceat(cos, pm.starts)


def agg_first(cos: npt.NDArray[np.float32], pm: PassageMatrix) -> npt.NDArray[np.float32]:
    return cos[pm.starts]


def agg_mean(cos: npt.NDArray[np.float32], pm: PassageMatrix) -> npt.NDArray[np.float32]:
    sums = np.add.reduceat(cos, pm.starts)
    counts = np.diff(np.append(pm.starts, len(cos)))
    return (sums / counts).astype(np.float32)


def agg_max_mean(cos: npt.NDArray[np.float32], pm: PassageMatrix) -> npt.NDArray[np.float32]:
    return (0.8 * agg_max(cos, pm) + 0.2 * agg_mean(cos, pm)).astype(np.float32)


AGGREGATES: dict[str, Aggregate] = {"max": agg_max, "first": agg_first, "mean": agg_mean,
                                    "0.8 max + 0.2 mean": agg_max_mean}


def ranked_by(pm: PassageMatrix, aggregate: Aggregate, qv: Vector) -> Ranked:
    cos = pm.matrix @ np.asarray(qv, dtype=np.float32)
    scores = aggregate(cos, pm)
    return capped([(pm.paths[i], float(s)) for i, s in enumerate(scores.tolist())])


def order_of(fused: Mapping[str, float]) -> list[str]:
    return sorted(fused, key=lambda path: (-fused[path], path))


Rule = Callable[[Ranked, Ranked], list[str]]


def _arms(lex: Ranked, vec: Ranked, w: float) -> list[ArmList]:
    return [ArmList("lexical", 1.0, lex), ArmList("vector", w, vec)]


def _by(fusion: Callable[[Sequence[ArmList]], dict[str, float]], w: float) -> Rule:
    def rule(lex: Ranked, vec: Ranked) -> list[str]:
        return order_of(fusion(_arms(lex, vec, w)))
    return rule


def _lexical(lex: Ranked, _vec: Ranked) -> list[str]:
    return [p for p, _, _ in lex]


def _vector(_lex: Ranked, vec: Ranked) -> list[str]:
    return [p for p, _, _ in vec]


def rules() -> dict[str, Rule]:
    out: dict[str, Rule] = {"lexical": _lexical, "vector": _vector}
    for w in (1.0, 0.75, 0.5, 0.25):
        out[f"rrf w={w:g}"] = _by(rrf, w)
    for w in (1.5, 1.25, 1.0, 0.75, 0.5):
        out[f"minmax w={w:g}"] = _by(minmax, w)
    out["confidence"] = _by(confidence, 1.0)
    return out


@dataclass
class Scores:
    ndcg: list[float]
    r5: list[float]
    r10: list[float]

    def row(self) -> tuple[float, float, float]:
        return mean(self.ndcg), mean(self.r5), mean(self.r10)


def score(ranking: Sequence[str], rels: Mapping[str, int], into: Scores) -> None:
    ids = [doc_id_of_path(p) for p in ranking]
    into.ndcg.append(ndcg_at_k(ids, rels, K))
    into.r5.append(recall_at_k(ids, rels, 5))
    into.r10.append(recall_at_k(ids, rels, K))


def latency(coll: Collection, cache: VectorCache, queries: Mapping[str, str],
            judged: Sequence[str], qv: Mapping[str, Vector]) -> None:
    """p50 and p90 of ``search_head`` over the judged queries, limit 10, warm (the
    stacked passage matrix is built by a first search and kept, as in a server)."""
    first = queries[judged[0]]
    search_head(coll.version, SearchHeadInput(first, vectors=cache, query_vector=qv[first]))
    for mode in ("lexical", "hybrid"):
        times: list[float] = []
        for qid in judged:
            text = queries[qid]
            search = SearchHeadInput(text) if mode == "lexical" else SearchHeadInput(
                text, vectors=cache, query_vector=qv[text])
            start = time.perf_counter()
            search_head(coll.version, search)
            times.append(time.perf_counter() - start)
        print(f"  {mode}: p50 {percentile(times, 0.5) * 1000:.2f} ms, "
              f"p90 {percentile(times, 0.9) * 1000:.2f} ms over {len(times)} queries")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/memhtml-retrieval"))
    parser.add_argument("--throughput", action="store_true",
                        help="measure passages per second on a fixed sample")
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    parser.add_argument("--latency", action="store_true",
                        help="only time search_head per query, lexical and hybrid")
    args = parser.parse_args(argv)
    data = scifact_dir()
    docs = list(read_corpus(data / "corpus.jsonl"))
    queries = read_queries(data / "queries-train.jsonl")
    qrels = read_qrels(data / "qrels" / "train.tsv")
    judged = sorted(q for q, rels in qrels.items()
                    if q in queries and any(r > 0 for r in rels.values()))
    split = {q: query_split(q) for q in judged}
    sessions = build_sessions(docs)
    lengths = [len(s.as_doc().text) for s in sessions]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    print(f"commit {commit}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")
    print(f"long: {len(sessions)} sessions of {min(len(s.docs) for s in sessions)}-"
          f"{max(len(s.docs) for s in sessions)} abstracts, mean {mean(lengths):.0f} chars; "
          f"queries dev {sum(v == 'dev' for v in split.values())}, held-out "
          f"{sum(v == 'held-out' for v in split.values())}")
    embedder = LocalEmbedder()
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as scratch:
        collections = [
            load_collection("short", Path(scratch) / "short", docs, qrels, {}),
            load_collection("long", Path(scratch) / "long", [s.as_doc() for s in sessions],
                            session_qrels(sessions, qrels), depth_of(sessions, qrels)),
        ]
        qv = query_vectors([queries[q] for q in judged], embedder, args.cache / "queries")
        for coll in collections:
            print(f"\n== {coll.name}: {sum(1 for r in coll.version.records() if is_active(r))} "
                  "memories")
            cache = filled(coll.version, embedder, args.cache / "vectors")
            pm = passage_matrix(coll.version, cache)
            print(f"  {len(pm.paths)} memories, {len(pm.matrix)} passages")
            if args.latency:
                latency(coll, cache, queries, judged, qv)
                continue
            indexes = indexes_of(coll.version)
            hashing = HashingEmbedder()
            hashing_cache = run(fill_passages(coll.version, empty_vector_cache(hashing.space),
                                              hashing)).cache
            memory_vectors = {r.content_hash: v for r in coll.version.records()
                              if (v := cache.get(r.content_hash)) is not None}
            table: dict[str, dict[str, Scores]] = {}
            by_depth: dict[str, dict[str, list[float]]] = {}

            def add(name: str, part: str, ranking: Sequence[str], rels: Mapping[str, int],
                    table: dict[str, dict[str, Scores]] = table) -> None:
                for bucket in (part, "all"):
                    score(ranking, rels, table.setdefault(name, {}).setdefault(
                        bucket, Scores([], [], [])))

            fusion = rules()
            for qid in judged:
                rels = coll.qrels.get(qid, {})
                if not any(r > 0 for r in rels.values()):
                    continue
                part = split[qid]
                vector = qv[queries[qid]]
                lex = capped(list(bm25_scores(indexes, queries[qid]).items()))
                opening = capped(vector_scores(indexes, memory_vectors, vector))
                add("vector, one opening vector per memory (before)", part,
                    [p for p, _, _ in opening], rels)
                if coll.depth:
                    bucket = "opening" if coll.depth[qid] < 1000 else "deeper"
                    by_depth.setdefault("vector, opening vector (before)", {}).setdefault(
                        bucket, []).append(recall_at_k(
                            [doc_id_of_path(p) for p, _, _ in opening], rels, 5))
                add("rrf w=1 with the opening vector (before)", part,
                    order_of(rrf([ArmList("l", 1.0, lex), ArmList("v", 1.0, opening)])), rels)
                add("minmax w=1 with the opening vector", part,
                    order_of(minmax([ArmList("l", 1.0, lex), ArmList("v", 1.0, opening)])),
                    rels)
                hashed = capped(vector_scores(indexes, hashing_cache,
                                              hashing.vector_of(queries[qid])))
                add("vector, hashing embedder passages", part, [p for p, _, _ in hashed], rels)
                add("minmax w=1 with the hashing arm", part,
                    order_of(minmax([ArmList("l", 1.0, lex), ArmList("v", 1.0, hashed)])),
                    rels)
                add("rrf w=1 with the hashing arm", part,
                    order_of(rrf([ArmList("l", 1.0, lex), ArmList("v", 1.0, hashed)])), rels)
                for agg_name, aggregate in AGGREGATES.items():
                    if agg_name != "max":
                        add(f"vector, passages, {agg_name}", part,
                            [p for p, _, _ in ranked_by(pm, aggregate, vector)], rels)
                vec = ranked_by(pm, agg_max, vector)
                for name, rule in fusion.items():
                    ranking = rule(lex, vec)
                    add(name, part, ranking, rels)
                    if coll.depth and name in ("lexical", "vector", "rrf w=1", "minmax w=1"):
                        ids = [doc_id_of_path(p) for p in ranking]
                        bucket = "opening" if coll.depth[qid] < 1000 else "deeper"
                        by_depth.setdefault(name, {}).setdefault(bucket, []).append(
                            recall_at_k(ids, rels, 5))
            print(f"  {'arm or rule':<50} {'part':<9} {'nDCG@10':>8} {'R@5':>7} {'R@10':>7}")
            out: dict[str, object] = {}
            for name, parts in table.items():
                for half in ("dev", "held-out", "all"):
                    if half in parts:
                        ndcg, r5, r10 = parts[half].row()
                        print(f"  {name:<50} {half:<9} {ndcg:>8.4f} {r5:>7.4f} {r10:>7.4f}")
                        out[f"{name} | {half}"] = [round(ndcg, 4), round(r5, 4), round(r10, 4)]
            for name, buckets in by_depth.items():
                print(f"  recall@5 by depth, {name}: " + ", ".join(
                    f"{b} {mean(v):.4f} (n={len(v)})" for b, v in sorted(buckets.items())))
            # The search a user runs, through the harness (lexical, vector, hybrid).
            report = evaluate_beir(coll.version, queries, coll.qrels, doc_id_of_path,
                                   query_vectors={q: qv[queries[q]] for q in judged},
                                   vectors=cache)
            print(render_table(report))
            results[coll.name] = {"rules": out, "harness": report_json(report)}
            for half in ("dev", "held-out"):
                part_report = evaluate_beir(
                    coll.version, queries,
                    {q: r for q, r in coll.qrels.items() if query_split(q) == half},
                    doc_id_of_path, query_vectors={q: qv[queries[q]] for q in judged},
                    vectors=cache)
                print(f"{half}: " + render_table(part_report))
                results[f"{coll.name} {half}"] = {"harness": report_json(part_report)}
    if args.throughput:
        sample = [p.text for r in sorted(collections[1].version.records(), key=lambda r: r.path)
                  for p in passages_of(r)][:512]
        run(embedder.embed(sample[:4]))
        best = best_cpu = float("inf")
        for _ in range(3):
            start, cpu = time.perf_counter(), time.process_time()
            run(embedder.embed(sample))
            best = min(best, time.perf_counter() - start)
            best_cpu = min(best_cpu, time.process_time() - cpu)
        print(f"\nthroughput: {len(sample) / best:.1f} passages/s, "
              f"{len(sample) / best_cpu:.1f} per CPU-second ({len(sample)} passages, "
              f"{embedder.workers} workers, best of 3; load average "
              f"{os.getloadavg()[0]:.1f})")
        results["passages_per_s"] = round(len(sample) / best, 1)
        results["passages_per_cpu_s"] = round(len(sample) / best_cpu, 1)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
