"""A language model on loopback for nights run through the CLI: an OpenAI-compatible
chat-completions endpoint on 127.0.0.1 that answers each request from a responder of
the tool the phase forces (the strict schema's name) and the members its prompt
offers, and an embeddings endpoint beside it (``planted_support.serve_embeddings``).
The store reaches both through its ordinary settings (``MEMHTML_LLM=openai``,
``MEMHTML_LLM_URL``), so the run under test is the one a person starts.

Every request is logged (tool, prompt) so a test can see what a phase was offered.
A tool the responder does not know is answered ``{}``, which the phase's strict
decode refuses as malformed: that batch is skipped and counted, never retried.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.integration.llm.loopback import openai_reply

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
    """What the model was asked: (tool, prompt), in order."""

    asked: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def tools(self) -> list[str]:
        with self.lock:
            return [tool for tool, _ in self.asked]

    def prompts(self, tool: str) -> list[str]:
        with self.lock:
            return [prompt for name, prompt in self.asked if name == tool]


class _Handler(BaseHTTPRequestHandler):
    respond: Responder
    log: Log

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if not self.path.endswith("/chat/completions"):
            self._reply(404, b'{"error": "no such route"}')
            return
        body = json.loads(raw)
        tool = str(body["response_format"]["json_schema"]["name"])
        prompt = str(body["messages"][-1]["content"])
        with self.log.lock:
            self.log.asked.append((tool, prompt))
        answer = type(self).respond(tool, members(prompt))
        self._reply(200, json.dumps(openai_reply(json.dumps(answer))).encode())

    def _reply(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(data)


@contextlib.contextmanager
def serving_model(respond: Responder) -> Iterator[tuple[str, Log]]:
    """The model on an ephemeral loopback port: its API base (``.../v1``) and its log."""
    log = Log()
    handler = type("ModelHandler", (_Handler,), {"respond": staticmethod(respond),
                                                  "log": log})
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
