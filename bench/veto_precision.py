"""How often the merge veto refuses what it should and what it should not.

Run from the repository root: ``python -m bench.veto_precision``. Over the generated
pairs of ``memhtml.eval.veto_pairs`` (every form in turn, seeded, so every run reads
the same pairs):

- **flip recall**: the share of flips (a claim against its negation) the negation
  predicate refuses; it must be 100%;
- **false vetoes**: the share of unrelated pairs (one claim and article twice, the
  second with a negated remark about something else added) that any predicate
  refuses; it should be 0%;
- **number flip recall**: the share of number flips (one claim, another value) the
  numeric predicate refuses; it must be 100%;
- **number false vetoes**: the share of number paraphrases (one value written two
  ways: digits and words, two clocks, two units) that any predicate refuses; it
  should be 0%.

Counts, not timings: the figures are the same on every machine.
"""

from __future__ import annotations

from collections import Counter

from memhtml.domain.merge import MergeText, VetoCache
from memhtml.eval.veto_pairs import (
    FLIP_FORMS,
    NUMBER_FORMS,
    UNRELATED_FORMS,
    number_pairs,
    veto_pairs,
)

PAIRS_PER_CLASS = 3_000

_MUST: dict[str, str] = {"flip": "negation", "number flip": "numeric"}
"""The predicate a kind of pair must be refused by; a kind not named must be refused
by none."""


def measure(count: int = PAIRS_PER_CLASS) -> tuple[Counter[tuple[str, str]],
                                                   Counter[tuple[str, str]]]:
    """(pairs, refused) counted by (kind, form); a flip counts as refused when its
    predicate fires (negation, numeric), any other pair when any predicate does."""
    cache = VetoCache()
    seen: Counter[tuple[str, str]] = Counter()
    refused: Counter[tuple[str, str]] = Counter()
    for pair in (*veto_pairs(count), *number_pairs(count)):
        fired = cache.veto(MergeText(*pair.first), MergeText(*pair.second))
        key = (pair.kind, pair.form)
        seen[key] += 1
        must = _MUST.get(pair.kind)
        if (must in fired) if must is not None else bool(fired):
            refused[key] += 1
    return seen, refused


def _line(seen: Counter[tuple[str, str]], refused: Counter[tuple[str, str]], kind: str,
          forms: tuple[str, ...], says: str) -> None:
    total = sum(seen[(kind, form)] for form in forms)
    hit = sum(refused[(kind, form)] for form in forms)
    print(f"{says}: {hit:,} of {total:,} ({100 * hit / total:.1f}%)")
    for form in forms:
        key = (kind, form)
        print(f"  {form:<22} {refused[key]:>5} of {seen[key]:>5}")


def main() -> None:
    seen, refused = measure()
    _line(seen, refused, "flip", FLIP_FORMS, "flip recall: flips vetoed by negation")
    _line(seen, refused, "unrelated", UNRELATED_FORMS,
          "false vetoes: unrelated pairs refused")
    _line(seen, refused, "number flip", NUMBER_FORMS,
          "number flip recall: number flips vetoed by numeric")
    _line(seen, refused, "number paraphrase", NUMBER_FORMS,
          "number false vetoes: number paraphrases refused")


if __name__ == "__main__":
    main()
