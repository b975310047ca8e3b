"""OpenAICompatibleEmbedder against a real HTTP server on loopback.

The server's behaviour is picked by the first path segment of the base URL, so one
server serves every case: good answers, HTTP errors, broken JSON, wrong counts and
widths, and an answer slower than the client's timeout.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from returns.io import IOResult
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.embedders import OpenAICompatibleEmbedder
from memhtml.contracts.errors import EmbedFailure
from memhtml.contracts.services import Vector, VectorSpace

WIDTH = 4
SLOW_SECONDS = 1.5


def vector_for(text: str) -> list[float]:
    """A deterministic vector the test can predict: length, then letter counts."""
    return [float(len(text)), float(text.count("a")), float(text.count("e")), 1.0]


@dataclass
class Seen:
    requests: list[dict[str, object]] = field(default_factory=list)
    authorization: list[str | None] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


class Handler(BaseHTTPRequestHandler):
    seen: Seen

    def log_message(self, format: str, *args: object) -> None:
        pass

    def reply(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length))
        self.seen.requests.append(request)
        self.seen.authorization.append(self.headers.get("Authorization"))
        self.seen.paths.append(self.path)
        mode, _, rest = self.path.strip("/").partition("/")
        if rest != "embeddings":
            self.reply(404, b'{"error": "no such route"}')
            return
        texts = request["input"]
        data = [{"object": "embedding", "index": i, "embedding": vector_for(t)}
                for i, t in enumerate(texts)]
        if mode == "good":
            self.reply(200, json.dumps({"object": "list", "data": data}).encode())
        elif mode == "shuffled":
            self.reply(200, json.dumps({"data": list(reversed(data))}).encode())
        elif mode == "noindex":
            self.reply(200, json.dumps({"data": [{"embedding": d["embedding"]}
                                                 for d in data]}).encode())
        elif mode == "auth":
            if self.headers.get("Authorization") != "Bearer sk-right":
                self.reply(401, b'{"error": {"message": "invalid api key"}}')
            else:
                self.reply(200, json.dumps({"data": data}).encode())
        elif mode == "fail":
            self.reply(500, b'{"error": "model crashed"}')
        elif mode == "malformed":
            self.reply(200, b'{"data": [{"embedding": [1, 2')
        elif mode == "html":
            self.reply(200, b"<html>gateway</html>", "text/html")
        elif mode == "count":
            self.reply(200, json.dumps({"data": data[:-1]}).encode())
        elif mode == "width":
            data[0]["embedding"] = [*vector_for(texts[0]), 9.0]
            self.reply(200, json.dumps({"data": data}).encode())
        elif mode == "nan":
            self.reply(200, b'{"data": [{"index": 0, "embedding": [NaN, 1, 2, 3]}]}')
        elif mode == "strings":
            self.reply(200, b'{"data": [{"index": 0, "embedding": ["1", "2", "3", "4"]}]}')
        elif mode == "dupindex":
            for item in data:
                item["index"] = 0
            self.reply(200, json.dumps({"data": data}).encode())
        elif mode == "cut":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b'{"data": [')
            self.close_connection = True
        elif mode == "slow":
            time.sleep(SLOW_SECONDS)
            self.reply(200, json.dumps({"data": data}).encode())
        else:
            self.reply(404, b"{}")


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Seen]]:
    seen = Seen()
    handler = type("BoundHandler", (Handler,), {"seen": seen})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


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
