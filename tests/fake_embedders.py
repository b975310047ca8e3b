"""The embedders tests hand the code under test, shared by the unit and integration
suites; each keeps the port's promise (tests/contract/test_embedder_contract.py runs
the same laws on them as on the adapters) unless a test asks it to break it.

- ``RecordingEmbedder`` records every batch it is asked to embed and answers with the
  hashing embedder's vectors, under any space; it can be told to fail, or to answer
  one vector short or at another width.
- ``AnchoredEmbedder`` places texts on purpose: a text naming a pull's words lies at
  the pull's cosine to the seeded direction of the pull's anchor, every other text on
  a seeded direction of its own, so a test says which texts meet above a threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from returns.io import IOFailure, IOResult, IOSuccess

from memhtml.adapters.embedders import HASHING_MODEL_ID, HashingEmbedder
from memhtml.contracts.errors import EmbedFailure
from memhtml.contracts.services import Vector, VectorSpace
from memhtml.eval.planted_embedder import (
    PLANTED_DIMENSION,
    PLANTED_MODEL_ID,
    ScriptedEmbedder,
    at_cosine,
    seeded_unit_vector,
)
from memhtml.eval.planted_manifest import PLANT_SEED

RECORDING_SPACE = VectorSpace(HASHING_MODEL_ID, 32)


class RecordingEmbedder:
    """A ``QueryEmbedder`` that records every batch it is asked for in ``calls`` (a
    query as a batch of one) and answers each text with the hashing embedder's vector
    of it at the space's width, whatever the space is called.

    ``fail`` makes every call an ``EmbedFailure`` with that reason. ``drop_one`` (one
    vector short) and ``width`` (vectors of another width) make it break the port's
    promise, for the tests of what refuses such an answer."""

    def __init__(self, space: VectorSpace = RECORDING_SPACE, *, fail: str | None = None,
                 drop_one: bool = False, width: int | None = None) -> None:
        self._space = space
        self._hashing = HashingEmbedder(space.dimension if width is None else width)
        self.fail = fail
        self.drop_one = drop_one
        self.calls: list[list[str]] = []

    @property
    def space(self) -> VectorSpace:
        return self._space

    def embed(self, texts: Sequence[str]) -> IOResult[Sequence[Vector], EmbedFailure]:
        self.calls.append(list(texts))
        if self.fail is not None:
            return IOFailure(EmbedFailure(self._space.model_id, self.fail))
        out = [self._hashing.vector_of(text) for text in texts]
        return IOSuccess(out[1:] if self.drop_one else out)

    def embed_query(self, text: str) -> IOResult[Vector, EmbedFailure]:
        return self.embed([text]).map(lambda vectors: vectors[0])


@dataclass(frozen=True)
class Pull:
    """Texts naming any of ``words`` (compared lowercase) lie at ``cosine`` to the
    seeded direction of ``anchor`` (1.0: on it)."""

    words: tuple[str, ...]
    anchor: str
    cosine: float


class AnchoredEmbedder(ScriptedEmbedder):
    """A ``ScriptedEmbedder`` (so ``planted_support.serve_embeddings`` can serve it)
    whose texts are placed by ``pulls``: a text naming a pull's words (the first pull
    it names) lies at that pull's cosine to the anchor's direction, leaning toward its
    own seeded direction salted ``lean_salt``; any other text is its own seeded
    direction salted ``other_salt``. Every direction is ``seeded_unit_vector`` at
    ``seed``, so the vectors are the same on every machine.

    Each text ``embed`` is asked for is appended to ``log`` as ``("embed", text)``;
    a test may share the list with its model's responder to see the order of the two."""

    def __init__(self, pulls: Sequence[Pull], *, dimension: int = PLANTED_DIMENSION,
                 seed: int = PLANT_SEED, model_id: str = PLANTED_MODEL_ID,
                 lean_salt: str = "", other_salt: str = "",
                 log: list[tuple[str, str]] | None = None) -> None:
        super().__init__({}, dimension, seed, model_id)
        self.pulls = tuple(pulls)
        self.seed = seed
        self.lean_salt = lean_salt
        self.other_salt = other_salt
        self.log: list[tuple[str, str]] = [] if log is None else log

    def vector_of(self, text: str) -> Vector:
        dimension = self.space.dimension
        lowered = text.lower()
        for pull in self.pulls:
            if any(word in lowered for word in pull.words):
                anchor = seeded_unit_vector(pull.anchor, dimension, self.seed)
                lean = seeded_unit_vector(text, dimension, self.seed, self.lean_salt)
                return at_cosine(anchor, pull.cosine, lean).astype(np.float32)
        return seeded_unit_vector(text, dimension, self.seed, self.other_salt
                                  ).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> IOResult[Sequence[Vector], EmbedFailure]:
        self.log += [("embed", text) for text in texts]
        return super().embed(texts)

    @property
    def embedded(self) -> list[str]:
        """The texts ``embed`` was asked for, in order."""
        return [text for what, text in self.log if what == "embed"]
