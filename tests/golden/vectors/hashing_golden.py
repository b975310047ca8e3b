"""The vector arm ranked with the hashing embedder, as golden data.

The head golden corpus is committed to a repository, its vectors are filled with
``HashingEmbedder`` through ``fill_vectors``, and a fixed query set is searched with
the vector arm alone and fused with the lexical arm. Run this module to rewrite
``expected.json``; review the diff by eye before committing it.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from tests.golden.head.head_corpus import _files
from tests.property.head_support import commit, new_repo, run

from memhtml.adapters.embedders import HashingEmbedder
from memhtml.head import (
    SearchHeadInput,
    empty_vector_cache,
    fill_vectors,
    indexes_of,
    load_head,
    search_head,
)
from memhtml.head.search import (
    VECTOR_ARM_LIMIT,
    arm_ranks,
)
from memhtml.head.vector_arm import vector_scores

EXPECTED = Path(__file__).with_name("expected.json")
QUERIES = (
    "canary deploys take ten percent of traffic",
    "release freeze blocks merges",
    "cache eviction policy",
    "how long does the canary run before promotion",
    "quarterly budget report",
)


def build(tmp: Path) -> dict[str, object]:
    git = new_repo(tmp)
    version = run(load_head(git, commit(git, None, _files())))
    embedder = HashingEmbedder()
    fill = run(fill_vectors(version, empty_vector_cache(embedder.space), embedder))
    out: dict[str, object] = {
        "space": {"model_id": embedder.space.model_id, "dimension": embedder.space.dimension},
        "fill": {"records": fill.counts.records, "reused": fill.counts.reused,
                 "embedded": fill.counts.embedded, "empty": fill.counts.empty,
                 "remaining": fill.remaining},
        "queries": {},
    }
    queries: dict[str, object] = {}
    for query in QUERIES:
        vector = run(embedder.embed_query(query))
        ranked = arm_ranks(vector_scores(indexes_of(version), fill.cache, vector), VECTOR_ARM_LIMIT)
        fused = search_head(version, SearchHeadInput(query, limit=5, vectors=fill.cache,
                                                     query_vector=vector))
        queries[query] = {
            "vector_arm": [[path, rank] for path, rank in ranked[:8]],
            "hybrid": [{"path": h.path, "score": round(h.score, 12), "arms": list(h.arms)}
                       for h in fused],
        }
    out["queries"] = queries
    return out


def dump(value: object) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        EXPECTED.write_text(dump(build(Path(tmp))), encoding="utf-8")
    sys.exit(0)
