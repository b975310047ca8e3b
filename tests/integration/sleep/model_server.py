"""A language model on loopback for nights run through the CLI: an OpenAI-compatible
chat-completions endpoint on 127.0.0.1 that answers each request from a responder of
the tool the phase forces (the strict schema's name) and the members its prompt
offers, and an embeddings endpoint beside it (``planted_support.serve_embeddings``).
The store reaches both through its ordinary settings (``MEMHTML_LLM=openai``,
``MEMHTML_LLM_URL``), so the run under test is the one a person starts.

Every request is logged (tool, prompt) so a test can see what a phase was offered.
A tool the responder does not know is answered ``{}``, which the phase's strict
decode refuses as malformed: that batch is skipped and counted, never retried.

``dialect`` plays how a local server spells structured output (each refusing what it
does not take with the status and body such a server sends), and every dialect
answers a body with no structured-output field at all (memhtml's ``prompt`` form)
from the schema written into the system prompt:

- ``openai``: OpenAI's ``response_format`` ``json_schema``;
- ``llama-cpp-python``: only ``{"type": "json_object", "schema": ...}``; a
  ``json_schema`` response format gets its HTTP 500 with the pydantic message;
- ``ollama``, ``vllm``, ``llama.cpp``: only their own field (``format``,
  ``guided_json``, a top-level ``json_schema``); a ``response_format`` gets HTTP 400
  saying it is not supported;
- ``slow``: streams an answer one piece every ``SLOW_PIECE_SECONDS`` without end, and
  counts the clients that hung up on it (``Log.disconnects``).

A body asking ``stream: true`` is answered with server-sent events, as those servers do.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Final

from tests.integration.llm.loopback import openai_reply

LLAMA_CPP_PYTHON_500: Final = json.dumps({"error": {
    "message": "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
               "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
               "'ctx': {'expected': \"'text' or 'json_object'\"}}]",
    "type": "internal_server_error", "param": None, "code": None}})
"""What llama-cpp-python's server (0.3.x) answers a ``json_schema`` response format
with: its route handler turns the request's validation error into an HTTP 500."""
NATIVE_FIELD: Final[Mapping[str, str]] = {"ollama": "format", "vllm": "guided_json",
                                          "llama.cpp": "json_schema"}
DIALECTS: Final = ("openai", "llama-cpp-python", "ollama", "vllm", "llama.cpp", "slow")
SLOW_PIECE_SECONDS: Final = 0.05
_PROMPT_TOOL = re.compile(r"Answer format \(([A-Za-z0-9_-]+)\)")

Responder = Callable[[str, Mapping[str, str]], Mapping[str, object]]
"""(tool name, offered members: key to text) -> the answer's JSON object."""


def members(prompt: str) -> dict[str, str]:
    """The members a kernel-framed prompt offers: key to rendered text, in order."""
    found: dict[str, str] = {}
    for line in prompt.split("\n"):
        if line.startswith('{"key": '):
            item = json.loads(line)
            found[str(item["key"])] = str(item["text"])
    return found


@dataclass
class Log:
    """What the model was asked: (tool, prompt), in order; every request's
    structured-output form and what became of it; the clients that hung up."""

    asked: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    forms: list[tuple[str, int]] = field(default_factory=list)
    """(the form the body used: ``json_schema``, ``json_object``, ``prompt`` or
    ``field:<name>`` for a server's own field; the status answered), one per request."""
    streamed: list[bool] = field(default_factory=list)
    disconnects: int = 0

    def form_log(self) -> list[tuple[str, int]]:
        with self.lock:
            return list(self.forms)

    def hung_up(self) -> int:
        with self.lock:
            return self.disconnects

    def tools(self) -> list[str]:
        with self.lock:
            return [tool for tool, _ in self.asked]

    def prompts(self, tool: str) -> list[str]:
        with self.lock:
            return [prompt for name, prompt in self.asked if name == tool]


