"""The embedder ports' contract (``DocumentEmbedder``, ``QueryEmbedder``), run on every
embedder the code may be handed: the three adapters (hashing; an OpenAI-compatible
endpoint, here a real HTTP server on loopback; the local ONNX model), the planted
corpus's ``ScriptedEmbedder``, and the tests' shared fakes.

The laws:

- a batch gets one vector per text, in order, and the vector a text gets in a batch is
  the one it gets alone (for the local model too: each text runs alone through the
  model, so its vector is the same to the bit; see ``BATCH_TOLERANCE``);
- every vector is the space's width, float32 and finite;
- the same batch asked twice gets the same vectors, exactly;
- an empty batch gets no vector;
- a query gets one vector of the space's width;
- any ``str``, even one UTF-8 cannot encode, gets vectors or an ``EmbedFailure``;
- a failure (the endpoint answering 500 or the wrong count of vectors, no endpoint at
  all, an unreadable model file, a fake told to fail) is an ``EmbedFailure`` naming the
  space's model, returned, never raised.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.io import IOResult, IOSuccess
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.embedders import (
    HashingEmbedder,
    LocalEmbedder,
    OpenAICompatibleEmbedder,
)
from memhtml.contracts.errors import EmbedFailure
from memhtml.contracts.services import QueryEmbedder, Vector
from memhtml.eval.planted_embedder import ScriptedEmbedder, seeded_unit_vector
from tests.fake_embedders import AnchoredEmbedder, Pull, RecordingEmbedder
from tests.integration.embedders.loopback import WIDTH, serving

BATCH_TOLERANCE = 0.0
"""The largest difference, in any component, allowed between a text's vector in a
batch and alone. 0 for every embedder here, the local model included: it runs one text
a forward pass (``LOCAL_BATCH_SIZE``), so no neighbour shares its activations' int8
scale. Measured over 66 texts (a one-letter text to whole abstracts) in random
batches of 12: the largest difference was 0.0 with 2 workers and with 1; the same
model at ``batch_size=8`` moved a component by up to 0.043 (cosine 0.970)."""

SENTENCES = (
    "The cache TTL is 300 s.",
    "Deploys freeze on Fridays.",
    "Vitamin D supplementation was associated with higher bone mineral density.",
    "",
    "a",
    "Ünïcödé, 日本語 and emoji ☃ in one note.",
)
"""Texts a memory holds, beside the generated ones: each fake's pulls are named here."""

texts = st.one_of(st.sampled_from(SENTENCES),
                  st.text(st.characters(codec="utf-8"), max_size=40))
batches = st.lists(texts, max_size=5)
any_str = st.lists(st.one_of(texts, st.sampled_from(["\ud800", "\udfff", "a\udc80b"])),
                   min_size=1, max_size=4).map("".join)
"""Any ``str``: some hold a lone surrogate (as a ``surrogateescape`` decode leaves)."""


@dataclass(frozen=True)
class Subject:
    embedder: QueryEmbedder
    examples: int
    """Hypothesis examples a law: few for the real model, which is slow."""


SUBJECTS = ("hashing", "openai-compatible", "local-onnx", "scripted", "recording",
            "anchored")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    """The loopback embeddings endpoint's base address."""
    with serving() as (base, _seen):
        yield base


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    pytest.importorskip("onnxruntime", reason="needs the 'local' extra")
    pytest.importorskip("tokenizers", reason="needs the 'local' extra")
    return LocalEmbedder()


def scripted() -> ScriptedEmbedder:
    scripted = {SENTENCES[0]: seeded_unit_vector("scripted", 64).astype(np.float32)}
    return ScriptedEmbedder(scripted, dimension=64)


def anchored() -> AnchoredEmbedder:
    return AnchoredEmbedder((Pull(("ttl",), "ttl", 0.98), Pull(("freeze",), "freeze", 1.0)),
                            dimension=48, seed=3, model_id="anchored", lean_salt="lean")


@pytest.fixture(params=SUBJECTS)
def subject(request: pytest.FixtureRequest) -> Subject:
    match request.param:
        case "hashing":
            return Subject(HashingEmbedder(64), 25)
        case "openai-compatible":
            base = request.getfixturevalue("endpoint")
            return Subject(OpenAICompatibleEmbedder(f"{base}/good", "contract-embed",
                                                    dimension=WIDTH, timeout=5.0,
                                                    batch_size=2), 15)
        case "local-onnx":
            return Subject(request.getfixturevalue("local"), 4)
        case "scripted":
            return Subject(scripted(), 25)
        case "recording":
            return Subject(RecordingEmbedder(), 25)
        case _:
            return Subject(anchored(), 25)


