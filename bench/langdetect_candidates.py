"""Fence-language candidates side by side: the lexer race, Magika, enry, combinations.

Run through ``python -m bench.langdetect`` (which prints the lexer race's own sweep
first). Each candidate turns a snippet into (canonical language or None, score); a
threshold is then picked on the *design* set (snippets.jsonl) by a stated rule and
only reported on the *held-out* set (heldout.jsonl), never chosen there:

- ``wilson``: the lowest two-decimal threshold whose design precision has a 95%
  Wilson lower bound >= 95%. The rule CLASSIFIER_THRESHOLD comes from.
- ``point``: the lowest two-decimal threshold whose design point precision is
  >= 95%, shown because it is the obvious rule and it does not hold on held-out.
- a fixed value, for a candidate whose threshold is not ours (the deployed lexer
  race's 0.99, Magika's own per-label thresholds).

Per candidate: design precision and coverage, held-out precision (with its Wilson
lower bound) and coverage over the 171 code fences, the share of the 148 non-code
held-out fences left unstamped (all, and by kind: prose and notes, logs and output,
configs and data, other languages and formats), mean warm milliseconds per snippet
over the held-out pass, and the cold start (a fresh interpreter importing the
candidate and answering one snippet; median of 3).

enry is measured when ``enry`` (the enry-python bindings to go-enry) is importable;
it is no dependency of memhtml.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from returns.unsafe import unsafe_perform_io

from bench.langdetect import HELDOUT, PRECISION_FLOOR, SNIPPETS, Snippet, kind, load, wilson_lower
from memhtml.detect import CANONICAL_LANGS, DEPLOY_THRESHOLD, detect, normalize_lang
from memhtml.detect.classified import (
    CLASSIFIER_LANGS,
    CLASSIFIER_MODEL,
    CLASSIFIER_THRESHOLD,
)
from memhtml.detect.detector import looks_like_prose

Guess = tuple[str | None, float]
"""A candidate's answer for one snippet: canonical language (None: nothing to stamp)
and its score; a stamp at threshold t is a language with score >= t."""

GROUPS: dict[str, frozenset[str]] = {
    "prose": frozenset({"prose", "list", "kv-notes", "email-headers", "math", "urls", "ids",
                        "ascii-diagram", "markdown", "regex"}),
    "logs": frozenset({"log", "log-app", "log-access", "syslog", "stacktrace", "output",
                       "http"}),
    "configs": frozenset({"env", "ini", "nginx", "apache", "requirements", "crontab",
                          "gitignore", "csv"}),
}
OTHER = "other"
"""Everything else no stamp fits: languages outside the vocabulary, diffs, sessions."""

SRC = Path(__file__).resolve().parent.parent / "src"
PROBE = "def total(rows):\n    return sum(row.price for row in rows)\n"


@dataclass(frozen=True, slots=True)
class Scored:
    """One candidate's answers on both sets, and what they cost."""

    name: str
    design: list[Guess]
    heldout: list[Guess]
    ms_per_snippet: float


@dataclass(frozen=True, slots=True)
class Figures:
    stamped: int
    correct: int
    coverage: float
    abstain: dict[str, float]

    @property
    def precision(self) -> float:
        return self.correct / self.stamped if self.stamped else 1.0


def group_of(snippet: Snippet) -> str:
    found = kind(snippet)
    return next((name for name, kinds in GROUPS.items() if found in kinds), OTHER)


def figures(snippets: Sequence[Snippet], guesses: Sequence[Guess], threshold: float) -> Figures:
    canonical = sum(1 for s in snippets if s.label in CANONICAL_LANGS)
    stamped = correct = 0
    by_group: dict[str, list[bool]] = {}
    for snippet, (lang, score) in zip(snippets, guesses, strict=True):
        stamps = lang is not None and score >= threshold
        stamped += stamps
        correct += stamps and lang == snippet.label
        if snippet.label not in CANONICAL_LANGS:
            by_group.setdefault("all", []).append(not stamps)
            by_group.setdefault(group_of(snippet), []).append(not stamps)
    abstain = {name: sum(kept) / len(kept) for name, kept in by_group.items()}
    return Figures(stamped, correct, stamped / canonical, abstain)


def pick_threshold(snippets: Sequence[Snippet], guesses: Sequence[Guess], rule: str) -> float:
    """The lowest two-decimal threshold the rule accepts on ``snippets``; 1.01 when
    none does (nothing stamps)."""
    for k in range(101):
        at = figures(snippets, guesses, k / 100)
        if not at.stamped:
            continue
        bound = wilson_lower(at.correct, at.stamped) if rule == "wilson" else at.precision
        if bound >= PRECISION_FLOOR:
            return k / 100
    return 1.01


