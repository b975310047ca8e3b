"""bench/lexical_ratio: lexical search one query at a time, memhtml against bm25s and
tantivy, in rounds, to say whether a ratio holds in consecutive runs.

    python -m bench.lexical_ratio                        # 5,000 to 100,000, 3 rounds
    python -m bench.lexical_ratio --sizes 5000 --rounds 5

The stores and baselines are ``bench.scale``'s (the same corpus, the same stemmed
bm25s and tantivy, built on the same texts); after building all three, each round
runs every SciFact train query through memhtml, then bm25s, then tantivy, each query
timed alone, and prints each engine's p50 and p95 and the ratios of that round.
"Parity" or "faster" holds at a size only when every round's ratio does.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import tempfile
from pathlib import Path

from bench.common import run, scifact_dir
from bench.head import AT, AUTHOR
from bench.scale import (
    Engine,
    Query,
    bm25s_ranker,
    corpus,
    memhtml_ranker,
    tantivy_ranker,
    timed_pass,
)
from memhtml.adapters.git import PygitService
from memhtml.contracts import PathChange
from memhtml.eval.beir import (
    BeirDoc,
    memory_path,
    read_corpus,
    read_qrels,
    read_queries,
    render_doc,
)
from memhtml.head import load_head
from memhtml.head.lexical import document_text

SIZES = (5_000, 20_000, 50_000, 100_000)


def rounds_at(size: int, real: list[BeirDoc], queries: list[Query], rounds: int,
              freeze: bool) -> None:
    work = Path(tempfile.mkdtemp(prefix=f"memhtml-bench-ratio-{size}-"))
    try:
        git = run(PygitService.init(work / "repo", bare=True))
        changes = [PathChange(memory_path(d), render_doc(d).encode())
                   for d in corpus(size, real)]
        sha = run(git.commit("refs/heads/main", None, changes, "import", AUTHOR, AT))
        version = run(load_head(git, sha))
        texts = [document_text(r) for r in version.records()]
        paths = [r.path for r in version.records()]
        engines = {"memhtml": memhtml_ranker(version),
                   "bm25s": bm25s_ranker(texts, paths)[0],
                   "tantivy": tantivy_ranker(texts, paths, work / "tantivy")[0]}
        for rank in engines.values():  # one untimed pass each: caches, page-ins
            timed_pass(rank, queries[:50])
        if freeze:
            gc.collect()
            gc.freeze()
        for number in range(1, rounds + 1):
            passes: dict[str, Engine] = {name: timed_pass(rank, queries)
                                         for name, rank in engines.items()}
            ours = passes["memhtml"]
            cells = [f"{name} p50 {e.p(0.5):.3f} p95 {e.p(0.95):.3f} ms"
                     for name, e in passes.items()]
            ratios = [f"/{name} p50 {ours.p(0.5) / e.p(0.5):.2f}x p95 "
                      f"{ours.p(0.95) / e.p(0.95):.2f}x"
                      for name, e in passes.items() if name != "memhtml"]
            load = " ".join(f"{x:.2f}" for x in os.getloadavg())
            print(f"{size:>7,} round {number}: " + "; ".join(cells) + " | " + "; ".join(ratios)
                  + f" | load {load}", flush=True)
    finally:
        gc.unfreeze()
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--freeze", action="store_true",
                        help="gc.freeze() after building: the collector then skips the "
                             "engines' long-lived objects, as a server that froze its "
                             "loaded state would")
    args = parser.parse_args()
    data = scifact_dir()
    real = list(read_corpus(data / "corpus.jsonl"))
    texts = read_queries(data / "queries-train.jsonl")
    qrels = read_qrels(data / "qrels" / "train.tsv")
    queries = [(texts[q], qrels[q]) for q in sorted(texts) if q in qrels]
    for size in (int(s) for s in args.sizes.split(",") if s.strip()):
        rounds_at(size, real, queries, args.rounds, args.freeze)


if __name__ == "__main__":
    main()
