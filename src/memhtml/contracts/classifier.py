"""Content classification: a model that names what kind of text a snippet is.

The port behind the fence-language guess (``memhtml.detect.classified``). A
classifier answers in its own label space (a content type such as ``python``,
``shell`` or ``txt``) with a score; which of its labels may become a fence's
``data-lang``, and from what score, is decided in the detect room against a
labelled set, not by the classifier. The shipped adapter runs Google's Magika
model on ONNX Runtime (``memhtml.adapters.magika_classifier``), so calling it may
load a model from disk: it is a service, picked at the composition root.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from returns.io import IOResult

from memhtml.contracts.errors import ClassifyFailure


@dataclass(frozen=True, slots=True)
class ContentGuess:
    """What the model read a snippet as: its own label and its score in [0, 1].

    The score is the model's probability for that label, not a calibrated chance
    that the label is right for a fence; it means something only against the
    threshold measured for it.
    """

    label: str
    score: float


class ContentClassifier(Protocol):
    """Names the content type of a snippet of bytes."""

    @property
    def model_id(self) -> str:
        """The package release and model the answers come from (they are pinned
        together: a different model labels the same bytes differently)."""
        ...

    def classify(self, content: bytes) -> IOResult[ContentGuess, ClassifyFailure]:
        """The model's best label for ``content`` and its score; any bytes are input
        (empty, binary, huge), and a model that cannot answer is a failure value."""
        ...