def _timed(fn: Callable[[str], Guess], snippets: Sequence[Snippet]) -> tuple[list[Guess], float]:
    start = time.perf_counter()
    out = [fn(s.code) for s in snippets]
    return out, (time.perf_counter() - start) * 1000 / len(snippets)


def score(name: str, fn: Callable[[str], Guess], design: Sequence[Snippet],
          heldout: Sequence[Snippet]) -> Scored:
    fn(PROBE)  # the first answer loads lexers or a model; cold start is measured apart
    design_guesses, _ = _timed(fn, design)
    heldout_guesses, ms = _timed(fn, heldout)
    return Scored(name, design_guesses, heldout_guesses, ms)


def cold_start(source: str, runs: int = 3) -> float:
    """Median milliseconds for a fresh interpreter to import and answer ``PROBE``,
    timed inside the child (interpreter start-up itself not counted)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(SRC), str(SRC.parent), *filter(None, [os.environ.get("PYTHONPATH")])])}
    program = ("import time\nstart = time.perf_counter()\n" + source +
               f"\nanswer({PROBE!r})\nprint((time.perf_counter() - start) * 1000)\n")
    times = sorted(float(subprocess.run([sys.executable, "-c", program], env=env,
                                        check=True, capture_output=True, text=True,
                                        timeout=300).stdout.strip().splitlines()[-1])
                   for _ in range(runs))
    return times[len(times) // 2]


# -- the candidates ------------------------------------------------------------------


def lexer_race(code: str) -> Guess:
    """The Pygments race with its prose gate, before any threshold."""
    if looks_like_prose(code):
        return (None, 0.0)
    found = detect(code)
    return (found.lang, found.confidence)


def magika_guesser(gate: bool) -> Callable[[str], Guess]:
    """The shipped adapter's answer through CLASSIFIER_LANGS (the threshold is left to
    the rule); ``gate`` puts the prose gate in front, as ``classify_lang`` does."""
    from memhtml.adapters.magika_classifier import MagikaClassifier

    classifier = MagikaClassifier()

    def guess(code: str) -> Guess:
        if not code.strip() or (gate and looks_like_prose(code)):
            return (None, 0.0)
        found = classifier.classify(code.encode("utf-8", "surrogatepass"))
        answer = unsafe_perform_io(found.value_or(None))
        if answer is None:
            raise RuntimeError(f"the classifier failed: {found}")
        return (CLASSIFIER_LANGS.get(answer.label), answer.score)

    return guess


def magika_vendor() -> Callable[[str], Guess]:
    """Magika in its own default mode (HIGH_CONFIDENCE: per-label thresholds, ``txt``
    below them), its output label through CLASSIFIER_LANGS; no threshold of ours."""
    from magika import Magika, PredictionMode

    model = Magika(prediction_mode=PredictionMode.HIGH_CONFIDENCE)

    def guess(code: str) -> Guess:
        if not code.strip():
            return (None, 0.0)
        label = str(model.identify_bytes(code.encode("utf-8", "surrogatepass")).output.label)
        return (CLASSIFIER_LANGS.get(label), 1.0)

    return guess


def enry_guess(code: str) -> Guess:
    """go-enry's answer with no file name (a fence has none): modelines, shebangs and
    content heuristics only; its Bayesian classifier needs a candidate list the
    bindings do not take, so it never runs."""
    import enry  # type: ignore[import-not-found,import-untyped,unused-ignore]

    name = str(enry.get_language("", code.encode("utf-8", "surrogatepass")))
    return (normalize_lang(name) if name else None, 1.0)


def either(first: Sequence[Guess], first_at: float, second: Sequence[Guess],
           second_at: float) -> list[Guess]:
    """Stamp the first candidate's language when it clears its threshold, else the
    second's when that clears its own (scores become 1 or 0: thresholds applied)."""
    out: list[Guess] = []
    for (a, sa), (b, sb) in zip(first, second, strict=True):
        if a is not None and sa >= first_at:
            out.append((a, 1.0))
        elif b is not None and sb >= second_at:
            out.append((b, 1.0))
        else:
            out.append((None, 0.0))
    return out


# -- the report ----------------------------------------------------------------------


def _row(name: str, rule: str, threshold: float, design: Sequence[Snippet],
         heldout: Sequence[Snippet], scored_design: Sequence[Guess],
         scored_heldout: Sequence[Guess], ms: float | None, cold: float | None) -> str:
    d = figures(design, scored_design, threshold)
    h = figures(heldout, scored_heldout, threshold)
    groups = " ".join(f"{g}={h.abstain.get(g, math.nan):.0%}"
                      for g in ("prose", "logs", "configs", OTHER))
    cost = "" if ms is None else f" | {ms:6.2f} ms/snippet"
    cost += "" if cold is None else f", cold {cold:6.0f} ms"
    at = "none " if threshold > 1.0 else f"{threshold:<5.2f}"
    return (f"{name:<34} {rule:<7} t={at}| design {d.precision:6.1%} "
            f"({d.correct}/{d.stamped}) cov {d.coverage:5.1%} | held-out {h.precision:6.1%} "
            f"({h.correct}/{h.stamped}, lower {wilson_lower(h.correct, h.stamped):5.1%}) "
            f"cov {h.coverage:5.1%} | non-code abstain {h.abstain['all']:5.1%} "
            f"({groups}){cost}")