def form_of(body: Mapping[str, object]) -> str:
    """Which structured-output form a request body uses."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict):
        return str(fmt.get("type"))
    for name in ("format", "guided_json", "json_schema"):
        if name in body:
            return f"field:{name}"
    return "prompt"


def _tools_by_shape() -> dict[frozenset[str], str]:
    """Each phase's tool by its answer's top-level property names: a form that carries
    the schema without a name (llama-cpp-python's json_object, a native field) is
    answered by the tool whose schema it is."""
    pairs: list[tuple[object, object]] = [
        (getattr(importlib.import_module(f"memhtml.sleep.phases.{module}"), schema),
         getattr(importlib.import_module(f"memhtml.sleep.phases.{module}"), tool))
        for module, schema, tool in (
            ("arc_synthesis", "TRIAGE_SCHEMA", "TRIAGE_TOOL"),
            ("arc_synthesis", "WRITE_SCHEMA", "WRITE_TOOL"),
            *((name, "SCHEMA", "TOOL_NAME") for name in (
                "compress_prompt", "dedup_prompt", "edge_typing", "entity_resolution",
                "placement_triage", "task_detection", "trace_prompt")))]
    out: dict[frozenset[str], str] = {}
    for schema, tool in pairs:
        properties = schema.get("properties") if isinstance(schema, Mapping) else None
        if isinstance(properties, Mapping):
            out[frozenset(properties)] = str(tool)
    return out


def tool_of(body: Mapping[str, object], form: str) -> str:
    """The tool (schema name) a request asks through, read where its form puts it: the
    response format's name, the ``prompt`` form's heading, else the schema's shape."""
    fmt = body.get("response_format")
    if form == "json_schema" and isinstance(fmt, dict):
        return str(fmt["json_schema"]["name"])
    messages = body.get("messages")
    system = str(messages[0]["content"]) if isinstance(messages, list) and messages else ""
    found = _PROMPT_TOOL.search(system)
    if found:
        return found.group(1)
    schema = fmt.get("schema") if isinstance(fmt, dict) else body.get(
        form.removeprefix("field:"))
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return _tools_by_shape().get(frozenset(properties or ()), "")


class _Handler(BaseHTTPRequestHandler):
    respond: Responder
    log: Log
    dialect: str

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if not self.path.endswith("/chat/completions"):
            self._reply(404, b'{"error": "no such route"}')
            return
        body = json.loads(raw)
        form = form_of(body)
        stream = body.get("stream") is True
        refusal = self._refusal(form)
        with self.log.lock:
            self.log.forms.append((form, refusal[0] if refusal else 200))
            self.log.streamed.append(stream)
        if refusal is not None:
            self._reply(*refusal)
            return
        tool = tool_of(body, form)
        prompt = str(body["messages"][-1]["content"])
        with self.log.lock:
            self.log.asked.append((tool, prompt))
        if type(self).dialect == "slow":
            self._stream_forever()
            return
        answer = json.dumps(type(self).respond(tool, members(prompt)))
        if stream:
            self._stream(answer)
        else:
            self._reply(200, json.dumps(openai_reply(answer)).encode())

    def _refusal(self, form: str) -> tuple[int, bytes] | None:
        dialect = type(self).dialect
        if dialect in {"openai", "slow"} or form == "prompt":
            return None
        if dialect == "llama-cpp-python":
            return None if form == "json_object" else (500, LLAMA_CPP_PYTHON_500.encode())
        native = NATIVE_FIELD[dialect]
        if form == f"field:{native}":
            return None
        return 400, json.dumps({"error": {
            "message": f"response_format is not supported by this server; structured "
                       f"output is asked with the '{native}' field",
            "type": "invalid_request_error"}}).encode()

    def _events(self) -> None:
        """Event-stream headers, the body in chunked transfer encoding, as the servers
        behind these dialects (uvicorn, Go's net/http) send it."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.close_connection = True

    def _event(self, chunk: Mapping[str, object] | str) -> None:
        data = chunk if isinstance(chunk, str) else json.dumps(chunk)
        frame = f"data: {data}\r\n\r\n".encode()
        self.wfile.write(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
        self.wfile.flush()

    def _end_events(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _stream(self, answer: str) -> None:
        self._events()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            third = max(len(answer) // 3, 1)
            for start in range(0, len(answer), third):
                self._event(_chunk({"content": answer[start:start + third]}, None))
            self._event(_chunk({}, "stop"))
            self._event("[DONE]")
            self._end_events()

    def _stream_forever(self) -> None:
        """One piece of an answer that never ends, until the client hangs up: the write
        that fails is the server seeing the disconnect."""
        self._events()
        try:
            self._event(_chunk({"role": "assistant", "content": '{"pairs": ['}, None))
            while True:
                time.sleep(SLOW_PIECE_SECONDS)
                self._event(_chunk({"content": " "}, None))
        except (BrokenPipeError, ConnectionResetError):
            with self.log.lock:
                self.log.disconnects += 1

    def _reply(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(data)


def _chunk(delta: Mapping[str, object], finish: str | None) -> dict[str, object]:
    return {"id": "chatcmpl-loopback", "object": "chat.completion.chunk", "created": 0,
            "model": "loopback",
            "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish}]}


@contextlib.contextmanager
def serving_model(respond: Responder, dialect: str = "openai"
                  ) -> Iterator[tuple[str, Log]]:
    """The model on an ephemeral loopback port, speaking ``dialect`` (see the module
    docstring): its API base (``.../v1``) and its log."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}")
    log = Log()
    handler = type("ModelHandler", (_Handler,), {"respond": staticmethod(respond),
                                                  "log": log, "dialect": dialect})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", log
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
