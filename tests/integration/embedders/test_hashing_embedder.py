"""HashingEmbedder: deterministic across calls and processes, of its space's width."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.embedders import HashingEmbedder, hashing_features
from memhtml.contracts.services import VectorSpace

TEXT = "Deploy on Friday; roll back on Monday."
GOLDEN_SHA256 = "468222e1f2fe873c04d7318a2b41a5e179cf9547c8cad338b03ee3abfc33081c"
"""The bytes of TEXT's 256-wide vector. A change here changes the space: bump its
model id (hashing-v1) rather than this pin, so old caches are not mixed with new."""


def test_space_and_width() -> None:
    assert HashingEmbedder().space == VectorSpace("hashing-v1", 256)
    embedder = HashingEmbedder(64)
    assert embedder.space == VectorSpace("hashing-v1", 64)
    result = embedder.embed(["one text", "another text", ""])
    assert is_successful(result)
    vectors = list(unsafe_perform_io(result.unwrap()))
    assert len(vectors) == 3
    assert all(v.shape == (64,) and v.dtype == np.float32 for v in vectors)
    with pytest.raises(ValueError, match="positive"):
        HashingEmbedder(0)


def test_features_are_words_then_bigrams() -> None:
    assert hashing_features("Roll BACK, now!") == ["roll", "back", "now", "roll back",
                                                   "back now"]
    assert hashing_features("  ...  ") == []


def test_vectors_are_unit_length_or_zero() -> None:
    embedder = HashingEmbedder()
    assert float(np.linalg.norm(embedder.vector_of(TEXT))) == pytest.approx(1.0, abs=1e-6)
    assert not np.any(embedder.vector_of("?!"))


def test_same_text_same_vector_and_query_matches_document() -> None:
    embedder = HashingEmbedder()
    first = embedder.vector_of(TEXT)
    assert np.array_equal(first, embedder.vector_of(TEXT))
    query = unsafe_perform_io(embedder.embed_query(TEXT).unwrap())
    assert np.array_equal(first, query)
    # Case and punctuation do not matter; word order does (bigrams).
    assert np.array_equal(first, embedder.vector_of("deploy ON friday roll back on monday"))
    assert not np.array_equal(first, embedder.vector_of("Monday on back roll Friday on deploy"))


def test_golden_vector() -> None:
    vector = HashingEmbedder().vector_of(TEXT)
    assert hashlib.sha256(vector.tobytes()).hexdigest() == GOLDEN_SHA256


def test_deterministic_across_processes_and_hash_seeds() -> None:
    script = ("import hashlib; from memhtml.adapters.embedders import HashingEmbedder; "
              f"print(hashlib.sha256(HashingEmbedder().vector_of({TEXT!r}).tobytes())"
              ".hexdigest())")
    for seed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", script], env=env, check=True,
                             capture_output=True, text=True).stdout.strip()
        assert out == GOLDEN_SHA256


def test_shared_words_score_higher_than_unrelated_text() -> None:
    embedder = HashingEmbedder()
    doc = embedder.vector_of("the deploy failed because the cache was cold")
    near = embedder.vector_of("why did the deploy fail with a cold cache")
    far = embedder.vector_of("photosynthesis in desert plants")
    assert float(doc @ near) > float(doc @ far)