def _importable(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def report_candidates(design: Sequence[Snippet], heldout: Sequence[Snippet]) -> None:
    print()
    print("candidates (threshold chosen on the design set by the rule shown; "
          f"floor {PRECISION_FLOOR:.0%}):")
    lexers = score("pygments race + prose gate", lexer_race, design, heldout)
    lexers_cold = cold_start("from memhtml.detect import detect_lang as answer")
    print(_row(lexers.name, "fixed", DEPLOY_THRESHOLD, design, heldout, lexers.design,
               lexers.heldout, lexers.ms_per_snippet, lexers_cold))
    at = pick_threshold(design, lexers.design, "wilson")
    print(_row(lexers.name, "wilson", at, design, heldout, lexers.design, lexers.heldout,
               None, None))
    if not _importable("magika"):
        print("magika: not installed (pip install 'memhtml[local]')")
    else:
        gated = score("magika + label map + prose gate", magika_guesser(True), design, heldout)
        cold = cold_start("from memhtml.adapters.magika_classifier import MagikaClassifier\n"
                          "from memhtml.detect.classified import classify_lang\n"
                          "classifier = MagikaClassifier()\n"
                          "def answer(code):\n"
                          "    return classify_lang(classifier, code)")
        for rule in ("point", "wilson"):
            at = pick_threshold(design, gated.design, rule)
            print(_row(gated.name, rule, at, design, heldout, gated.design, gated.heldout,
                       gated.ms_per_snippet if rule == "wilson" else None,
                       cold if rule == "wilson" else None))
        chosen = pick_threshold(design, gated.design, "wilson")
        if not math.isclose(chosen, CLASSIFIER_THRESHOLD):
            print(f"  the rule now gives {chosen:.2f}, CLASSIFIER_THRESHOLD is "
                  f"{CLASSIFIER_THRESHOLD:.2f}: re-derive it ({CLASSIFIER_MODEL})")
        bare = score("magika + label map, no prose gate", magika_guesser(False), design,
                     heldout)
        at = pick_threshold(design, bare.design, "wilson")
        print(_row(bare.name, "wilson", at, design, heldout, bare.design, bare.heldout,
                   None, None))
        vendor = score("magika own thresholds + label map", magika_vendor(), design,
                       heldout)
        print(_row(vendor.name, "fixed", 1.0, design, heldout, vendor.design, vendor.heldout,
                   vendor.ms_per_snippet, None))
        combined_design = either(gated.design, chosen, lexers.design, DEPLOY_THRESHOLD)
        combined_heldout = either(gated.heldout, chosen, lexers.heldout, DEPLOY_THRESHOLD)
        print(_row("magika, else pygments at 0.99", "fixed", 1.0, design, heldout,
                   combined_design, combined_heldout, None, None))
        _wrong_stamps(heldout, gated.heldout, CLASSIFIER_THRESHOLD)
    if not _importable("enry"):
        print("enry: not installed (pip install enry-python; no dependency of memhtml)")
    else:
        found = score("enry, no file name", enry_guess, design, heldout)
        print(_row(found.name, "fixed", 1.0, design, heldout, found.design, found.heldout,
                   found.ms_per_snippet, cold_start(
                       "import enry\n"
                       "def answer(code):\n"
                       "    return enry.get_language('', code.encode())")))


def _wrong_stamps(heldout: Sequence[Snippet], guesses: Sequence[Guess],
                  threshold: float) -> None:
    stamped = [(s, g) for s, g in zip(heldout, guesses, strict=True)
               if g[0] is not None and g[1] >= threshold]
    print(f"  held-out stamps at CLASSIFIER_THRESHOLD {threshold:.2f}, per language:")
    for canonical in CANONICAL_LANGS:
        code = [s for s in heldout if s.label == canonical]
        right = sum(1 for s, g in stamped if s.label == canonical and g[0] == canonical)
        print(f"    {canonical:<10} {right:2d}/{len(code)}")
    for snippet, (lang, found) in stamped:
        if lang != snippet.label:
            print(f"    wrong stamp: {snippet.id} labeled {snippet.label} -> {lang} "
                  f"({found:.3f})")


def main() -> None:
    report_candidates(load(SNIPPETS), load(HELDOUT))


if __name__ == "__main__":
    main()
