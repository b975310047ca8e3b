"""OpenAICompatibleEmbedder against a real HTTP server on loopback (``loopback``).

The server's behaviour is picked by the first path segment of the base URL, so one
server serves every case: good answers, HTTP errors, broken JSON, wrong counts and
widths, and an answer slower than the client's timeout.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

import numpy as np
import pytest
from returns.io import IOResult
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io
from tests.integration.embedders.loopback import SLOW_SECONDS, WIDTH, Seen, serving, vector_for

from memhtml.adapters.embedders import OpenAICompatibleEmbedder
from memhtml.contracts.errors import EmbedFailure
from memhtml.contracts.services import Vector, VectorSpace


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Seen]]:
    with serving() as running:
        yield running


def embedder(base: str, mode: str, **kwargs: object) -> OpenAICompatibleEmbedder:
    options: dict[str, object] = {"dimension": WIDTH, "timeout": 5.0}
    options.update(kwargs)
    return OpenAICompatibleEmbedder(f"{base}/{mode}", "test-embed", **options)  # type: ignore[arg-type]


def failure(result: IOResult[object, EmbedFailure]) -> EmbedFailure:
    assert not is_successful(result), "expected a failure"
    return unsafe_perform_io(result.failure())


def vectors(result: IOResult[Sequence[Vector], EmbedFailure]) -> list[Vector]:
    assert is_successful(result), result
    return list(unsafe_perform_io(result.unwrap()))


TEXTS = ["alpha", "beta", "gamma delta", "epsilon", "zeta eta theta"]


def test_good_answer_in_order_and_chunked(server: tuple[str, Seen]) -> None:
    base, seen = server
    before = len(seen.requests)
    got = vectors(embedder(base, "good", batch_size=2).embed(TEXTS))
    assert [v.tolist() for v in got] == [vector_for(t) for t in TEXTS]
    assert all(v.dtype == np.float32 and v.shape == (WIDTH,) for v in got)
    sent = seen.requests[before:]
    assert [r["input"] for r in sent] == [TEXTS[0:2], TEXTS[2:4], TEXTS[4:5]]
    assert all(r["model"] == "test-embed" for r in sent)
    assert seen.paths[-1] == "/good/embeddings"


def test_answers_are_put_back_in_input_order(server: tuple[str, Seen]) -> None:
    base, _ = server
    for mode in ("shuffled", "noindex"):
        got = vectors(embedder(base, mode).embed(TEXTS))
        assert [v.tolist() for v in got] == [vector_for(t) for t in TEXTS]


def test_query_embedding_and_space(server: tuple[str, Seen]) -> None:
    base, _ = server
    client = embedder(base, "good")
    assert client.space == VectorSpace("test-embed", WIDTH)
    result = client.embed_query("a query")
    assert is_successful(result)
    assert unsafe_perform_io(result.unwrap()).tolist() == vector_for("a query")


def test_empty_input_makes_no_request(server: tuple[str, Seen]) -> None:
    base, seen = server
    before = len(seen.requests)
    assert vectors(embedder(base, "good").embed([])) == []
    assert len(seen.requests) == before


def test_width_learned_from_the_first_answer(server: tuple[str, Seen]) -> None:
    base, _ = server
    client = OpenAICompatibleEmbedder(f"{base}/good", "test-embed")
    with pytest.raises(RuntimeError, match="not known"):
        _ = client.space
    space = client.resolve_space()
    assert is_successful(space)
    assert unsafe_perform_io(space.unwrap()) == VectorSpace("test-embed", WIDTH)
    assert client.space.dimension == WIDTH


def test_bearer_key_is_sent_and_kept_out_of_errors(server: tuple[str, Seen]) -> None:
    base, seen = server
    good = embedder(base, "auth", api_key="sk-right")
    assert len(vectors(good.embed(["x"]))) == 1
    assert seen.authorization[-1] == "Bearer sk-right"
    assert "sk-right" not in repr(good)

    bad = failure(embedder(base, "auth", api_key="sk-wrong").embed(["x"]))
    assert bad.model_id == "test-embed"
    assert "401" in bad.reason
    assert "API key" in bad.reason
    assert "sk-wrong" not in bad.reason

    failure(embedder(base, "auth").embed(["x"]))
    assert seen.authorization[-1] is None


@pytest.mark.parametrize(
    ("mode", "words"),
    [
        ("fail", "HTTP 500"),
        ("malformed", "malformed JSON"),
        ("html", "malformed JSON"),
        ("count", "asked for 5 vectors, got 4"),
        ("width", "vector 0 has shape (5,)"),
        ("nan", "non-finite"),
        ("strings", "not a list of numbers"),
        ("dupindex", "repeated index"),
        ("missing", "HTTP 404"),
        ("cut", "connection failed: IncompleteRead"),
    ],
)
def test_out_of_contract_answers_fail(server: tuple[str, Seen], mode: str, words: str) -> None:
    base, _ = server
    texts = ["one"] if mode in {"nan", "strings"} else TEXTS
    got = failure(embedder(base, mode).embed(texts))
    assert words in got.reason


def test_a_later_chunk_failing_fails_the_whole_call(server: tuple[str, Seen]) -> None:
    base, _ = server
    got = failure(embedder(base, "count", batch_size=10).embed(TEXTS))
    assert "asked for 5" in got.reason


def test_slow_answer_times_out(server: tuple[str, Seen]) -> None:
    base, _ = server
    start = time.perf_counter()
    got = failure(embedder(base, "slow", timeout=0.3).embed(["x"]))
    assert time.perf_counter() - start < SLOW_SECONDS
    assert "timed out" in got.reason


def test_unreachable_server_fails() -> None:
    # Bind and close a socket to get a port nothing listens on.
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    got = failure(OpenAICompatibleEmbedder(f"http://127.0.0.1:{port}", "m", dimension=4,
                                           timeout=2.0).embed(["x"]))
    assert "cannot reach" in got.reason or "connection" in got.reason


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        OpenAICompatibleEmbedder("http://127.0.0.1:1", "m", batch_size=0)
    with pytest.raises(ValueError, match="dimension"):
        OpenAICompatibleEmbedder("http://127.0.0.1:1", "m", dimension=0)
