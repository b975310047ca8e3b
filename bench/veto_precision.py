"""How often the merge veto refuses what it should and what it should not.

Run from the repository root: ``python -m bench.veto_precision``. Over the generated
pairs of ``memhtml.eval.veto_pairs`` (every flip form and both unrelated-remark forms
in turn, seeded, so every run reads the same pairs):

- **flip recall**: the share of flips (a claim against its negation) the negation
  predicate refuses; it must be 100%;
- **false vetoes**: the share of unrelated pairs (one claim and article twice, the
  second with a negated remark about something else added) that any predicate
  refuses; it should be 0%.

Counts, not timings: the figures are the same on every machine.
"""

from __future__ import annotations

from collections import Counter

from memhtml.domain.merge import MergeText, VetoCache
from memhtml.eval.veto_pairs import FLIP_FORMS, UNRELATED_FORMS, veto_pairs

PAIRS_PER_CLASS = 3_000


def measure(count: int = PAIRS_PER_CLASS) -> tuple[Counter[tuple[str, str]],
                                                   Counter[tuple[str, str]]]:
    """(pairs, refused) counted by (kind, form); a flip counts as refused when the
    negation predicate fires, an unrelated pair when any predicate does."""
    cache = VetoCache()
    seen: Counter[tuple[str, str]] = Counter()
    refused: Counter[tuple[str, str]] = Counter()
    for pair in veto_pairs(count):
        fired = cache.veto(MergeText(*pair.first), MergeText(*pair.second))
        key = (pair.kind, pair.form)
        seen[key] += 1
        if ("negation" in fired) if pair.kind == "flip" else bool(fired):
            refused[key] += 1
    return seen, refused


def main() -> None:
    seen, refused = measure()
    flips = sum(n for (kind, _), n in seen.items() if kind == "flip")
    caught = sum(n for (kind, _), n in refused.items() if kind == "flip")
    others = sum(n for (kind, _), n in seen.items() if kind == "unrelated")
    vetoed = sum(n for (kind, _), n in refused.items() if kind == "unrelated")
    print(f"flip recall: {caught:,} of {flips:,} flips vetoed by negation "
          f"({100 * caught / flips:.1f}%)")
    for form in FLIP_FORMS:
        key = ("flip", form)
        print(f"  {form:<22} {refused[key]:>5} of {seen[key]:>5}")
    print(f"false vetoes: {vetoed:,} of {others:,} unrelated pairs refused "
          f"({100 * vetoed / others:.1f}%)")
    for form in UNRELATED_FORMS:
        key = ("unrelated", form)
        print(f"  {form:<22} {refused[key]:>5} of {seen[key]:>5}")


if __name__ == "__main__":
    main()
