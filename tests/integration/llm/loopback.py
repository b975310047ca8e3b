"""A loopback HTTP server that plays both model dialects, for the adapter's tests.

The first path segment picks the behaviour and the second is a token the test makes
up, so each test counts its own attempts on a shared server:
``http://127.0.0.1:<port>/<mode>/<token>/v1``. The dialect is read from the endpoint
the client posts to (``/messages`` or ``/chat/completions``). Every request is
recorded with its raw body bytes and headers.

Mode ``echo`` is a model that says what it is told: its answer is the JSON value the
request's prompt holds, in the dialect's envelope, whatever the schema asks.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler

from tests.integration.loopback_http import serving_on_loopback

TOOL = "judge_pair"
GOOD_ANSWER: dict[str, object] = {"verdict": "same", "confidence": 0.9}
OFF_SCHEMA_ANSWER: dict[str, object] = {"verdict": "maybe", "confidence": 1.5}
RIGHT_KEY = "sk-loopback-right-key"
SLOW_SECONDS = 1.0
HUGE_DECLARED = 64 << 20
RETRY_AFTER_SECONDS = 2
REFUSAL_TEXT = "I can't help with that."


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    """Lower-cased names: HTTP header names are case-insensitive."""
    body: bytes


@dataclass
class Seen:
    received: list[Received] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    retry_date: str = ""
    """The HTTP date ``retrydate`` sends as ``Retry-After`` (set by the test)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def attempts(self, mode: str, token: str) -> int:
        with self.lock:
            return self.counts.get(f"{mode}/{token}", 0)

    def bodies(self, mode: str, token: str) -> list[bytes]:
        with self.lock:
            return [r.body for r in self.received if r.path.startswith(f"/{mode}/{token}/")]

    def last(self, mode: str, token: str) -> Received:
        with self.lock:
            return [r for r in self.received if r.path.startswith(f"/{mode}/{token}/")][-1]


def anthropic_reply(content: list[dict[str, object]], stop_reason: str) -> dict[str, object]:
    return {"id": "msg_loopback", "type": "message", "role": "assistant",
            "model": "loopback", "content": content, "stop_reason": stop_reason,
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}


def tool_use(answer: dict[str, object]) -> dict[str, object]:
    return {"type": "tool_use", "id": "toolu_loopback", "name": TOOL, "input": answer}


