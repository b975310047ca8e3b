"""Threshold sweep for the fence-language detector, on the design set and a held-out set.

Run from the repository root: ``python -m bench.langdetect``.

Two labeled sets go through detect(), each in tests/data/langdetect/:

- ``snippets.jsonl``, the *design* set: the 345 snippets the scorer was built on
  and the original threshold was picked on. Figures on it are optimistic.
- ``heldout.jsonl``, the *held-out* set: fences written after the scorer was
  frozen and never used to tune it. Its rows carry ``"set": "heldout"``, and a
  fence no language should be stamped on has the label ``null`` (the design set
  spells that ``"other:<kind>"``). The held-out figures are the ones that
  decide DEPLOY_THRESHOLD.

A *stamp* at threshold t is a detection whose language is in the vocabulary and
whose confidence is >= t; it is *correct* when it equals the snippet's label.
precision(t) = correct / stamps, coverage(t) = stamps / snippets whose label is a
canonical language (snippets labeled null or "other:..." count against precision
when stamped but are not in the coverage denominator). Each precision is
printed with its 95% Wilson lower bound, because a handful of stamps says little.

Candidate thresholds are the distinct confidences of in-vocabulary detections.
The measured operating point is the lowest candidate threshold whose precision
is still >= the floor. Precision is not monotone in the threshold, so this is a
global minimum over all candidates, not the first dip when walking down. The
deployable value is the lowest two-decimal threshold whose held-out precision
is >= the floor (a grid sweep, so it needs no rounding). The deployed threshold
is then checked on its own on both sets, and the held-out precision/coverage
curve is printed over the two-decimal grid beside the design set's.
Re-run after any Pygments bump and re-derive DEPLOY_THRESHOLD from the output.

After the lexer race's sweep, ``bench.langdetect_candidates`` prints the candidates
side by side (the lexer race, Magika with the label map and the threshold chosen
on the design set, Magika's own thresholds, a combination, enry when installed):
precision, coverage, abstention on non-code fences and cost. Re-run after a Magika
bump and re-derive CLASSIFIER_THRESHOLD from it.
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from memhtml.detect import (
    CANONICAL_LANGS,
    DEPLOY_THRESHOLD,
    MAX_DETECT_CHARS,
    Detection,
    detect,
)

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "langdetect"
SNIPPETS = DATA / "snippets.jsonl"
HELDOUT = DATA / "heldout.jsonl"
PRECISION_FLOOR = 0.95

# The two-decimal grid the held-out curve is printed over and DEPLOY_THRESHOLD
# is chosen from.
CURVE = tuple(k / 100 for k in range(50, 100))


@dataclass(frozen=True, slots=True)
class Snippet:
    id: str
    label: str | None
    code: str
    set: str = "design"


@dataclass(frozen=True, slots=True)
class Point:
    threshold: float
    precision: float
    coverage: float
    stamped: int
    correct: int


def load(path: Path = SNIPPETS) -> list[Snippet]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            raw = json.loads(line)
            rows.append(
                Snippet(
                    id=raw["id"],
                    label=raw["label"],
                    code=raw["code"],
                    set=raw.get("set", "design"),
                )
            )
    return rows


def kind(snippet: Snippet) -> str:
    """The label for a canonical-language snippet, else what kind of non-stamp it is.

    Design rows spell it in the label (``other:prose``); held-out rows have a
    null label and an id of the form ``null-<kind>-NN``.
    """
    if snippet.label in CANONICAL_LANGS:
        return snippet.label
    if snippet.label is not None and snippet.label.startswith("other:"):
        return snippet.label.removeprefix("other:")
    stem = snippet.id.rsplit("-", 1)[0]
    return stem.removeprefix("null-")


def at_threshold(snippets: list[Snippet], detections: list[Detection], threshold: float) -> Point:
    canonical = sum(1 for s in snippets if s.label in CANONICAL_LANGS)
    stamped = correct = 0
    for snippet, found in zip(snippets, detections, strict=True):
        if found.lang is not None and found.confidence >= threshold:
            stamped += 1
            correct += found.lang == snippet.label
    precision = correct / stamped if stamped else 1.0
    return Point(threshold, precision, stamped / canonical, stamped, correct)


def operating_point(
    snippets: list[Snippet], detections: list[Detection], floor: float = PRECISION_FLOOR
) -> Point | None:
    """Lowest candidate threshold whose precision is >= floor, or None."""
    candidates = sorted(
        {d.confidence for d in detections if d.lang is not None and d.confidence > 0.0}
    )
    for threshold in candidates:
        point = at_threshold(snippets, detections, threshold)
        if point.precision >= floor:
            return point
    return None


def lowest_grid_threshold(
    snippets: list[Snippet],
    detections: list[Detection],
    floor: float = PRECISION_FLOOR,
    places: int = 2,
) -> Point | None:
    """Lowest ``places``-decimal threshold that stamps something at precision >= floor."""
    scale = 10**places
    for k in range(scale + 1):
        point = at_threshold(snippets, detections, k / scale)
        if point.stamped and point.precision >= floor:
            return point
    return None


def round_up(threshold: float, places: int = 2) -> float:
    scale = 10.0**places
    return math.ceil(threshold * scale - 1e-9) / scale


def wilson_lower(correct: int, stamped: int, z: float = 1.96) -> float:
    """Lower end of the 95% Wilson score interval for correct / stamped."""
    if stamped == 0:
        return 0.0
    p = correct / stamped
    centre = p + z * z / (2 * stamped)
    spread = z * math.sqrt(p * (1 - p) / stamped + z * z / (4 * stamped * stamped))
    return (centre - spread) / (1 + z * z / stamped)


def _fmt(point: Point) -> str:
    return (
        f"threshold={point.threshold:.4f} precision={point.precision:.2%} "
        f"(95% lower bound {wilson_lower(point.correct, point.stamped):.1%}) "
        f"coverage={point.coverage:.2%} stamped={point.stamped} correct={point.correct}"
    )


def _timing() -> float:
    """Median milliseconds of detect() on a realistic snippet just under the cap."""
    unit = (
        "def handler(event, context):\n"
        "    items = [transform(x) for x in event['records'] if x.get('ok')]\n"
        "    return {'count': len(items), 'items': items}\n\n"
    )
    code = (unit * (MAX_DETECT_CHARS // len(unit)))[: MAX_DETECT_CHARS - 1]
    detect(code)  # first call builds the lexers
    runs = []
    for _ in range(7):
        start = time.perf_counter()
        detect(code)
        runs.append((time.perf_counter() - start) * 1000)
    return sorted(runs)[len(runs) // 2]


def _report_set(name: str, snippets: list[Snippet], detections: list[Detection]) -> None:
    langs = Counter(s.label for s in snippets if s.label in CANONICAL_LANGS)
    others = Counter(kind(s) for s in snippets if s.label not in CANONICAL_LANGS)
    print(f"{name} set: {len(snippets)} snippets")
    print(f"  canonical ({sum(langs.values())}): {dict(sorted(langs.items()))}")
    print(f"  no stamp wanted ({sum(others.values())}): {dict(sorted(others.items()))}")

    measured = operating_point(snippets, detections)
    if measured is None:
        print(f"  precision never reaches {PRECISION_FLOOR:.0%}")
    else:
        print(f"  measured operating point: {_fmt(measured)}")
        print(f"    rounded up to two decimals: {round_up(measured.threshold):.2f}")
    grid = lowest_grid_threshold(snippets, detections)
    if grid is not None:
        print(f"  lowest two-decimal threshold at the floor: {_fmt(grid)}")
    deployed = at_threshold(snippets, detections, DEPLOY_THRESHOLD)
    print(f"  deployed DEPLOY_THRESHOLD: {_fmt(deployed)}")

    stamped = [
        (s, d)
        for s, d in zip(snippets, detections, strict=True)
        if d.lang is not None and d.confidence >= DEPLOY_THRESHOLD
    ]
    for snippet, found in stamped:
        if found.lang != snippet.label:
            print(
                f"    wrong stamp: {snippet.id} labeled {snippet.label} -> {found.lang} "
                f"({found.confidence:.4f})"
            )
    per_lang = Counter(s.label for s, d in stamped if d.lang == s.label)
    print("    correct stamps per language:", dict(sorted(per_lang.items())))


def main() -> None:
    design = load(SNIPPETS)
    heldout = load(HELDOUT)
    design_found = [detect(s.code) for s in design]
    heldout_found = [detect(s.code) for s in heldout]

    _report_set("design", design, design_found)
    _report_set("held-out", heldout, heldout_found)

    print("held-out precision/coverage curve (design set beside it):")
    print("  threshold | held-out precision coverage stamped/correct | design same")
    for threshold in CURVE:
        h = at_threshold(heldout, heldout_found, threshold)
        d = at_threshold(design, design_found, threshold)
        mark = "  <- deployed" if math.isclose(threshold, DEPLOY_THRESHOLD) else ""
        print(
            f"  {threshold:.2f}      | {h.precision:7.2%} {h.coverage:7.2%} "
            f"{h.stamped:3d}/{h.correct:<3d} | {d.precision:7.2%} {d.coverage:7.2%} "
            f"{d.stamped:3d}/{d.correct:<3d}{mark}"
        )
    print(f"detect() on a {MAX_DETECT_CHARS - 1}-char snippet: {_timing():.1f} ms (median of 7)")
    print("the candidates beside it (Magika, enry): python -m bench.langdetect_candidates")


if __name__ == "__main__":
    main()
