"""Fence-language detection: a write-time guess at an unlabeled fence's language.

An agent that writes a fence without a language gives the write path nothing to
stamp, and a wrong ``data-lang`` is worse than a missing one: it promotes to a
``lang:`` entity and misfiles the memory. So the detector abstains unless the
evidence for one language clearly beats the evidence for every real alternative.

This is a room of its own, not part of the file format. The format only carries
``data-lang``; it never guesses one. The guess depends on one exact Pygments
release or Magika model (pinned in ``pyproject.toml``), so it lives apart from the
format, whose meaning must not change with an installed library, and the store's
write path hands its detector to the template explicitly. A stamp lands in the
file, which is the system of record, and nothing re-detects on rebuild, so the
index never depends on which library happens to be installed.

How the score is built, and the measurements behind every constant here, are in
``docs/design.md`` and ``docs/benchmarks.md``; ``python -m bench.langdetect``
re-runs the sweep that fixed DEPLOY_THRESHOLD.

Importing this package loads no lexer: the Pygments lexer registry is imported
on the first detection that needs it.

``memhtml.detect.classified`` is the other way to guess, and the one writes use
where the ``local`` extra is installed: a content classifier (Magika, behind the
``ContentClassifier`` port) whose labels map onto the vocabulary from a threshold
measured the same way. The composition root picks between the two
(``memhtml.compose.detection``); this package never loads a model.
"""

from memhtml.detect.detector import (
    DEPLOY_THRESHOLD,
    MAX_DETECT_CHARS,
    Detection,
    detect,
    detect_lang,
)
from memhtml.detect.vocabulary import CANONICAL_LANGS, CanonicalLang, normalize_lang

__all__ = [
    "CANONICAL_LANGS",
    "DEPLOY_THRESHOLD",
    "MAX_DETECT_CHARS",
    "CanonicalLang",
    "Detection",
    "detect",
    "detect_lang",
    "normalize_lang",
]