def openai_reply(content: str | None, finish_reason: str = "stop",
                 refusal: str | None = None) -> dict[str, object]:
    return {"id": "chatcmpl-loopback", "object": "chat.completion", "created": 0,
            "model": "loopback",
            "choices": [{"index": 0, "finish_reason": finish_reason,
                         "message": {"role": "assistant", "content": content,
                                     "refusal": refusal}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def sse_events(dialect: str) -> list[dict[str, object] | str]:
    """The good answer as the events a streaming server sends, in ``dialect``."""
    text = json.dumps(GOOD_ANSWER)
    half = len(text) // 2
    if dialect == "anthropic":
        return [
            {"type": "message_start", "message": {
                "id": "msg_loopback", "type": "message", "role": "assistant",
                "model": "loopback", "content": [], "stop_reason": None}},
            {"type": "content_block_start", "index": 0, "content_block": {
                "type": "tool_use", "id": "toolu_loopback", "name": TOOL, "input": {}}},
            {"type": "content_block_delta", "index": 0, "delta": {
                "type": "input_json_delta", "partial_json": text[:half]}},
            {"type": "content_block_delta", "index": 0, "delta": {
                "type": "input_json_delta", "partial_json": text[half:]}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
            {"type": "message_stop"}]
    pieces: list[dict[str, object] | str] = [
        {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
        for piece in (text[:half], text[half:])]
    return [*pieces, {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            "[DONE]"]


def echo_body(dialect: str, request: bytes) -> dict[str, object]:
    """The 200 body ``echo`` answers ``request`` with: the JSON value its prompt (the
    last message's text) holds, as the model's answer."""
    said = json.loads(json.loads(request)["messages"][-1]["content"])
    if dialect == "anthropic":
        return anthropic_reply([tool_use(said)], "tool_use")
    return openai_reply(json.dumps(said))


def answer_body(dialect: str, mode: str) -> dict[str, object]:
    """The 200 body ``mode`` answers with in ``dialect``."""
    if dialect == "anthropic":
        return {
            "offschema": anthropic_reply([tool_use(OFF_SCHEMA_ANSWER)], "tool_use"),
            "notool": anthropic_reply([{"type": "text", "text": "They are the same."}],
                                      "end_turn"),
            "truncated": anthropic_reply([tool_use({"verdict": "same"})], "max_tokens"),
            "refusal": anthropic_reply([{"type": "text", "text": REFUSAL_TEXT}], "refusal"),
        }.get(mode, anthropic_reply([tool_use(GOOD_ANSWER)], "tool_use"))
    return {
        "offschema": openai_reply(json.dumps(OFF_SCHEMA_ANSWER)),
        "notool": openai_reply("They are the same."),
        "truncated": openai_reply('{"verdict": "sa', "length"),
        "refusal": openai_reply(None, refusal=REFUSAL_TEXT),
    }.get(mode, openai_reply(json.dumps(GOOD_ANSWER)))


class Handler(BaseHTTPRequestHandler):
    seen: Seen

    def log_message(self, format: str, *args: object) -> None:
        pass

    def reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        mode, token = (self.path.strip("/").split("/") + ["", ""])[:2]
        counter = f"{mode}/{token}"
        with self.seen.lock:
            headers = {name.lower(): value for name, value in self.headers.items()}
            self.seen.received.append(Received(self.path, headers, raw))
            self.seen.counts[counter] = count = self.seen.counts.get(counter, 0) + 1
        if self.path.endswith("/messages"):
            dialect = "anthropic"
        elif self.path.endswith("/chat/completions"):
            dialect = "openai"
        else:
            self.reply(404, b'{"error": "no such route"}')
            return
        if mode == "echo":
            self.reply(200, json.dumps(echo_body(dialect, raw)).encode())
            return
        self.play(mode, count, dialect)

    def credential(self, dialect: str) -> str:
        if dialect == "anthropic":
            return self.headers.get("x-api-key", "")
        return self.headers.get("Authorization", "").removeprefix("Bearer ")

    def play(self, mode: str, count: int, dialect: str) -> None:
        good = json.dumps(answer_body(dialect, "good")).encode()
        if mode == "ratelimit" and count == 1:
            self.reply(429, b'{"error": "slow down"}',
                       {"Retry-After": str(RETRY_AFTER_SECONDS)})
        elif mode == "retrydate" and count == 1:
            self.reply(503, b'{"error": "overloaded"}', {"Retry-After": self.seen.retry_date})
        elif mode == "fail":
            self.reply(500, b'{"error": "the model crashed"}')
        elif mode == "echo500":
            # A server that echoes the credential it was sent into its error body.
            self.reply(500, json.dumps({"error": f"bad key {self.credential(dialect)}"}
                                       ).encode())
        elif mode == "resetall" or (mode == "reset" and count == 1):
            # Drop the connection without a word: the client sees a reset.
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(2)
        elif mode == "auth" and self.credential(dialect) != RIGHT_KEY:
            self.reply(401, json.dumps(
                {"error": f"Incorrect API key provided: {self.credential(dialect)}"}).encode())
        elif mode == "badrequest":
            self.reply(400, b'{"error": "no such model"}')
        elif mode == "redirect":
            self.reply(307, b"", {"Location": self.path.replace("/redirect/", "/good/", 1)})
        elif mode == "cutjson":
            self.reply(200, good[: len(good) // 2])
        elif mode == "cutconn" and count == 1:
            # Promise a whole answer, send half, hang up: the client sees a short body.
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(good)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(good[: len(good) // 2])
            self.close_connection = True
        elif mode == "huge":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(HUGE_DECLARED))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(b'{"choices": [')
            self.close_connection = True
        elif mode in {"sse", "ssecut"}:
            events = sse_events(dialect)
            if mode == "ssecut" and count == 1:
                events = events[:2]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.end_headers()
            self.close_connection = True
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                for event in events:
                    data = event if isinstance(event, str) else json.dumps(event)
                    self.wfile.write(f"event: x\ndata: {data}\n\n".encode())
        elif mode == "slow":
            time.sleep(SLOW_SECONDS)
            self.reply(200, good)
        else:
            self.reply(200, json.dumps(answer_body(dialect, mode)).encode())


@contextlib.contextmanager
def serving() -> Iterator[tuple[str, Seen]]:
    """A server on an ephemeral loopback port: its base address and what it saw."""
    seen = Seen()
    with serving_on_loopback(type("BoundHandler", (Handler,), {"seen": seen})) as base:
        yield base, seen


def http_date(when: datetime) -> str:
    """``when`` (an aware datetime) as an HTTP date."""
    return format_datetime(when, usegmt=True)
