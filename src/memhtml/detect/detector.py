"""The race between candidate lexers, and the two gates on its winner.

Every candidate lexer scores the snippet (see ``memhtml.detect.evidence``); the
winner's confidence is its per-line margin over the closest competitor that
would stamp something else, and a stamp needs both a winner in the vocabulary
and a confidence of at least DEPLOY_THRESHOLD.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from memhtml.detect.evidence import candidate_lexers, lexer_evidence
from memhtml.detect.vocabulary import CanonicalLang, normalize_lang

__all__ = ["DEPLOY_THRESHOLD", "MAX_DETECT_CHARS", "Detection", "detect", "detect_lang",
           "looks_like_prose"]

# Chosen on the held-out set (tests/data/langdetect/heldout.jsonl, written after the
# scorer was frozen; Pygments 2.20.0): the lowest two-decimal threshold whose held-out
# precision reaches 95%. At the design set's own operating point (0.66) held-out
# precision was 72%, and it stays between 58% and 78% up to 0.98, so the guess is
# all but switched off: a wrong language label is worse than none. A better scorer
# is measured against the same held-out set before the threshold comes down.
DEPLOY_THRESHOLD: Final = 0.99

# Every candidate lexer's cost grows with the input and the MCP server is a
# single process, so a large unlabeled fence abstains rather than stall it.
MAX_DETECT_CHARS: Final = 4096


@dataclass(frozen=True, slots=True)
class Detection:
    """What the detector concluded, before DEPLOY_THRESHOLD is applied.

    ``confidence`` is a monotone evidence score in [0, 1), not a calibrated
    probability; it means something only when compared with DEPLOY_THRESHOLD.
    ``lang`` is None when nothing scored or when the winning lexer is outside
    the vocabulary; confidence still reports how clearly that lexer won.
    """

    lang: CanonicalLang | None
    confidence: float


_ABSTAIN: Final = Detection(lang=None, confidence=0.0)

# A winner's echo is a lexer that matches everything the winner matches: every
# JavaScript program is TypeScript, and the XML lexer tags HTML markup exactly
# as the HTML lexer does. The echo can only outscore the winner with evidence of
# its own (type annotations, an XML prolog), in which case it wins instead; a
# tie is not disagreement and must not cancel the winner's margin.
_ECHOES: Final[dict[str, frozenset[str]]] = {
    "javascript": frozenset({"typescript"}),
    "html": frozenset({"xml"}),
}

# Above this size the full race is too slow: every candidate scores a prefix of
# this many characters, and only the leaders are re-scored on the whole text.
_SCREEN_CHARS: Final = 300
_FINALISTS: Final = 3


def _screen_prefix(code: str) -> str:
    cut = code.rfind("\n", 0, _SCREEN_CHARS)
    return code[: cut + 1] if cut > 0 else code[:_SCREEN_CHARS]


def _ranked(code: str) -> list[tuple[float, int, str]]:
    """(score, candidate index, alias), best first, ties to the earlier candidate."""
    lexers = candidate_lexers()
    pool: Iterable[int] = range(len(lexers))
    if len(code) > _SCREEN_CHARS:
        prefix = _screen_prefix(code)
        screened = sorted((-lexer_evidence(lexers[i][1], lexers[i][2], prefix), i) for i in pool)
        pool = sorted(i for _, i in screened[:_FINALISTS])
    scored = [(lexer_evidence(lexers[i][1], lexers[i][2], code), i, lexers[i][0]) for i in pool]
    scored.sort(key=lambda row: (-row[0], row[1]))
    return scored


def _runner_up(ranked: Sequence[tuple[float, int, str]]) -> float:
    """Score of the closest competitor that disagrees about what to stamp."""
    _, _, winner = ranked[0]
    winner_lang = normalize_lang(winner)
    echoes = _ECHOES.get(winner, frozenset())
    for score, _, alias in ranked[1:]:
        if alias in echoes:
            continue
        lang = normalize_lang(alias)
        # A dialect duel (postgresql vs sql) is agreement on the token to stamp.
        if winner_lang is not None and lang == winner_lang:
            continue
        return max(score, 0.0)
    return 0.0


def detect(code: str) -> Detection:
    """Best language for an unlabeled fence and how clearly it won.

    confidence = 1 - exp(-(top - runner_up) / lines): the per-line evidence
    margin between the winning lexer and its closest real competitor. Per line,
    because raw evidence grows with length and would read "long" as "sure".
    """
    if len(code) > MAX_DETECT_CHARS or not code.strip():
        return _ABSTAIN
    if not code.endswith("\n"):
        code += "\n"
    ranked = _ranked(code)
    top, _, winner = ranked[0]
    if top <= 0.0:
        return _ABSTAIN
    margin = top - _runner_up(ranked)
    lines = max(1, len(code.strip("\n").splitlines()))
    confidence = 1.0 - math.exp(-max(margin, 0.0) / lines)
    return Detection(lang=normalize_lang(winner), confidence=confidence)


_PROSE_LINE = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*(?:[ ,;:()\"“”]+[^\W_]+(?:['’-][^\W_]+)*)*"
                         r"[.!?…]?[\"”)]*")
_SENTENCE_END = re.compile(r"[.!?…][\"”)]*$")
_PROSE_MIN_WORDS = 4


def looks_like_prose(code: str) -> bool:
    """True for text a person wrote as sentences: every line is words separated by
    spaces and sentence punctuation only (no operator, bracket, quote-delimited
    token, assignment or path character), at least four words in all, and every
    line ends a sentence. Such a fence holds no code, whatever a lexer's keyword
    list says about its words (``order``, ``from``, ``table`` are SQL keywords)."""
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    if not lines:
        return False
    words = sum(len(line.split()) for line in lines)
    return (words >= _PROSE_MIN_WORDS
            and all(_PROSE_LINE.fullmatch(line) for line in lines)
            and all(_SENTENCE_END.search(line) for line in lines))


def detect_lang(code: str) -> CanonicalLang | None:
    """The language to stamp on an unlabeled fence, or None to stamp nothing.

    Three independent gates: the fence must not read as prose (``looks_like_prose``),
    the winner must be in the vocabulary, and it must have won by at least
    DEPLOY_THRESHOLD. A confident win by a lexer outside the vocabulary is still
    nothing to stamp.
    """
    if looks_like_prose(code):
        return None
    found = detect(code)
    if found.lang is None or found.confidence < DEPLOY_THRESHOLD:
        return None
    return found.lang
