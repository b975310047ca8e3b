"""bench/neighbours: the neighbour scan on SciFact, as a ratio of ``load_head``.

The first 5,000 of SciFact's abstracts are committed as memory files and embedded with
the hashing embedder at width 256 (``fill_vectors``, the preflight path). Measured in
the same run, each the fastest of ``MEMHTML_BENCH_RUNS`` (default 3):

- ``load_head`` of the commit: the baseline;
- the scan every source row takes part in, top 5 at cosine 0.85 (corpus order
  included: what a phase pays), and the same at dedup's strict 0.92;
- relationship-mining's scan: 2,000 sampled sources, top 5 at 0.85;
- the full scan at 0.5, where hashing vectors do find neighbours (SciFact's abstracts
  are distinct: at 0.85 there are next to none), so the cost of the pairs shows.

Target (issue 15): the full scan <= 0.3x ``load_head``.
"""

from __future__ import annotations

import os
import resource
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from bench.advance import fastest
from bench.common import run, scifact_dir
from memhtml.adapters.embedders import HashingEmbedder
from memhtml.adapters.git import PygitService
from memhtml.contracts import PathChange, Signature
from memhtml.domain.thresholds import MINING_COSINE, MINING_K, NEAR_DUPLICATE_THRESHOLD
from memhtml.eval.beir import memory_path, read_corpus, render_doc
from memhtml.head import HeadVersion, VectorCache, empty_vector_cache, fill_vectors, load_head
from memhtml.sleep.neighbours import Neighbours, corpus_order, scan_neighbours
from memhtml.sleep.phases.relationship_mining import mine_edges, mining_input

AUTHOR = Signature("bench", "bench@memhtml.invalid")
AT = datetime(2026, 1, 1, tzinfo=UTC)
MEMORIES = 5000
WIDTH = 256
TARGET = 0.3
LOW_FLOOR = 0.5


def full_scan(version: HeadVersion, cache: VectorCache, floor: float, strict: bool
              ) -> Neighbours:
    return scan_neighbours(corpus_order(version), cache, floor=floor, k=MINING_K,
                           strict=strict)


def main() -> None:
    docs = list(read_corpus(scifact_dir() / "corpus.jsonl"))[:MEMORIES]
    git = run(PygitService.init(Path(tempfile.mkdtemp(prefix="memhtml-bench-neighbours-")),
                                bare=True))
    sha = run(git.commit("refs/heads/main", None,
                         [PathChange(memory_path(d), render_doc(d).encode()) for d in docs],
                         "import SciFact", AUTHOR, AT))
    version, load_s = fastest(lambda: run(load_head(git, sha)))
    embedder = HashingEmbedder(WIDTH)
    cache = run(fill_vectors(version, empty_vector_cache(embedder.space), embedder)).cache
    runs = os.environ.get("MEMHTML_BENCH_RUNS", "3")
    print(f"SciFact: {len(docs)} memory files, {len(cache)} vectors {WIDTH} wide; "
          f"fastest of {runs} runs each")
    print(f"load_head                          {load_s:7.3f} s")
    found, scan_s = fastest(lambda: full_scan(version, cache, MINING_COSINE, False))
    dedup, dedup_s = fastest(lambda: full_scan(version, cache, NEAR_DUPLICATE_THRESHOLD,
                                               True))
    crowded, crowded_s = fastest(lambda: full_scan(version, cache, LOW_FLOOR, False))
    mining = mining_input(corpus_order(version), cache)
    edges, mine_s = fastest(lambda: mine_edges(mining, cache))
    for name, took, pairs in (
            (f"scan, all rows, >= {MINING_COSINE}", scan_s, len(found.pairs)),
            (f"scan, all rows, > {NEAR_DUPLICATE_THRESHOLD}", dedup_s, len(dedup.pairs)),
            (f"mining, {len(mining.sources)} sources", mine_s, len(edges)),
            (f"scan, all rows, >= {LOW_FLOOR}", crowded_s, len(crowded.pairs))):
        print(f"{name:<34} {took:7.3f} s   x{took / load_s:5.3f} of load_head   "
              f"{pairs} pairs")
    verdict = "met" if scan_s / load_s <= TARGET else "MISSED"
    print(f"target: full scan <= {TARGET}x load_head: {verdict}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS                           {rss:7.0f} MB")


if __name__ == "__main__":
    main()
