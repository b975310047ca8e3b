"""bench/grounded: the word-overlap shares ``sleep.grounded`` reads, on the planted corpus.

The figures its floors were set from (``CARRIED_FLOOR``, ``DRAWN_FLOOR``; see that
module and docs/design.md): how much of a member's claim its planted paraphrase,
near duplicate and copies carry, and how often an unrelated member's text, or a
canonical made of two unrelated members, would pass for carrying it. Seeded, so a
run prints the same numbers.

    python -m bench.grounded
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence

from returns.pipeline import is_successful

from memhtml.contracts.record import MemoryRecord
from memhtml.eval.planted import plant_corpus, synthetic_docs
from memhtml.head import record_from
from memhtml.sleep.grounded import CARRIED_FLOOR, DRAWN_FLOOR, carried, source_terms

SEED = 7
PAIRS = 5_000
TRIPLES = 3_000


def _terms(record: MemoryRecord) -> frozenset[str]:
    return source_terms([record.title, record.claim, record.body_text])


def _spread(values: Sequence[float]) -> str:
    ordered = sorted(values)
    n = len(ordered)
    return (f"n={n} min={ordered[0]:.3f} p10={ordered[n // 10]:.3f} "
            f"median={statistics.median(ordered):.3f} max={ordered[-1]:.3f}")


def main() -> None:
    corpus = plant_corpus(synthetic_docs()).unwrap()
    records: dict[str, MemoryRecord] = {}
    for path, data in corpus.files.items():
        got = record_from(data.decode("utf-8"), path)
        if is_successful(got):  # a file the head refuses is no member
            records[path] = got.unwrap()
    print(f"floors: carried {CARRIED_FLOOR}, drawn {DRAWN_FLOOR}")
    for kind in ("paraphrase", "near", "exact", "frame_key"):
        shares = [carried(records[p.newer].claim, _terms(records[p.older]))
                  for p in corpus.manifest.of_kind(kind)
                  if p.newer in records and p.older in records]
        if shares:
            print(f"{kind:>10}: claim carried by its pair  {_spread(shares)}")
    base = [p for p in corpus.manifest.base_paths if p in records]
    rng = random.Random(SEED)
    pairs = [rng.sample(base, 2) for _ in range(PAIRS)]
    one = [carried(records[b].claim, _terms(records[a])) for a, b in pairs]
    triples = [rng.sample(base, 3) for _ in range(TRIPLES)]
    two = [carried(records[c].claim, _terms(records[a]) | _terms(records[b]))
           for a, b, c in triples]
    for floor in (0.5, 0.6, 0.7, 0.8):
        alone = sum(v >= floor for v in one) / len(one)
        paired = sum(v >= floor for v in two) / len(two)
        print(f"unrelated at or above {floor}: one member {alone:.4f}, "
              f"a two-member canonical {paired:.4f}")


if __name__ == "__main__":
    main()
