"""The content classifier on Google's Magika: a small model run on ONNX Runtime.

Magika ships its model inside its wheel (``magika/models/standard_v3_3``, about
3 MB), so nothing is downloaded; it comes with the ``local`` extra, beside the
ONNX Runtime the local embedder already needs. Nothing is imported or loaded until
the first ``classify``: importing Magika imports onnxruntime (about 0.3 s) and
building it loads the model (about 50 ms), which a command that labels no fence
must not pay. The loaded model is kept for the life of the process, and so is a
failure to load it, so a broken install costs one attempt, not one per fence.

The model is asked in Magika's ``BEST_GUESS`` mode: its own per-label thresholds
(``HIGH_CONFIDENCE``, which would answer ``txt`` below them) are replaced by the
threshold measured for fences in ``memhtml.detect.classified``.
"""

from __future__ import annotations

import importlib.metadata
import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.contracts.classifier import ContentGuess
from memhtml.contracts.errors import ClassifyFailure

if TYPE_CHECKING:
    from magika import Magika  # type: ignore[import-not-found,unused-ignore]

__all__ = ["MAGIKA_MODULES", "MagikaClassifier"]

MAGIKA_MODULES = ("magika", "onnxruntime")
"""What running the classifier imports (the model itself is package data)."""


def _model_errors() -> tuple[type[Exception], ...]:
    """What loading or running the model raises, once its package imports: a missing
    or unreadable model file (OSError, and MagikaError for a model directory without
    its files), a malformed model configuration (KeyError for a missing field,
    ValueError for bad JSON or an unknown label), a bad input (TypeError), and ONNX
    Runtime's own failures:
    RuntimeError subclasses, and its pybind classes (Fail, InvalidProtobuf, ...), which
    derive from Exception directly."""
    from magika.types import MagikaError  # type: ignore[import-not-found,unused-ignore]
    from onnxruntime.capi import (  # type: ignore[import-not-found,import-untyped,unused-ignore]
        onnxruntime_pybind11_state as state,
    )

    runtime = tuple(value for value in vars(state).values()
                    if isinstance(value, type) and issubclass(value, Exception))
    return (MagikaError, OSError, KeyError, RuntimeError, TypeError, ValueError, *runtime)


@dataclass(frozen=True, slots=True)
class _Loaded:
    model: Magika
    errors: tuple[type[Exception], ...]


class MagikaClassifier:
    """``ContentClassifier`` on Magika, built on first use.

    ``model_dir`` is Magika's own argument (a directory with ``model.onnx`` and
    ``config.min.json``); None is the model its wheel ships, the one measured.
    """

    def __init__(self, model_dir: Path | None = None) -> None:
        self._model_dir = model_dir
        self._lock = threading.Lock()
        self._loaded: _Loaded | ClassifyFailure | None = None

    @property
    def model_id(self) -> str:
        """``magika==<release>`` from the installed package's metadata (nothing is
        imported to read it), with the model directory when one was given."""
        try:
            release = f"magika=={importlib.metadata.version('magika')}"
        except importlib.metadata.PackageNotFoundError:
            release = "magika (not installed)"
        return release if self._model_dir is None else f"{release} model {self._model_dir}"

    def _model(self) -> _Loaded | ClassifyFailure:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._load()
            return self._loaded

    def _load(self) -> _Loaded | ClassifyFailure:
        try:
            from magika import (  # type: ignore[import-not-found,unused-ignore]
                Magika,
                PredictionMode,
            )

            errors = _model_errors()
        except ImportError as exc:
            return ClassifyFailure(self.model_id, (
                f"the classifier needs the 'local' extra ({exc.name or exc} not "
                "installed): pip install 'memhtml[local]'"))
        try:
            return _Loaded(Magika(model_dir=self._model_dir,
                                  prediction_mode=PredictionMode.BEST_GUESS), errors)
        except errors as exc:
            return ClassifyFailure(self.model_id, f"{type(exc).__name__}: {exc}")

    def classify(self, content: bytes) -> IOResult[ContentGuess, ClassifyFailure]:
        loaded = self._model()
        if isinstance(loaded, ClassifyFailure):
            return IOFailure(loaded)
        try:
            result = loaded.model.identify_bytes(content)
            if not result.ok:
                return IOFailure(ClassifyFailure(self.model_id,
                                                 f"no answer: {result.status}"))
            label, score = str(result.output.label), float(result.score)
        except loaded.errors as exc:
            return IOFailure(ClassifyFailure(self.model_id, f"{type(exc).__name__}: {exc}"))
        if not label or not math.isfinite(score) or not 0.0 <= score <= 1.0:
            return IOFailure(ClassifyFailure(
                self.model_id, f"answer out of contract: label {label!r}, score {score!r}"))
        return IOSuccess(ContentGuess(label, score))
