"""The planted corpus's own embedder: no model and no network.

``ScriptedEmbedder`` gives every text a seeded unit vector (``seeded_unit_vector``:
SHAKE-256 of the text, so the same on every machine), nearly orthogonal to any
other, and a scripted text the vector it was given; ``scripted_embedder`` scripts
each pair of a planted corpus so its newer text sits at exactly the planted cosine
to the older (``at_cosine``). A test can then say which pairs sit above 0.92. Its
own module because it is used apart from the generator (contract and phase tests
take the embedder, or its vectors, with no corpus) and reads nothing of a corpus
but its manifest and vector texts.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np
import numpy.typing as npt
from returns.io import IOResult, IOSuccess

from memhtml.contracts.errors import EmbedFailure
from memhtml.contracts.services import Vector, VectorSpace
from memhtml.eval.planted_manifest import PLANT_SEED, PlantedCorpus

PLANTED_MODEL_ID: Final = "planted-scripted-v1"
"""The scripted embedder's space name (also the ``embed_model`` a store is set to)."""
PLANTED_DIMENSION: Final = 256


def seeded_unit_vector(text: str, dimension: int, seed: int = PLANT_SEED, salt: str = ""
                       ) -> npt.NDArray[np.float64]:
    """A unit vector drawn from SHAKE-256 of the text: the same on every machine and
    numpy release (a numpy generator's stream may change between releases). Two such
    vectors are nearly orthogonal: their cosine has a spread of about 1/sqrt(dimension).
    A text holding a lone surrogate (a ``str`` that is not UTF-8) hashes its code points
    as they are, so it gets a vector like any other text instead of an exception."""
    raw = hashlib.shake_256(f"{seed}\x00{salt}\x00{text}".encode("utf-8", "surrogatepass")
                            ).digest(4 * dimension)
    units = np.frombuffer(raw, dtype=">u4").astype(np.float64) / 2.0**31 - 1.0
    return units / float(np.linalg.norm(units))


def at_cosine(anchor: npt.NDArray[np.float64], cosine: float, direction: npt.NDArray[np.float64]
              ) -> npt.NDArray[np.float64]:
    """The unit vector at exactly ``cosine`` to the unit ``anchor``, leaning toward
    ``direction``: ``c * anchor + sqrt(1 - c^2) * u``, with ``u`` the unit part of
    ``direction`` orthogonal to ``anchor``."""
    u = direction - float(np.dot(direction, anchor)) * anchor
    u /= float(np.linalg.norm(u))
    return cosine * anchor + math.sqrt(max(0.0, 1.0 - cosine * cosine)) * u


class ScriptedEmbedder:
    """A ``QueryEmbedder`` over a script: a known text gets its scripted vector, any
    other text a seeded vector of its own. Pure and deterministic: no network, no model."""

    def __init__(self, vectors: Mapping[str, Vector], dimension: int = PLANTED_DIMENSION,
                 seed: int = PLANT_SEED, model_id: str = PLANTED_MODEL_ID) -> None:
        if dimension < 2:
            raise ValueError("dimension must be at least 2")
        self._space = VectorSpace(model_id, dimension)
        self._vectors = dict(vectors)
        self._seed = seed

    @property
    def space(self) -> VectorSpace:
        return self._space

    @property
    def scripted(self) -> int:
        """How many texts have a scripted vector."""
        return len(self._vectors)

    def vector_of(self, text: str) -> Vector:
        found = self._vectors.get(text)
        if found is not None:
            return found.copy()
        return seeded_unit_vector(text, self._space.dimension, self._seed).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> IOResult[Sequence[Vector], EmbedFailure]:
        return IOSuccess([self.vector_of(text) for text in texts])

    def embed_query(self, text: str) -> IOResult[Vector, EmbedFailure]:
        return IOSuccess(self.vector_of(text))


def scripted_embedder(corpus: PlantedCorpus, dimension: int = PLANTED_DIMENSION,
                      model_id: str = PLANTED_MODEL_ID) -> ScriptedEmbedder:
    """The embedder of a planted corpus: each scripted pair's newer text at the planted
    cosine to the older text's seeded vector. An exact duplicate needs no entry: its
    text is the original's, so it gets the same vector."""
    seed = corpus.seed
    scripted: dict[str, npt.NDArray[np.float64]] = {}
    for pair in corpus.manifest.pairs:
        older, newer = corpus.vector_texts.get(pair.older), corpus.vector_texts.get(pair.newer)
        if pair.cosine is None or older is None or newer is None or older == newer:
            continue
        anchor = scripted.get(older)
        if anchor is None:
            anchor = seeded_unit_vector(older, dimension, seed)
        scripted[newer] = at_cosine(anchor, pair.cosine,
                                    seeded_unit_vector(newer, dimension, seed, salt="lean"))
    return ScriptedEmbedder({text: v.astype(np.float32) for text, v in scripted.items()},
                            dimension, seed, model_id)
