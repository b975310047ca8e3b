"""An OpenAI-compatible embeddings endpoint on loopback, for the adapter's tests.

The first path segment of the base URL picks the behaviour
(``http://127.0.0.1:<port>/<mode>/embeddings``), so one server serves every case:
good answers (``good``, ``shuffled``, ``noindex``), a key check (``auth``), HTTP
errors (``fail``: 500), broken JSON, wrong counts and widths, and an answer slower
than a client's timeout. Each text's vector is ``vector_for(text)``.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from tests.integration.loopback_http import serving_on_loopback

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


@contextlib.contextmanager
def serving() -> Iterator[tuple[str, Seen]]:
    """The endpoint on an ephemeral loopback port: its base address and what it saw."""
    seen = Seen()
    with serving_on_loopback(type("BoundHandler", (Handler,), {"seen": seen})) as base:
        yield base, seen
