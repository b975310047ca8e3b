"""Where a text's first sentence ends, for a claim taken from prose.

A period is a weak signal: ``e.g. the cache``, ``Dr. Lee`` and ``J. Smith`` hold one
that ends nothing. A break is taken after ``.``, ``!`` or ``?`` (and any closing
quotes or brackets) followed by whitespace, except when the next word starts in lower
case, or the word the period closes is a known abbreviation or a single letter (an
initial). Both ways of erring are kept small rather than one of them made zero: a
sentence that ends on an abbreviation runs on into the next one, which keeps a claim
whole where cutting it would leave half a thought.
"""

from __future__ import annotations

import re

__all__ = ["ABBREVIATIONS", "sentence_break"]

ABBREVIATIONS: frozenset[str] = frozenset({
    "e.g", "i.e", "cf", "vs", "viz", "al", "approx", "ca", "fig", "figs", "no", "nos",
    "vol", "pp", "p", "ch", "sec", "eq", "ref", "refs", "mr", "mrs", "ms", "dr", "prof",
    "sr", "jr", "st", "mt", "gen", "col", "lt", "sgt", "rev", "inc", "ltd", "co", "corp",
    "dept", "est", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
    "nov", "dec", "u.s", "u.k", "a.m", "p.m",
})
"""Words (lower case, inner periods kept, the final one dropped) after which a period
does not end a sentence."""

_BOUNDARY = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(\s+)")
_WORD_BEFORE = re.compile(r"([\w.]+)$")


def sentence_break(text: str) -> tuple[int, int] | None:
    """The span of whitespace that ends the first sentence of ``text``, or None when
    it is all one sentence. The first sentence is ``text[:start]``."""
    for hit in _BOUNDARY.finditer(text):
        after = text[hit.end():hit.end() + 1]
        if after.islower():
            continue
        if text[hit.start()] == ".":
            word = _WORD_BEFORE.search(text, 0, hit.start())
            if word is not None:
                lowered = word.group(1).lower()
                if lowered in ABBREVIATIONS or (len(lowered) == 1 and lowered.isalpha()):
                    continue
        return hit.start(1), hit.end(1)
    return None
