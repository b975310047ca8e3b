"""bench/head: load, advance, search and memory of head versions on SciFact.

SciFact's 5,183 abstracts are written as memory files, committed to a real
repository, and loaded as a version. Baselines built on the same texts in the
same run: bm25s (no stemming, English stop words) and rank-bm25 (BM25Okapi).

Targets: lexical search_head p50 no slower than bm25s answering one query at a
time; load_head <= 3 s; advance_head over a 10-file commit <= 1% of load_head; a
chain of 100 single-file versions <= 1.2x the memory of one; lexical nDCG@10 on
the train split >= 0.66.
"""

from __future__ import annotations

import gc
import math
import re
import statistics
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import bm25s
from rank_bm25 import BM25Okapi

from bench.common import percentile, run, scifact_dir, timed
from memhtml.adapters.git import PygitService
from memhtml.contracts import PathChange, Signature
from memhtml.eval.beir import (
    doc_id_of_path,
    memory_path,
    read_corpus,
    read_qrels,
    read_queries,
    render_doc,
)
from memhtml.format import set_meta
from memhtml.head import HeadVersion, SearchHeadInput, advance_head, load_head, search_head
from memhtml.head.lexical import STOP_WORDS, document_text

AUTHOR = Signature("bench", "bench@memhtml.invalid")
AT = datetime(2026, 1, 1, tzinfo=UTC)


def ndcg_at_10(ranked: list[str], relevant: dict[str, int]) -> float:
    gains = [relevant.get(doc, 0) for doc in ranked[:10]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def main() -> None:
    data = scifact_dir()
    docs = list(read_corpus(data / "corpus.jsonl"))
    queries = read_queries(data / "queries-train.jsonl")
    qrels = read_qrels(data / "qrels" / "train.tsv")
    query_ids = [q for q in sorted(queries) if q in qrels]
    tmp = tempfile.mkdtemp(prefix="memhtml-bench-head-")
    git = run(PygitService.init(Path(tmp)))
    changes = [PathChange(memory_path(d), render_doc(d).encode()) for d in docs]
    sha = run(git.commit("refs/heads/main", None, changes, "import SciFact",
                                       AUTHOR, AT))

    loads = []
    version: HeadVersion | None = None
    for _ in range(3):
        gc.collect()
        version, seconds = timed(lambda: run(load_head(git, sha)))
        loads.append(seconds)
    assert version is not None
    load_s = min(loads)

    texts = [document_text(r) for r in version.records()]
    paths = [r.path for r in version.records()]
    gc.collect()
    start = time.perf_counter()
    corpus_tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index(corpus_tokens, show_progress=False)
    bm25s_build = time.perf_counter() - start
    start = time.perf_counter()
    okapi = BM25Okapi([re.findall(r"\w+", t.lower()) for t in texts], k1=1.2, b=0.75)
    okapi_build = time.perf_counter() - start

    ours: list[float] = []
    theirs: list[float] = []
    okapi_times: list[float] = []
    ndcgs: list[float] = []
    bm25s_ndcgs: list[float] = []
    for qid in query_ids:
        text = queries[qid]
        start = time.perf_counter()
        hits = search_head(version, SearchHeadInput(text, limit=10))
        ours.append(time.perf_counter() - start)
        ndcgs.append(ndcg_at_10([doc_id_of_path(h.path) for h in hits], qrels[qid]))
        start = time.perf_counter()
        q_tokens = bm25s.tokenize([text], stopwords="en", show_progress=False)
        results, _scores = retriever.retrieve(q_tokens, k=10, show_progress=False)
        theirs.append(time.perf_counter() - start)
        bm25s_ndcgs.append(
            ndcg_at_10([doc_id_of_path(paths[i]) for i in results[0]], qrels[qid])
        )
    for qid in query_ids[:200]:
        tokens = [t for t in re.findall(r"\w+", queries[qid].lower()) if t not in STOP_WORDS]
        start = time.perf_counter()
        okapi.get_scores(tokens)
        okapi_times.append(time.perf_counter() - start)

    # advance over a 10-file commit: edit ten claims' metadata and one claim each
    edited = []
    for i, doc in enumerate(docs[:10]):
        html = render_doc(doc)
        if i % 2:
            html = set_meta(html, "memhtml-updated", "2026-06-01T00:00:00Z")
        else:
            html = html.replace("<mark>", "<mark>Revised: ", 1)
        edited.append(PathChange(memory_path(doc), html.encode()))
    sha10 = run(git.commit("refs/heads/main", sha, edited, "ten edits", AUTHOR,
                                         AT))
    advances = []
    for _ in range(5):
        _v10, seconds = timed(lambda: run(advance_head(git, version, sha10)))
        advances.append(seconds)
    advance_s = statistics.median(advances)

    # memory: one version versus a chain of 100 single-file versions
    gc.collect()
    tracemalloc.start()
    base = run(load_head(git, sha10))
    gc.collect()
    one_version = tracemalloc.get_traced_memory()[0]
    chain = [base]
    tip = sha10
    for i in range(100):
        doc = docs[100 + i]
        html = render_doc(doc).replace("<mark>", f"<mark>Step {i}: ", 1)
        tip = run(git.commit("refs/heads/main", tip,
                                           [PathChange(memory_path(doc), html.encode())],
                                           f"step {i}", AUTHOR, AT))
        chain.append(run(advance_head(git, chain[-1], tip)))
    gc.collect()
    chain_memory = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()

    ours_p50 = percentile(ours, 0.5) * 1000
    theirs_p50 = percentile(theirs, 0.5) * 1000
    print(f"SciFact: {len(docs)} memory files, {len(query_ids)} train queries")
    print(f"load_head (git reads, parse, indexes)  {load_s:6.2f} s   "
          f"x{load_s / bm25s_build:5.1f} of bm25s index build ({bm25s_build:.2f} s); "
          f"rank-bm25 build {okapi_build:.2f} s")
    print(f"advance_head, 10-file commit           {advance_s * 1000:6.1f} ms  "
          f"{100 * advance_s / load_s:5.2f}% of load_head")
    print(f"search_head lexical p50                {ours_p50:6.3f} ms  "
          f"ratio to bm25s one-at-a-time {ours_p50 / theirs_p50:4.2f} (bm25s {theirs_p50:.3f} ms); "
          f"rank-bm25 p50 {percentile(okapi_times, 0.5) * 1000:.2f} ms")
    print(f"search_head lexical p95                {percentile(ours, 0.95) * 1000:6.3f} ms")
    print(f"memory: one version {one_version / 1e6:.1f} MB, chain of 101 versions "
          f"{chain_memory / 1e6:.1f} MB, ratio {chain_memory / one_version:.3f}")
    print(f"nDCG@10 train: search_head {statistics.mean(ndcgs):.4f}, "
          f"bm25s {statistics.mean(bm25s_ndcgs):.4f}")


if __name__ == "__main__":
    main()
