"""Threshold sweep for the fence-language detector.

Run from the repository root: ``python -m bench.langdetect``.

Every snippet in tests/data/langdetect/snippets.jsonl goes through detect().
A *stamp* at threshold t is a detection whose language is in the vocabulary and
whose confidence is >= t; it is *correct* when it equals the snippet's label.
precision(t) = correct / stamps, coverage(t) = stamps / canonical-language
snippets (snippets labeled "other:..." count against precision when stamped but
are not in the coverage denominator).

Candidate thresholds are the distinct confidences of in-vocabulary detections.
The measured operating point is the lowest candidate threshold whose precision
is still >= the floor. Precision is not monotone in the threshold, so this is a
global minimum over all candidates, not the first dip when walking down; the
deployed threshold is then checked on its own and both figures are printed.
Re-run after any Pygments bump and re-derive DEPLOY_THRESHOLD from the output.
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

SNIPPETS = (
    Path(__file__).resolve().parent.parent / "tests" / "data" / "langdetect" / "snippets.jsonl"
)
PRECISION_FLOOR = 0.95


@dataclass(frozen=True, slots=True)
class Snippet:
    id: str
    label: str
    code: str


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
            rows.append(Snippet(id=raw["id"], label=raw["label"], code=raw["code"]))
    return rows


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


def round_up(threshold: float, places: int = 2) -> float:
    scale = 10.0**places
    return math.ceil(threshold * scale - 1e-9) / scale


def _fmt(point: Point) -> str:
    return (
        f"threshold={point.threshold:.4f} precision={point.precision:.2%} "
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


def main() -> None:
    snippets = load()
    detections = [detect(s.code) for s in snippets]
    labels = Counter(s.label if s.label in CANONICAL_LANGS else "other" for s in snippets)
    print(f"snippets: {len(snippets)} ({dict(sorted(labels.items()))})")

    measured = operating_point(snippets, detections)
    if measured is None:
        print(f"precision never reaches {PRECISION_FLOOR:.0%}")
    else:
        print(f"measured operating point: {_fmt(measured)}")
        print(f"  rounded up to two decimals: {round_up(measured.threshold):.2f}")
    deployed = at_threshold(snippets, detections, DEPLOY_THRESHOLD)
    print(f"deployed DEPLOY_THRESHOLD: {_fmt(deployed)}")

    wrong = [
        (s, d)
        for s, d in zip(snippets, detections, strict=True)
        if d.lang is not None and d.confidence >= DEPLOY_THRESHOLD and d.lang != s.label
    ]
    for snippet, found in wrong:
        print(
            f"  wrong stamp: {snippet.id} labeled {snippet.label} -> {found.lang} "
            f"({found.confidence:.3f})"
        )
    per_lang = Counter(
        s.label
        for s, d in zip(snippets, detections, strict=True)
        if d.lang is not None and d.confidence >= DEPLOY_THRESHOLD and d.lang == s.label
    )
    print("  correct stamps per language:", dict(sorted(per_lang.items())))
    print(f"detect() on a {MAX_DETECT_CHARS - 1}-char snippet: {_timing():.1f} ms (median of 7)")


if __name__ == "__main__":
    main()