def vectors(result: IOResult[Sequence[Vector], EmbedFailure]) -> list[Vector]:
    assert isinstance(result, IOSuccess), result
    return list(unsafe_perform_io(result.unwrap()))


def assert_in_space(vector: Vector, embedder: QueryEmbedder) -> None:
    assert isinstance(vector, np.ndarray)
    assert vector.shape == (embedder.space.dimension,)
    assert vector.dtype == np.float32
    assert np.all(np.isfinite(vector))


def law(subject: Subject) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """``settings`` for one subject's run of a law."""
    return settings(max_examples=subject.examples, deadline=None)


# --------------------------------------------------------------------------- answers


def test_a_batch_gets_one_vector_a_text_in_order_the_one_it_gets_alone(
        subject: Subject) -> None:
    embedder = subject.embedder

    @law(subject)
    @given(batches)
    def one_a_text(batch: list[str]) -> None:
        got = vectors(embedder.embed(batch))
        assert len(got) == len(batch)
        for text, vector in zip(batch, got, strict=True):
            assert_in_space(vector, embedder)
            alone = vectors(embedder.embed([text]))
            assert len(alone) == 1
            assert float(np.max(np.abs(vector - alone[0]), initial=0.0)) <= BATCH_TOLERANCE

    one_a_text()


def test_the_same_batch_asked_twice_gets_the_same_vectors(subject: Subject) -> None:
    embedder = subject.embedder

    @law(subject)
    @given(batches)
    def deterministic(batch: list[str]) -> None:
        first, second = vectors(embedder.embed(batch)), vectors(embedder.embed(batch))
        assert len(first) == len(second) == len(batch)
        assert all(np.array_equal(a, b) for a, b in zip(first, second, strict=True))

    deterministic()


def test_an_empty_batch_gets_no_vector(subject: Subject) -> None:
    assert vectors(subject.embedder.embed([])) == []


def test_a_query_gets_one_vector_of_the_space(subject: Subject) -> None:
    embedder = subject.embedder

    @law(subject)
    @given(texts)
    def query(text: str) -> None:
        result = embedder.embed_query(text)
        assert isinstance(result, IOSuccess), result
        assert_in_space(unsafe_perform_io(result.unwrap()), embedder)

    query()


def test_any_str_gets_vectors_or_a_failure_never_an_exception(subject: Subject) -> None:
    embedder = subject.embedder

    @law(subject)
    @given(st.lists(any_str, min_size=1, max_size=3))
    def total(batch: list[str]) -> None:
        result = embedder.embed(batch)
        if isinstance(result, IOSuccess):
            got = vectors(result)
            assert len(got) == len(batch)
            for vector in got:
                assert_in_space(vector, embedder)
        else:
            failure = unsafe_perform_io(result.failure())
            assert isinstance(failure, EmbedFailure)
            assert failure.model_id == embedder.space.model_id

    total()


# --------------------------------------------------------------------------- failures


def unused_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def unreadable_model(tmp_path: Path) -> LocalEmbedder:
    pytest.importorskip("onnxruntime", reason="needs the 'local' extra")
    pytest.importorskip("tokenizers", reason="needs the 'local' extra")
    broken = LocalEmbedder(tmp_path)
    broken.model_path.write_bytes(b"not an onnx model")
    return broken


FAILING = ("endpoint-answers-500", "endpoint-answers-too-few-vectors", "no-endpoint",
           "unreadable-model-file", "recording-told-to-fail")


@pytest.fixture(params=FAILING)
def failing(request: pytest.FixtureRequest, tmp_path: Path) -> QueryEmbedder:
    def endpoint(mode: str) -> OpenAICompatibleEmbedder:
        base = request.getfixturevalue("endpoint")
        return OpenAICompatibleEmbedder(f"{base}/{mode}", "contract-embed", dimension=WIDTH,
                                        timeout=5.0)

    match request.param:
        case "endpoint-answers-500":
            return endpoint("fail")
        case "endpoint-answers-too-few-vectors":
            return endpoint("count")
        case "no-endpoint":
            return OpenAICompatibleEmbedder(f"http://127.0.0.1:{unused_port()}",
                                            "contract-embed", dimension=WIDTH, timeout=2.0)
        case "unreadable-model-file":
            return unreadable_model(tmp_path)
        case _:
            return RecordingEmbedder(fail="no credential")


def test_a_failure_is_an_embed_failure_naming_the_model_never_an_exception(
        failing: QueryEmbedder) -> None:
    model_id = failing.space.model_id
    for result in (failing.embed(["one", "two"]), failing.embed_query("one")):
        assert not isinstance(result, IOSuccess), result
        failure = unsafe_perform_io(result.failure())
        assert isinstance(failure, EmbedFailure)
        assert failure.model_id == model_id
        assert failure.reason
