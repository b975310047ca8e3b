"""The ``ContentClassifier`` port's contract, on the shipped adapter (Magika).

Any bytes are input (empty, binary, NUL, far longer than the model reads) and get an
answer: a non-empty label and a score in [0, 1], the same for the same bytes. A model
that cannot be loaded (its directory empty, its configuration or its ONNX file
damaged) is a ``ClassifyFailure`` value naming the model and why, returned, never
raised, on every call.
"""

from __future__ import annotations

import shutil
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.io import IOFailure, IOSuccess
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.magika_classifier import MagikaClassifier
from memhtml.contracts.classifier import ContentClassifier, ContentGuess
from memhtml.contracts.errors import ClassifyFailure

pytest.importorskip("magika", reason="needs the 'local' extra")


@cache
def _classifier() -> MagikaClassifier:
    return MagikaClassifier()


def _answer(classifier: ContentClassifier, content: bytes) -> ContentGuess:
    found = classifier.classify(content)
    assert isinstance(found, IOSuccess), found
    guess: ContentGuess = unsafe_perform_io(found.unwrap())
    assert guess.label
    assert 0.0 <= guess.score <= 1.0
    return guess


def _failure(classifier: ContentClassifier, content: bytes) -> ClassifyFailure:
    found = classifier.classify(content)
    assert isinstance(found, IOFailure), found
    failure: ClassifyFailure = unsafe_perform_io(found.failure())
    return failure


@pytest.mark.parametrize("content", [
    b"", b" ", b"\n\n\n", b"x", b"\x00" * 64, bytes(range(256)) * 40,
    "caf\u00e9 na\u00efve \u65e5\u672c\u8a9e\n".encode(), b"def f():\n    pass\n" * 20_000,
])
def test_any_bytes_get_an_answer(content: bytes) -> None:
    _answer(_classifier(), content)


@settings(max_examples=80, deadline=None)
@given(st.binary(max_size=6000))
def test_the_same_bytes_get_the_same_answer(content: bytes) -> None:
    first = _answer(_classifier(), content)
    assert _answer(_classifier(), content) == first
    assert _answer(MagikaClassifier(), content) == first, "a second model answers alike"


def test_the_model_id_names_the_release_and_does_not_load_the_model() -> None:
    fresh = MagikaClassifier()
    assert fresh.model_id.startswith("magika==")
    assert fresh._loaded is None  # read from the package metadata, nothing loaded


def _damaged(where: Path, model: bytes | None, config: str | None) -> MagikaClassifier:
    where.mkdir()
    import magika

    shipped = Path(str(magika.__file__)).parent / "models" / "standard_v3_3"
    if model is not None:
        (where / "model.onnx").write_bytes(model)
    if config is not None:
        (where / "config.min.json").write_text(config, encoding="utf-8")
    else:
        shutil.copy(shipped / "config.min.json", where / "config.min.json")
    return MagikaClassifier(model_dir=where)


@pytest.mark.parametrize(("model", "config", "says"), [
    (None, "{}", "model not found"),
    (b"not an onnx model", "{}", "KeyError"),
    (b"not an onnx model", "{not json", "JSONDecodeError"),
    (b"not an onnx model", None, "onnx"),
])
def test_a_model_that_cannot_load_is_a_failure_value_every_time(
        tmp_path: Path, model: bytes | None, config: str | None, says: str) -> None:
    broken = _damaged(tmp_path / "model", model, config)
    first = _failure(broken, b"def f():\n    pass\n")
    assert first.model_id == broken.model_id
    assert str(tmp_path) in first.model_id, "the failure names the model it tried"
    assert says.lower() in first.reason.lower()
    assert _failure(broken, b"SELECT 1;\n") == first, "the load is not retried per call"
