"""The fence-language guess writes use: the content classifier, or the lexer race.

Where the ``local`` extra is installed (Magika and ONNX Runtime) and its Magika is
the release measured (``CLASSIFIER_MODEL``), an unlabeled fence is stamped from the
classifier (``memhtml.detect.classified``); otherwise from the pinned Pygments race
(``memhtml.detect.detect_lang``), which is pure and stamps almost nothing. The choice
is made at the first unlabeled fence, not when a command starts: looking for the
packages and reading Magika's release costs milliseconds a command that never meets
such a fence should not pay, and onnxruntime is imported only when the model is
first asked.

A classifier that cannot answer (its model unreadable, its runtime failing) stamps
nothing: the fence stays unlabeled and the write goes on, since a guess is never
worth refusing a memory over.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from returns.unsafe import unsafe_perform_io

if TYPE_CHECKING:
    from memhtml.contracts.classifier import ContentClassifier
    from memhtml.store.deps import Detector

__all__ = ["FenceDetector", "fence_detector"]


class FenceDetector:
    """A ``Detector`` (text in, a canonical language or None out) that picks its way
    of guessing on first use.

    ``classifier`` builds the classifier to try (None: the lexer race only), called
    once; it is used only when its ``model_id`` is ``CLASSIFIER_MODEL``.
    """

    def __init__(self, classifier: Callable[[], ContentClassifier | None]) -> None:
        self._make = classifier
        self._lock = threading.Lock()
        self._chosen: Detector | None = None
        self._chosen_in: int | None = None
        self.model_id: str | None = None
        # The classifier in use once chosen; None for the lexer race (or not yet).

    def __call__(self, code: str) -> str | None:
        return self._pick()(code)

    def _pick(self) -> Detector:
        with self._lock:
            # Chosen again in a forked child (``adapters.fork_pool``): a runtime loaded
            # before the fork may count on threads the child does not have.
            if self._chosen is None or self._chosen_in != os.getpid():
                self._chosen = self._choose()
                self._chosen_in = os.getpid()
            return self._chosen

    def _choose(self) -> Detector:
        from memhtml.detect import detect_lang
        from memhtml.detect.classified import CLASSIFIER_MODEL, classify_lang

        classifier = self._make()
        if classifier is None or classifier.model_id != CLASSIFIER_MODEL:
            return detect_lang
        self.model_id = classifier.model_id

        def classified(code: str) -> str | None:
            return unsafe_perform_io(classify_lang(classifier, code).value_or(None))

        return classified


def _installed_classifier() -> ContentClassifier | None:
    """Magika when its packages are found (looked up, not imported), else None."""
    from memhtml.adapters.extras import absent_modules
    from memhtml.adapters.magika_classifier import MAGIKA_MODULES, MagikaClassifier

    return None if absent_modules(MAGIKA_MODULES) else MagikaClassifier()


def fence_detector() -> FenceDetector:
    """The detector the composition root hands every store."""
    return FenceDetector(_installed_classifier)
