"""The shipped int8 model gives the vectors the space has always held.

``expected.json`` was written by the runtime export that filled caches before the
model shipped as package data; the shipped file must agree within 1e-6 of cosine
for every text, or caches filled then would silently mix two spaces. Skipped where
the ``local`` extra is not installed.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from returns.unsafe import unsafe_perform_io
from tests.golden.local_vectors.local_golden import EXPECTED, TEXTS

from memhtml.adapters.embedders import LOCAL_DIMENSION, LOCAL_MODEL_ID, LocalEmbedder

COSINE_TOLERANCE = 1e-6


def _expected() -> tuple[list[str], np.ndarray]:
    data = json.loads(EXPECTED.read_text(encoding="utf-8"))
    assert data["space"] == {"model_id": LOCAL_MODEL_ID, "dimension": LOCAL_DIMENSION}
    texts = [row["text"] for row in data["vectors"]]
    return texts, np.array([row["vector"] for row in data["vectors"]], dtype=np.float64)


def test_the_golden_covers_the_fixed_texts() -> None:
    texts, vectors = _expected()
    assert texts == list(TEXTS)
    assert vectors.shape == (len(TEXTS), LOCAL_DIMENSION)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


@pytest.mark.parametrize("workers", [1, 2])
def test_the_shipped_model_reproduces_the_golden_vectors(workers: int) -> None:
    pytest.importorskip("onnxruntime", reason="needs the 'local' extra")
    pytest.importorskip("tokenizers", reason="needs the 'local' extra")
    texts, expected = _expected()
    got = unsafe_perform_io(LocalEmbedder(workers=workers).embed(texts).unwrap())
    actual = np.vstack(got).astype(np.float64)
    cosines = (actual * expected).sum(axis=1) / (
        np.linalg.norm(actual, axis=1) * np.linalg.norm(expected, axis=1))
    worst = int(np.argmin(cosines))
    assert 1.0 - float(cosines[worst]) < COSINE_TOLERANCE, texts[worst]
